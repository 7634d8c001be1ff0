package workspace

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// Snapshot is the state of a remote agent's tree after one of its calls,
// small enough to travel in that call's result: the commits the agent
// made since its base, and what it left uncommitted (tracked and
// untracked files, not ignored ones) as one more commit on top. A tree
// restored from it on another worker (Pool.Restore) holds the same
// commits and the same files, so an agent whose worker died goes on from
// its last completed call in a tree that has that call's effects.
type Snapshot struct {
	// Head is the tree's HEAD commit (its base when it made none).
	Head string `json:"head"`
	// State is a commit on Head whose tree is the working tree with
	// everything uncommitted; "" when nothing was uncommitted.
	State string `json:"state,omitempty"`
	// Bundle holds the commits from the base to State (or Head); empty
	// when Head is the base and State is "".
	Bundle []byte `json:"bundle,omitempty"`
}

// snapState is what a Checkout last snapshotted (to tell an unchanged
// tree) — guarded by its mutex.
type snapState struct {
	mu         sync.Mutex
	head, tree string
}

// snapshotRef is the temporary ref a snapshot's bundle carries.
func snapshotRef(agentID string) string { return "refs/cadre/snapshots/" + agentID }

// Snapshot returns the tree's state, or nil when it is what the last
// Snapshot (or Restore) returned. The tree, its index and its branch are
// left as they are: the uncommitted work is read through a scratch copy
// of the index. A bundle over the pool's cap is a *TooLargeError.
func (c *Checkout) Snapshot(ctx context.Context) (*Snapshot, error) {
	c.snap.mu.Lock()
	defer c.snap.mu.Unlock()
	dir, info := c.Dir(), c.lease.Info()
	g := c.pool.git
	head, err := g.out(ctx, dir, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", dir, err)
	}
	tmp, err := os.MkdirTemp("", "cadre-snapshot-")
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", dir, err)
	}
	defer os.RemoveAll(tmp)
	index, err := g.out(ctx, dir, "rev-parse", "--path-format=absolute", "--git-path", "index")
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", dir, err)
	}
	scratch := filepath.Join(tmp, "index")
	// The tree's own index keeps the files' stat data, so add -A hashes
	// only what changed.
	if err := copyFile(index, scratch); err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("snapshot %s: copy the index: %w", dir, err)
	}
	sg := g.with("GIT_INDEX_FILE="+scratch, "GIT_AUTHOR_NAME=cadre", "GIT_AUTHOR_EMAIL=cadre@localhost",
		"GIT_COMMITTER_NAME=cadre", "GIT_COMMITTER_EMAIL=cadre@localhost")
	if _, err := sg.out(ctx, dir, "add", "--all", "--", "."); err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", dir, err)
	}
	tree, err := sg.out(ctx, dir, "write-tree")
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", dir, err)
	}
	if head == c.snap.head && tree == c.snap.tree {
		return nil, nil
	}
	s := &Snapshot{Head: head}
	headTree, err := g.out(ctx, dir, "rev-parse", head+"^{tree}")
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", dir, err)
	}
	tip := head
	if tree != headTree {
		if s.State, err = sg.out(ctx, dir, "commit-tree", tree, "-p", head, "-m", "cadre: the agent's uncommitted work"); err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", dir, err)
		}
		tip = s.State
	}
	if tip != info.BaseCommit {
		ref := snapshotRef(info.AgentID)
		if _, err := g.out(ctx, dir, "update-ref", ref, tip); err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", dir, err)
		}
		file := filepath.Join(tmp, "snapshot.bundle")
		_, err := g.out(ctx, dir, "bundle", "create", "--quiet", file, ref, "^"+info.BaseCommit)
		_, _ = g.out(context.WithoutCancel(ctx), dir, "update-ref", "-d", ref)
		if err != nil {
			return nil, fmt.Errorf("snapshot %s: write the bundle: %w", dir, err)
		}
		st, err := os.Stat(file)
		if err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", dir, err)
		}
		if st.Size() > c.pool.cfg.MaxBundle {
			return nil, &TooLargeError{Size: st.Size(), Max: c.pool.cfg.MaxBundle, Kept: dir, Branch: info.Branch}
		}
		if s.Bundle, err = os.ReadFile(file); err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", dir, err)
		}
	}
	c.snap.head, c.snap.tree = head, tree
	return s, nil
}

// Restore makes agentID's tree afresh at src.Commit, as Checkout does,
// and brings it to snap: its branch at snap.Head, and the uncommitted
// work of snap.State in its files (not staged). It is how an agent whose
// worker died goes on elsewhere.
func (p *Pool) Restore(ctx context.Context, src Source, snap Snapshot, agentID, sessionID string) (*Checkout, error) {
	co, err := p.Checkout(ctx, src, agentID, sessionID)
	if err != nil {
		return nil, err
	}
	if err := co.restore(ctx, snap); err != nil {
		_, _ = co.lease.Release(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("restore the workspace of remote agent %s: %w", agentID, err)
	}
	return co, nil
}

func (c *Checkout) restore(ctx context.Context, snap Snapshot) error {
	c.snap.mu.Lock()
	defer c.snap.mu.Unlock()
	dir, info := c.Dir(), c.lease.Info()
	g := c.pool.git
	// The tree's new commits and its HEAD moved to them, with no other
	// fetch into the clone walking it meanwhile (Pool.fetchLock).
	defer c.pool.fetchLock(c.clone)()
	if len(snap.Bundle) > 0 {
		tmp, err := os.MkdirTemp("", "cadre-restore-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		file := filepath.Join(tmp, "snapshot.bundle")
		if err := os.WriteFile(file, snap.Bundle, 0o600); err != nil {
			return err
		}
		ref := snapshotRef(info.AgentID)
		_, err = g.out(ctx, dir, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", file, "+"+ref+":"+ref)
		defer func() { _, _ = g.out(context.WithoutCancel(ctx), dir, "update-ref", "-d", ref) }()
		if err != nil {
			return fmt.Errorf("fetch the snapshot: %w", err)
		}
	}
	if snap.Head != info.BaseCommit {
		if _, err := g.out(ctx, dir, "reset", "--quiet", "--hard", snap.Head); err != nil {
			return err
		}
	}
	tree := snap.Head
	if snap.State != "" {
		// The state's files in the tree, the index back at HEAD: what was
		// uncommitted is uncommitted again.
		if _, err := g.out(ctx, dir, "read-tree", "-u", "--reset", snap.State); err != nil {
			return err
		}
		if _, err := g.out(ctx, dir, "reset", "--quiet"); err != nil {
			return err
		}
		tree = snap.State
	}
	t, err := g.out(ctx, dir, "rev-parse", tree+"^{tree}")
	if err != nil {
		return err
	}
	c.snap.head, c.snap.tree = snap.Head, t
	return nil
}

// with is g with more environment.
func (g git) with(env ...string) git {
	r := g.r
	r.Env = append(append([]string(nil), r.Env...), env...)
	return git{r}
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
