// Package worktree gives an agent its own git worktree and makes sure
// that clean trees never leak and changed work is never deleted (S-9.1,
// S-15.5).
//
// A Manager creates a worktree at <main tree>/.cadre/worktrees/agent-<id>
// on a new branch worktree-agent-<id>, through the git binary, and hands
// back a Lease. The tree is held while any lease on it is: the agent's own,
// and one per descendant that works in it (Lease.Acquire). When the last
// lease is released the tree is inspected: a tree with no uncommitted
// change (untracked, not ignored files count) whose HEAD and branch are
// still at the base commit is removed with its branch; anything else is
// kept and described (Outcome). Removal happens only after an inspection
// has proved the tree unchanged, never with --force, and the branch is
// deleted only if it still points at the base — so an error, a
// cancellation or a panic can leave a clean tree behind (for Prune) but
// can never delete work.
//
// Every tree has a record beside it (agent-<id>.json) naming the agent,
// session, base commit and owning process, written before the tree and
// removed after it. After a crash, List tells running, changed and
// orphaned trees apart, and Prune removes only orphaned (unchanged,
// abandoned) ones. Merge brings a kept branch back into the parent's tree
// and reports conflicts instead of leaving a half-merged tree.
//
// Creation and removal are serialised per repository (in the process and,
// with flock, across processes), so git's own lock files never fail a
// spawn.
package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/cadre-dev/cadre/internal/safefs"
)

// Base says which commit a new worktree starts from.
type Base string

// The bases a worktree can start from.
const (
	// BaseHead is the parent's current HEAD (the default).
	BaseHead Base = "head"
	// BaseDefault is the default branch as the remote has it now: origin's
	// default branch freshly fetched, or without a remote the local
	// default branch.
	BaseDefault Base = "default"
)

// ParseBase reads a base setting; "" is BaseHead.
func ParseBase(s string) (Base, error) {
	switch Base(s) {
	case "", BaseHead:
		return BaseHead, nil
	case BaseDefault:
		return BaseDefault, nil
	}
	return "", fmt.Errorf("unknown worktree base %q: use %q (the parent's HEAD) or %q (a fresh ref of the default branch)", s, BaseHead, BaseDefault)
}

// Config configures a Manager. The zero value runs `git` from PATH.
type Config struct {
	// Git is the git binary; "" looks up "git" on PATH.
	Git string
	// Env is added to git's environment (after the process's, without the
	// variables that select a repository, such as GIT_DIR).
	Env []string
	// RunHooks runs the repository's post-checkout hook in a new tree, as
	// `git worktree add` would. Set it only for a workspace the user
	// trusts: no other hook of the repository ever runs in cadre's git.
	RunHooks bool
	// Creator and Remover replace git for version control systems other
	// than git (the WorktreeCreate and WorktreeRemove hooks); nil uses git.
	Creator Creator
	Remover Remover
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// CleanupTimeout bounds the inspection of a tree when its last lease
	// is released (which runs even if the caller's context was cancelled,
	// since a cancelled agent's tree must still be kept or removed); a tree
	// not inspected in time is kept. 0 means 2 minutes. Removal itself is
	// never cut short: a killed `git worktree remove` would leave a
	// half-deleted tree that looks like work.
	CleanupTimeout time.Duration
	// FetchTimeout bounds the fetch of the default branch for BaseDefault;
	// 0 means 30 seconds. A failed fetch falls back to the last fetched
	// ref, with a warning.
	FetchTimeout time.Duration
}

// Manager creates, leases, lists, prunes and merges agents' worktrees. It
// is safe for concurrent use; one Manager serves any number of
// repositories.
type Manager struct {
	cfg Config
	git git
	// self describes this process for the records; read on first use
	// (its /proc reads cost start-up time a run without worktrees skips).
	self func() Owner

	mu        sync.Mutex
	repos     map[string]*repo       // by common git directory
	live      map[string]*leasedTree // trees with leases in this process, by path
	resolving singleflight.Group
}

// New returns a Manager. It fails when git is needed (no Creator) and
// cannot be found.
func New(cfg Config) (*Manager, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.CleanupTimeout <= 0 {
		cfg.CleanupTimeout = 2 * time.Minute
	}
	if cfg.FetchTimeout <= 0 {
		cfg.FetchTimeout = 30 * time.Second
	}
	bin := cfg.Git
	if bin == "" {
		bin = "git"
	}
	path, err := exec.LookPath(bin)
	if err != nil && cfg.Creator == nil {
		return nil, fmt.Errorf("worktree isolation needs git: %w", err)
	}
	return &Manager{
		cfg: cfg, git: newGit(path, os.Environ(), cfg.Env), self: selfOwner,
		repos: map[string]*repo{}, live: map[string]*leasedTree{},
	}, nil
}

// Request asks for a worktree for one agent.
type Request struct {
	// Dir is the parent's working directory; the worktree is made in the
	// repository it belongs to.
	Dir string
	// AgentID names the tree (agent-<id>) and its branch
	// (worktree-agent-<id>): letters, digits, '-' and '_'.
	AgentID string
	// SessionID is recorded so that List can name the session.
	SessionID string
	// Base is where the tree starts; "" is BaseHead.
	Base Base
	// Commit, when set, is the exact commit the tree starts from in place
	// of Base (a remote agent's tree starts at its launcher's commit); it
	// must be in the repository already.
	Commit string
}

// Info describes a worktree.
type Info struct {
	Path      string `json:"path"`
	Branch    string `json:"branch,omitempty"`
	AgentID   string `json:"agent_id"`
	SessionID string `json:"session_id,omitempty"`
	// Root is the main working tree of the repository ("" for a tree a
	// Creator made).
	Root string `json:"root,omitempty"`
	Base Base   `json:"base,omitempty"`
	// BaseRef names what the base commit was read from: HEAD, origin/main.
	BaseRef    string `json:"base_ref,omitempty"`
	BaseCommit string `json:"base_commit,omitempty"`
	// Hooked is true for a tree a Creator made: cadre cannot inspect it.
	Hooked bool `json:"hooked,omitempty"`
	// Warnings are problems creation worked around (a failed fetch).
	Warnings []string `json:"warnings,omitempty"`
}

// validAgentID reports whether id is 1 to 64 letters, digits, '-' or '_',
// starting with a letter or digit. (Checked by hand: a regexp with a
// counted repetition costs hundreds of allocations of package init in
// every cadre process.)
func validAgentID(id string) bool {
	if len(id) == 0 || len(id) > 64 || id[0] == '-' || id[0] == '_' {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// TreeName is the directory name of an agent's worktree.
func TreeName(agentID string) string { return "agent-" + agentID }

// BranchName is the branch of an agent's worktree.
func BranchName(agentID string) string { return "worktree-agent-" + agentID }

// Create makes the worktree for req and returns the first lease on it.
// Outside a git working tree it returns an error wrapping ErrNotGitRepo.
// If ctx ends while git works, the half-made tree is removed (no agent has
// seen it) and ctx's error returned.
func (m *Manager) Create(ctx context.Context, req Request) (*Lease, error) {
	if !validAgentID(req.AgentID) {
		return nil, fmt.Errorf("create worktree: agent id %q: use 1 to 64 letters, digits, '-' or '_', starting with a letter or digit", req.AgentID)
	}
	if !filepath.IsAbs(req.Dir) {
		return nil, fmt.Errorf("create worktree: directory %q is not absolute", req.Dir)
	}
	base, err := ParseBase(string(req.Base))
	if err != nil {
		return nil, fmt.Errorf("create worktree: %w", err)
	}
	req.Base = base
	if m.cfg.Creator != nil {
		return m.createHooked(ctx, req)
	}
	r, w, err := m.repoOf(ctx, req.Dir)
	if err != nil {
		return nil, fmt.Errorf("create worktree for agent %s: %w", req.AgentID, err)
	}
	commit, ref, warnings, err := bases{m}.resolveBase(ctx, r, w, req.Base)
	if req.Commit != "" {
		commit, ref, warnings, err = bases{m}.exactBase(ctx, r, req.Commit)
	}
	if err != nil {
		return nil, fmt.Errorf("create worktree for agent %s: %w", req.AgentID, err)
	}
	rec := &record{
		Version: recordVersion, AgentID: req.AgentID, SessionID: req.SessionID,
		Path: filepath.Join(r.treesDir(), TreeName(req.AgentID)), Branch: BranchName(req.AgentID),
		Base: req.Base, BaseRef: ref, BaseCommit: commit, CreatedAt: m.cfg.Now().UTC(), Owner: m.self(),
	}
	more, err := m.add(ctx, r, rec)
	if err != nil {
		return nil, fmt.Errorf("create worktree for agent %s: %w", req.AgentID, err)
	}
	warnings = append(warnings, more...)
	t := &leasedTree{
		m: m, done: make(chan struct{}), holders: 1,
		ref: treeRef{path: rec.Path, branch: rec.Branch, base: commit, commonDir: r.commonDir, repo: r},
		info: Info{Path: rec.Path, Branch: rec.Branch, AgentID: req.AgentID, SessionID: req.SessionID, Root: r.root,
			Base: req.Base, BaseRef: ref, BaseCommit: commit, Warnings: warnings},
	}
	m.mu.Lock()
	m.live[t.ref.path] = t
	m.mu.Unlock()
	return &Lease{t: t}, nil
}

// add makes the tree of rec in two steps. Under the repository lock:
// the record, then `git worktree add --no-checkout`, which only writes
// git's bookkeeping (the part concurrent `git worktree add` calls trip
// over). Outside it: the checkout of the files, which is most of the time
// on a large repository and touches only the new tree, so sixteen
// children check out at once instead of one after the other. This is
// what `git worktree add` does itself (it runs `git reset --hard` in the
// new tree, then the post-checkout hook), split at the point where the
// lock is no longer needed. It returns warnings (a failing post-checkout
// hook).
func (m *Manager) add(ctx context.Context, r *repo, rec *record) ([]string, error) {
	if err := m.register(ctx, r, rec); err != nil {
		return nil, err
	}
	_, err := m.git.run(ctx, rec.Path, "reset", "--hard", "--quiet", "--no-recurse-submodules")
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		m.rollback(context.WithoutCancel(ctx), r, rec)
		return nil, fmt.Errorf("check out %s: %w", rec.Path, err)
	}
	if !m.cfg.RunHooks || !r.hasPostCheckout() {
		return nil, nil
	}
	_, err = m.git.runHook(ctx, rec.Path, "hook", "run", "--ignore-missing", "post-checkout", "--",
		strings.Repeat("0", len(rec.BaseCommit)), rec.BaseCommit, "1")
	if err != nil {
		return []string{"the post-checkout hook failed: " + err.Error()}, nil
	}
	return nil, nil
}

// register writes rec and adds the tree to git without checking out its
// files, under the repository lock.
func (m *Manager) register(ctx context.Context, r *repo, rec *record) error {
	unlock, err := r.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if err := r.ensureExcluded(); err != nil {
		return err
	}
	// git creates the tree inside the trees directory and follows links
	// to get there: every component below the top level must be a real
	// directory (a checked-in .cadre/worktrees -> ~/.claude/agents would
	// otherwise put the repository's files there).
	if err := safefs.MkdirAll(r.root, r.treesDir(), 0o755); err != nil {
		return err
	}
	for _, p := range []string{rec.Path, recordPath(rec.Path)} {
		if _, err := os.Lstat(p); err == nil {
			return fmt.Errorf("%s already exists (an earlier agent with the same id?)", p)
		}
	}
	if err := writeRecord(rec); err != nil {
		return err
	}
	// git runs to the end even if ctx ends meanwhile, so that what it
	// leaves is whole and rollback can undo it.
	_, err = m.git.run(context.WithoutCancel(ctx), r.root, "worktree", "add", "--quiet", "--no-checkout", "-b", rec.Branch, rec.Path, rec.BaseCommit)
	if err != nil {
		m.rollbackLocked(context.WithoutCancel(ctx), r, rec)
	}
	return err
}

// rollback undoes a creation that failed or was cancelled, under the
// repository lock. No agent has worked in the tree, so --force is safe
// here and only here.
func (m *Manager) rollback(ctx context.Context, r *repo, rec *record) {
	unlock, err := r.lock(ctx)
	if err != nil {
		return // left for Prune: nothing in it is work
	}
	defer unlock()
	m.rollbackLocked(ctx, r, rec)
}

func (m *Manager) rollbackLocked(ctx context.Context, r *repo, rec *record) {
	if _, err := os.Lstat(rec.Path); err == nil {
		_, _ = m.git.run(ctx, r.root, "worktree", "remove", "--force", rec.Path)
	}
	_, _ = m.git.run(ctx, r.root, "update-ref", "-d", "refs/heads/"+rec.Branch, rec.BaseCommit)
	_ = removeRecord(rec.Path)
}

// treeRef is what inspection and removal need to know about a tree.
type treeRef struct {
	path, branch, base, commonDir string
	repo                          *repo
}

// leasedTree is one agent's worktree while leases on it are held in this
// process.
type leasedTree struct {
	m       *Manager
	ref     treeRef
	info    Info
	hookReq HookRequest // for a tree a Creator made

	mu      sync.Mutex
	holders int
	done    chan struct{} // closed when the last lease is released
	outcome Outcome
	err     error
}

// Lease is one holder's claim on a worktree: the agent it was made for, or a
// descendant working in the same tree. The tree lives until every lease
// is released.
type Lease struct {
	t        *leasedTree
	released atomic.Bool
}

// Info describes the leased tree.
func (l *Lease) Info() Info { return l.t.info }

// Acquire takes another lease on the same tree, for a descendant that
// works in it without a tree of its own. It fails only if l was already
// released.
func (l *Lease) Acquire() (*Lease, error) {
	t := l.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if l.released.Load() || t.holders == 0 {
		return nil, fmt.Errorf("acquire worktree %s: the lease was already released", t.info.Path)
	}
	t.holders++
	return &Lease{t: t}, nil
}

// OutcomeState is what became of a tree when a lease was released.
type OutcomeState string

// The states of an Outcome.
const (
	// Held: other leases still hold the tree.
	Held OutcomeState = "held"
	// Removed: the tree was unchanged; it and its branch are gone.
	Removed OutcomeState = "removed"
	// Kept: the tree holds work (Changes), or could not be proved not to
	// (Reason); it stays with its branch.
	Kept OutcomeState = "kept"
)

// Outcome is what Release did.
type Outcome struct {
	Info
	State OutcomeState `json:"state"`
	// Holders counts the leases still held when State is Held.
	Holders int `json:"holders,omitempty"`
	// Changes describes the work in a kept tree (nil when the tree could
	// not be inspected).
	Changes *Changes `json:"changes,omitempty"`
	// Reason says why a tree was kept without known changes, or what went
	// wrong removing an unchanged one.
	Reason string `json:"reason,omitempty"`
}

// Release gives up this lease. The last release finishes the tree:
// removed if unchanged, kept otherwise. It runs to the end even when ctx
// is cancelled, because a cancelled agent's tree must still be kept or
// removed (Config.CleanupTimeout bounds the inspection). The error reports a problem
// finishing the tree; the Outcome is valid either way, and a tree is
// never removed after an error.
func (l *Lease) Release(ctx context.Context) (Outcome, error) {
	t := l.t
	t.mu.Lock()
	if !l.released.CompareAndSwap(false, true) {
		t.mu.Unlock()
		return Outcome{Info: t.info, State: Held}, fmt.Errorf("release worktree %s: the lease was already released", t.info.Path)
	}
	t.holders--
	n := t.holders
	t.mu.Unlock()
	if n > 0 {
		return Outcome{Info: t.info, State: Held, Holders: n}, nil
	}
	var o Outcome
	var err error
	defer func() {
		// Also if finish panics: Wait must not block for ever.
		t.mu.Lock()
		t.outcome, t.err = o, err
		t.mu.Unlock()
		close(t.done)
	}()
	o, err = t.finish(ctx)
	return o, err
}

// Wait returns the tree's final Outcome once the last lease is released
// (for a caller whose own release left the tree Held by a descendant).
func (l *Lease) Wait(ctx context.Context) (Outcome, error) {
	select {
	case <-l.t.done:
		l.t.mu.Lock()
		defer l.t.mu.Unlock()
		return l.t.outcome, l.t.err
	case <-ctx.Done():
		return Outcome{}, fmt.Errorf("wait for worktree %s: %w", l.t.info.Path, ctx.Err())
	}
}

// finish inspects the tree after its last lease and removes or keeps it.
func (t *leasedTree) finish(ctx context.Context) (o Outcome, err error) {
	m := t.m
	defer func() {
		m.mu.Lock()
		delete(m.live, t.ref.path)
		m.mu.Unlock()
	}()
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.cfg.CleanupTimeout)
	defer cancel()
	o = Outcome{Info: t.info}
	if t.info.Hooked {
		return m.finishHooked(ictx, t, o)
	}
	c, changed, err := m.inspect(ictx, &t.ref)
	if err != nil || changed {
		return m.keep(t, o, c, err)
	}
	if err := m.removeUnchanged(context.WithoutCancel(ctx), &t.ref, c.BranchTip != ""); err != nil {
		// Removal refused: something changed after all, or git failed.
		// Look again so the outcome describes what stays.
		c, _, ierr := m.inspect(ictx, &t.ref)
		if ierr != nil {
			c = Changes{}
		}
		o, _ := m.keep(t, o, c, ierr)
		o.Reason = err.Error()
		return o, err
	}
	o.State = Removed
	return o, nil
}

// keep marks the record of a kept tree as ended and builds the outcome.
// inspectErr, if any, is why the tree could not be proved unchanged.
func (m *Manager) keep(t *leasedTree, o Outcome, c Changes, inspectErr error) (Outcome, error) {
	o.State = Kept
	if inspectErr != nil {
		o.Reason = "kept because it could not be inspected: " + inspectErr.Error()
	} else {
		o.Changes = &c
	}
	rec, err := readRecord(t.ref.path)
	if err == nil {
		rec.EndedAt = m.cfg.Now().UTC()
		err = writeRecord(rec)
	}
	return o, errors.Join(inspectErr, err)
}

// removeUnchanged removes an unchanged tree, its branch and its record,
// under the repository lock. `git worktree remove` without --force refuses
// a tree with modified or untracked files, and the branch is deleted only
// if it still points at the base: the last guards against a change made
// after the inspection. hasBranch is false when the agent deleted the
// branch itself.
func (m *Manager) removeUnchanged(ctx context.Context, t *treeRef, hasBranch bool) error {
	unlock, err := t.repo.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := m.git.run(ctx, t.repo.root, "worktree", "remove", t.path); err != nil {
		return fmt.Errorf("remove worktree: %w", err)
	}
	if hasBranch {
		if _, err := m.git.run(ctx, t.repo.root, "update-ref", "-d", "refs/heads/"+t.branch, t.base); err != nil {
			return fmt.Errorf("delete branch %s (kept): %w", t.branch, err)
		}
	}
	return removeRecord(t.path)
}
