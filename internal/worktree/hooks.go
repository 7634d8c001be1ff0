package worktree

import (
	"context"
	"fmt"
	"path/filepath"
)

// Creator makes the directory an isolated agent works in, in place of
// `git worktree add`. The WorktreeCreate hook implements it so that
// isolation works with other version control systems. It returns the
// directory's absolute path.
type Creator interface {
	CreateWorktree(ctx context.Context, req HookRequest) (path string, err error)
}

// Remover disposes of a directory a Creator made, in place of cadre's
// inspection and removal, when its last lease is released. cadre cannot
// tell whether such a directory holds work, so the Remover (the
// WorktreeRemove hook, which knows its version control system) decides
// and is responsible for keeping work. Without a Remover, such
// directories are kept.
type Remover interface {
	RemoveWorktree(ctx context.Context, req HookRequest) error
}

// HookRequest is what a Creator or Remover is told.
type HookRequest struct {
	// Name is the tree's name, agent-<id>.
	Name      string
	AgentID   string
	SessionID string
	// Dir is the parent's working directory.
	Dir string
	// Path is the directory the Creator returned (Remover only).
	Path string
}

// createHooked asks the Creator for the tree. Such trees have no record
// and no branch cadre knows of; List and Prune do not see them.
func (m *Manager) createHooked(ctx context.Context, req Request) (*Lease, error) {
	hr := HookRequest{Name: TreeName(req.AgentID), AgentID: req.AgentID, SessionID: req.SessionID, Dir: req.Dir}
	path, err := m.cfg.Creator.CreateWorktree(ctx, hr)
	if err != nil {
		return nil, fmt.Errorf("create worktree for agent %s: %w", req.AgentID, err)
	}
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("create worktree for agent %s: the worktree hook returned %q, not an absolute path", req.AgentID, path)
	}
	t := &leasedTree{
		m: m, done: make(chan struct{}), holders: 1,
		ref:  treeRef{path: filepath.Clean(path)},
		info: Info{Path: filepath.Clean(path), AgentID: req.AgentID, SessionID: req.SessionID, Hooked: true},
	}
	t.hookReq = hr
	t.hookReq.Path = t.ref.path
	m.mu.Lock()
	m.live[t.ref.path] = t
	m.mu.Unlock()
	return &Lease{t: t}, nil
}

// finishHooked hands a Creator's tree to the Remover, or keeps it.
func (m *Manager) finishHooked(ctx context.Context, t *leasedTree, o Outcome) (Outcome, error) {
	if m.cfg.Remover == nil {
		o.State, o.Reason = Kept, "made by a worktree hook and no remove hook is set; cadre cannot tell whether it holds work"
		return o, nil
	}
	if err := m.cfg.Remover.RemoveWorktree(ctx, t.hookReq); err != nil {
		o.State, o.Reason = Kept, "the remove hook failed: "+err.Error()
		return o, fmt.Errorf("remove worktree %s: %w", t.ref.path, err)
	}
	o.State = Removed
	return o, nil
}
