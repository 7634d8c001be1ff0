package worktree

// Remote isolation (issue 26, S-9.2): a remote agent works in a tree made
// on the machine that runs it (Create with Request.Commit, the launcher's
// commit) and its work travels back as a git bundle. Lease.Pack commits
// what the agent left uncommitted, as Merge does for a local tree, and
// writes the branch's commits since the base to a bundle; ReleasePacked
// then removes the packed tree (its work is in the bundle). On the
// launcher, Land fetches the bundle into the branch worktree-agent-<id>
// and writes the agent's record with no tree beside it, so List shows it
// as changed work and Merge brings it back as it does a kept local tree.
// An unchanged tree lands nothing, as an unchanged local tree is removed.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cadre-dev/cadre/internal/safefs"
)

// Pack is a tree's work made ready to travel: its branch, the commit it
// started from and the branch's tip after Pack committed what was left
// uncommitted. Tip equal to Base means there is no work (no bundle was
// written).
type Pack struct {
	Branch string `json:"branch"`
	Base   string `json:"base"`
	Tip    string `json:"tip"`
	// Committed is the commit Pack made of the uncommitted work, if any;
	// Identity says when cadre's fallback identity made it.
	Committed *Commit `json:"committed,omitempty"`
	Identity  string  `json:"identity,omitempty"`
}

// Changed reports whether the pack holds work.
func (p Pack) Changed() bool { return p.Tip != "" && p.Tip != p.Base }

// Pack commits the uncommitted work of the leased tree on its branch (as
// Merge does for a kept tree) and, when the branch has moved from its
// base, writes its commits since the base to the git bundle file bundle.
// A tree whose HEAD is not on its branch, or that a Creator made, cannot
// be packed. The lease stays held; ReleasePacked gives it up.
func (l *Lease) Pack(ctx context.Context, bundle string) (Pack, error) {
	return remote{l.t.m}.pack(ctx, l.t, bundle)
}

func (m remote) pack(ctx context.Context, t *leasedTree, bundle string) (Pack, error) {
	p := Pack{Branch: t.ref.branch, Base: t.ref.base}
	if t.info.Hooked {
		return p, fmt.Errorf("pack %s: a tree made by a WorktreeCreate hook cannot be bundled", t.info.Path)
	}
	if err := checkGitFile(t.ref.path, t.ref.commonDir); err != nil {
		return p, fmt.Errorf("pack: %w", err)
	}
	g, identity, err := merger(m).committer(ctx, t.ref.path)
	if err != nil {
		return p, fmt.Errorf("pack %s: %w", t.ref.path, err)
	}
	var res MergeResult
	if err := merger(m).settleTree(ctx, g, mergeSrc{branch: t.ref.branch, path: t.ref.path, agent: t.info.AgentID}, false, &res); err != nil {
		return p, fmt.Errorf("pack %s: commit the uncommitted work: %w", t.ref.path, err)
	}
	if res.Committed != nil {
		p.Committed, p.Identity = res.Committed, identity
	}
	if p.Tip, err = m.branchTip(ctx, t.ref.path, t.ref.branch); err != nil {
		return p, fmt.Errorf("pack %s: %w", t.ref.path, err)
	}
	if p.Tip == "" {
		return p, fmt.Errorf("pack %s: the branch %s was deleted", t.ref.path, t.ref.branch)
	}
	if !p.Changed() {
		return p, nil
	}
	if _, err := m.git.run(ctx, t.ref.path, "merge-base", "--is-ancestor", p.Base, p.Tip); err != nil {
		return p, fmt.Errorf("pack %s: the branch %s no longer descends from its base %s (history rewritten?): %w", t.ref.path, p.Branch, p.Base, err)
	}
	if _, err := m.git.run(ctx, t.ref.path, "bundle", "create", "--quiet", bundle, "refs/heads/"+p.Branch, "^"+p.Base); err != nil {
		return p, fmt.Errorf("pack %s: write the bundle: %w", t.ref.path, err)
	}
	return p, nil
}

// ReleasePacked gives up the lease after Pack: the last release removes
// the tree and its branch when they are still exactly what was packed (a
// clean tree on p.Tip), since its work travels in the bundle; anything
// else is kept by the usual rules.
func (l *Lease) ReleasePacked(ctx context.Context, p Pack) (Outcome, error) {
	o, err := l.Release(ctx)
	if err != nil || o.State != Kept || o.Changes == nil {
		return o, err
	}
	c := o.Changes
	if c.Dirty() || c.Head != p.Tip || c.BranchTip != p.Tip {
		return o, nil
	}
	ref := l.t.ref
	ref.base = p.Tip
	if err := l.t.m.removeUnchanged(context.WithoutCancel(ctx), &ref, true); err != nil {
		o.Reason = "packed, but not removed: " + err.Error()
		return o, err
	}
	o.State = Removed
	return o, nil
}

// LandRequest asks to land a remote agent's bundle in the launcher's
// repository.
type LandRequest struct {
	// Dir is a directory in the launcher's repository.
	Dir string
	// AgentID names the branch (worktree-agent-<id>) and the record.
	AgentID   string
	SessionID string
	// Pack is what the remote side packed; Bundle the file holding its
	// bundle (unused when the pack holds no work).
	Pack   Pack
	Bundle string
}

// Land brings a remote agent's work into the launcher's repository: the
// branch worktree-agent-<id> at the packed tip, fetched from the bundle,
// and a record for it (no tree: the work was done elsewhere), so that
// List shows it as changed work and Merge brings it back. A pack without
// work lands nothing and is Removed, as an unchanged local tree is. The
// base must be in the repository and the branch must not exist yet.
func (m *Manager) Land(ctx context.Context, req LandRequest) (Outcome, error) {
	return remote{m}.land(ctx, req)
}

func (m remote) land(ctx context.Context, req LandRequest) (Outcome, error) {
	o := Outcome{Info: Info{AgentID: req.AgentID, SessionID: req.SessionID, Base: BaseHead, BaseRef: req.Pack.Base, BaseCommit: req.Pack.Base}}
	fail := func(err error) (Outcome, error) {
		return o, fmt.Errorf("land the work of remote agent %s: %w", req.AgentID, err)
	}
	if !validAgentID(req.AgentID) {
		return fail(fmt.Errorf("agent id %q: use 1 to 64 letters, digits, '-' or '_', starting with a letter or digit", req.AgentID))
	}
	if !filepath.IsAbs(req.Dir) {
		return fail(fmt.Errorf("directory %q is not absolute", req.Dir))
	}
	if !IsObjectID(req.Pack.Base) || (req.Pack.Tip != "" && !IsObjectID(req.Pack.Tip)) {
		return fail(fmt.Errorf("the pack's base %q and tip %q are not full commit ids", req.Pack.Base, req.Pack.Tip))
	}
	r, _, err := m.repoOf(ctx, req.Dir)
	if err != nil {
		return fail(err)
	}
	o.Root = r.root
	if base, err := m.commitOf(ctx, r.root, req.Pack.Base); err != nil || base == "" {
		return fail(errors.Join(fmt.Errorf("its base commit %s is not in the repository at %s", req.Pack.Base, r.root), err))
	}
	if !req.Pack.Changed() {
		if rec, ok := m.continued(ctx, r, req); ok {
			// A continued agent that added nothing: its earlier run's
			// branch stays as it was (remotecont.go).
			return m.landOnto(ctx, r, rec, req, o)
		}
		o.State = Removed
		return o, nil
	}
	branch := BranchName(req.AgentID)
	path := filepath.Join(r.treesDir(), TreeName(req.AgentID))
	o.Path, o.Branch = path, branch
	unlock, err := r.lock(ctx)
	if err != nil {
		return fail(err)
	}
	defer unlock()
	if err := r.ensureExcluded(); err != nil {
		return fail(err)
	}
	if err := safefs.MkdirAll(r.root, r.treesDir(), 0o755); err != nil {
		return fail(err)
	}
	if rec, ok := m.continued(ctx, r, req); ok {
		// A continued agent's work on top of its earlier run's
		// (remotecont.go).
		return m.landOnto(ctx, r, rec, req, o)
	}
	for _, p := range []string{path, recordPath(path)} {
		if _, err := os.Lstat(p); err == nil {
			return fail(fmt.Errorf("%s already exists (an earlier agent with the same id?)", p))
		}
	}
	if tip, err := m.branchTip(ctx, r.root, branch); err != nil || tip != "" {
		return fail(errors.Join(fmt.Errorf("the branch %s already exists", branch), err))
	}
	bundle, err := filepath.Abs(req.Bundle)
	if err != nil {
		return fail(err)
	}
	if _, err := m.git.run(ctx, r.root, "bundle", "verify", "--quiet", bundle); err != nil {
		return fail(fmt.Errorf("the bundle does not apply here: %w", err))
	}
	// Into a temporary ref first: the branch appears only once it is
	// checked to be the packed tip on top of the base.
	tmp := "refs/cadre/landing/" + req.AgentID
	if _, err := m.git.run(ctx, r.root, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules",
		bundle, "+refs/heads/"+branch+":"+tmp); err != nil {
		return fail(fmt.Errorf("fetch the bundle: %w", err))
	}
	defer func() { _, _ = m.git.run(context.WithoutCancel(ctx), r.root, "update-ref", "-d", tmp) }()
	got, err := m.commitOf(ctx, r.root, tmp)
	if err != nil {
		return fail(err)
	}
	if got != req.Pack.Tip {
		return fail(fmt.Errorf("the bundle's %s is at %s, the pack says %s", branch, got, req.Pack.Tip))
	}
	if _, err := m.git.run(ctx, r.root, "merge-base", "--is-ancestor", req.Pack.Base, got); err != nil {
		return fail(fmt.Errorf("the bundle's %s does not descend from the base %s: %w", branch, req.Pack.Base, err))
	}
	now := m.cfg.Now().UTC()
	rec := &record{
		Version: recordVersion, AgentID: req.AgentID, SessionID: req.SessionID, Path: path, Branch: branch,
		Base: BaseHead, BaseRef: req.Pack.Base, BaseCommit: req.Pack.Base, CreatedAt: now, EndedAt: now, Owner: m.self(),
	}
	if err := writeRecord(rec); err != nil {
		return fail(err)
	}
	// The zero old value: the branch must still not exist.
	if _, err := m.git.run(ctx, r.root, "update-ref", "refs/heads/"+branch, got, strings.Repeat("0", len(got))); err != nil {
		_ = removeRecord(path)
		return fail(fmt.Errorf("create the branch %s: %w", branch, err))
	}
	ref := treeRef{path: path, branch: branch, base: req.Pack.Base, commonDir: r.commonDir, repo: r}
	c, _, err := lister(m).inspectMissing(ctx, &ref)
	o.State = Kept
	if err != nil {
		o.Reason = "landed, but its commits could not be listed: " + err.Error()
		return o, nil
	}
	o.Changes = &c
	return o, nil
}
