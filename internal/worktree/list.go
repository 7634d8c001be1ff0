package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/internal/safefs"
)

// State is what List says of a worktree.
type State string

// The states of a listed worktree.
const (
	// StateRunning: the process that owns the tree still runs (or runs on
	// another machine, where cadre cannot check).
	StateRunning State = "running"
	// StateChanged: the owner has ended and the tree holds work; it stays
	// until someone merges or removes it.
	StateChanged State = "changed"
	// StateOrphaned: the owner has ended without removing the tree (a
	// crash), and the tree holds no work; Prune removes it.
	StateOrphaned State = "orphaned"
	// StateUnknown: there is no usable cadre record, or the tree could not
	// be inspected; cadre leaves it alone.
	StateUnknown State = "unknown"
)

// Entry is one worktree under .cadre/worktrees.
type Entry struct {
	Info
	State     State     `json:"state"`
	PID       int       `json:"pid,omitempty"`
	Host      string    `json:"host,omitempty"`
	CreatedAt time.Time `json:"created_at,omitzero"`
	// EndedAt is when the agent ended and the tree was kept.
	EndedAt time.Time `json:"ended_at,omitzero"`
	// Missing: the directory is gone, but git's entry, the branch or the
	// record remain.
	Missing bool     `json:"missing,omitempty"`
	Changes *Changes `json:"changes,omitempty"`
	// Note explains the state in a sentence.
	Note string `json:"note,omitempty"`
}

// gitTree is one entry of `git worktree list --porcelain`.
type gitTree struct {
	path, head, branch string
}

// List describes every worktree under .cadre/worktrees of the repository
// dir belongs to: those with a record, those git knows, and directories
// with neither. It changes nothing.
func (m *Manager) List(ctx context.Context, dir string) ([]Entry, error) {
	r, _, err := m.repoOf(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("list worktrees: %w", err)
	}
	names, registered, err := lister{m}.scan(ctx, r)
	if err != nil {
		return nil, fmt.Errorf("list worktrees: %w", err)
	}
	// Inspecting a tree costs a few git processes; four at a time.
	entries := make([]Entry, len(names))
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i, name := range names {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			entries[i] = lister{m}.entry(ctx, r, name, registered)
		})
	}
	wg.Wait()
	return entries, nil
}

// scan names the trees under r's trees directory: directories, records,
// and git's registered worktrees there. registered maps git's trees by
// path.
func (m lister) scan(ctx context.Context, r *repo) (names []string, registered map[string]gitTree, err error) {
	out, err := m.git.run(ctx, r.root, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, nil, err
	}
	registered = map[string]gitTree{}
	dir := r.treesDir()
	// A linked trees directory is not cadre's: its "records" are whatever
	// the link points at (issue 23).
	if err := safefs.Check(r.root, dir); err != nil {
		return nil, nil, err
	}
	for _, g := range parseWorktreeList(out) {
		p := canonical(g.path)
		if filepath.Dir(p) == dir && strings.HasPrefix(filepath.Base(p), "agent-") {
			registered[p] = g
			names = append(names, filepath.Base(p))
		}
	}
	des, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, err
	}
	for _, de := range des {
		n := de.Name()
		if !strings.HasPrefix(n, "agent-") {
			continue
		}
		if de.IsDir() {
			names = append(names, n)
		} else if base, ok := strings.CutSuffix(n, ".json"); ok {
			names = append(names, base)
		}
	}
	slices.Sort(names)
	return slices.Compact(names), registered, nil
}

// parseWorktreeList reads `git worktree list --porcelain -z`: records of
// "attr value" fields, each record ended by an empty field.
func parseWorktreeList(out string) []gitTree {
	var trees []gitTree
	var cur *gitTree
	for _, f := range strings.Split(out, "\x00") {
		switch {
		case f == "":
			cur = nil
		case strings.HasPrefix(f, "worktree "):
			trees = append(trees, gitTree{path: strings.TrimPrefix(f, "worktree ")})
			cur = &trees[len(trees)-1]
		case cur == nil:
		case strings.HasPrefix(f, "HEAD "):
			cur.head = strings.TrimPrefix(f, "HEAD ")
		case strings.HasPrefix(f, "branch "):
			cur.branch = strings.TrimPrefix(f, "branch refs/heads/")
		}
	}
	return trees
}

// entry describes the tree called name.
func (m lister) entry(ctx context.Context, r *repo, name string, registered map[string]gitTree) Entry {
	path := filepath.Join(r.treesDir(), name)
	e := Entry{Info: Info{Path: path, Root: r.root}}
	g, isRegistered := registered[path]
	_, statErr := os.Stat(path)
	e.Missing = errors.Is(statErr, os.ErrNotExist)
	rec, err := readRecord(path)
	if err != nil {
		e.State, e.Branch = StateUnknown, g.branch
		e.AgentID = strings.TrimPrefix(name, "agent-")
		if errors.Is(err, os.ErrNotExist) {
			e.Note = "no cadre record: not made by cadre, or its record was deleted; left alone"
		} else {
			e.Note = err.Error() + "; left alone"
		}
		return e
	}
	e.Info = Info{Path: path, Branch: rec.Branch, AgentID: rec.AgentID, SessionID: rec.SessionID, Root: r.root,
		Base: rec.Base, BaseRef: rec.BaseRef, BaseCommit: rec.BaseCommit}
	e.PID, e.Host, e.CreatedAt, e.EndedAt = rec.Owner.PID, rec.Owner.Host, rec.CreatedAt, rec.EndedAt
	if rec.EndedAt.IsZero() && rec.Owner.alive(m.self()) {
		e.State = StateRunning
		e.Note = fmt.Sprintf("process %d on %s is running", rec.Owner.PID, rec.Owner.Host)
		return e
	}
	ref := treeRef{path: path, branch: rec.Branch, base: rec.BaseCommit, commonDir: r.commonDir, repo: r}
	var c Changes
	var changed bool
	if e.Missing {
		c, changed, err = m.inspectMissing(ctx, &ref)
	} else {
		c, changed, err = m.inspect(ctx, &ref)
	}
	gone := "its agent has ended"
	if rec.EndedAt.IsZero() {
		gone = fmt.Sprintf("process %d is gone", rec.Owner.PID)
	}
	switch {
	case err != nil:
		e.State, e.Note = StateUnknown, "cannot inspect: "+err.Error()+"; left alone"
	case changed:
		e.State, e.Changes, e.Note = StateChanged, &c, gone+"; the tree holds work and is kept"
	default:
		e.State, e.Note = StateOrphaned, gone+"; the tree holds no work"
	}
	if e.Missing && isRegistered {
		e.Note += " (its directory is gone; git still lists it)"
	}
	return e
}

// inspectMissing judges a tree whose directory is gone: only its branch
// can hold work.
func (m lister) inspectMissing(ctx context.Context, t *treeRef) (Changes, bool, error) {
	var c Changes
	tip, err := m.branchTip(ctx, t.repo.root, t.branch)
	if err != nil {
		return c, true, err
	}
	c.BranchTip = tip
	if tip == "" || tip == t.base {
		return c, false, nil
	}
	c.Head = t.base // no tree, so nothing checked out beyond the base
	if err := m.commitsSince(ctx, &treeRef{path: t.repo.root, branch: t.branch, base: t.base}, &c); err != nil {
		return c, true, err
	}
	return c, true, nil
}

// Prune removes the orphaned trees of the repository dir belongs to —
// unchanged trees whose agents are gone — with their branches, git's
// entries and records. Each tree is looked at again under the repository
// lock just before it is removed, and removal never forces. With dryRun
// it only returns what it would remove. It returns the trees removed (or
// to remove), and the errors of those it could not remove.
func (m *Manager) Prune(ctx context.Context, dir string, dryRun bool) ([]Entry, error) {
	entries, err := m.List(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("prune worktrees: %w", err)
	}
	var pruned []Entry
	var errs []error
	for _, e := range entries {
		if e.State != StateOrphaned {
			continue
		}
		if dryRun {
			pruned = append(pruned, e)
			continue
		}
		removed, err := lister{m}.pruneOne(ctx, dir, e)
		if err != nil {
			errs = append(errs, fmt.Errorf("prune %s: %w", e.Path, err))
		}
		if removed != nil {
			pruned = append(pruned, *removed)
		}
	}
	return pruned, errors.Join(errs...)
}

// pruneOne removes one orphaned tree if, under the lock, it still is one.
func (m lister) pruneOne(ctx context.Context, dir string, e Entry) (*Entry, error) {
	r, _, err := m.repoOf(ctx, dir)
	if err != nil {
		return nil, err
	}
	unlock, err := r.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	_, registered, err := m.scan(ctx, r)
	if err != nil {
		return nil, err
	}
	now := m.entry(ctx, r, filepath.Base(e.Path), registered)
	if now.State != StateOrphaned {
		return nil, nil // it changed meanwhile: no longer ours to remove
	}
	if _, ok := registered[now.Path]; ok {
		// Also for a missing directory: git then drops its entry.
		if _, err := m.git.run(ctx, r.root, "worktree", "remove", now.Path); err != nil {
			return nil, err
		}
	}
	tip, err := m.branchTip(ctx, r.root, now.Branch)
	if err != nil {
		return nil, err
	}
	if tip != "" {
		if _, err := m.git.run(ctx, r.root, "update-ref", "-d", "refs/heads/"+now.Branch, now.BaseCommit); err != nil {
			return nil, err
		}
	}
	if err := removeRecord(now.Path); err != nil {
		return nil, err
	}
	return &now, nil
}
