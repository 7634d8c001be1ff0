package worktree

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// propertySeed fixes the random outcomes; change it to explore others.
const propertySeed = 13

// TestPropertyNoLeakNoLoss runs 200 agents with random outcomes — no
// change, an edit, a commit, an untracked file, an error, a cancellation,
// a panic (the last three with or without work left behind), some through
// a nested descendant that holds its own lease — eight at a time, and
// checks: no unchanged tree is left, no changed tree is lost, and git's
// worktree list matches the directories on disk.
func TestPropertyNoLeakNoLoss(t *testing.T) {
	t.Parallel()
	n := 200
	if testing.Short() {
		n = 40
	}
	repo := newRepo(t)
	m := newManager(t)
	rng := rand.New(rand.NewPCG(propertySeed, propertySeed))
	kinds := []string{"none", "edit", "commit", "untracked", "error", "cancel", "panic"}
	children := make([]propChild, n)
	for i := range children {
		c := propChild{id: fmt.Sprintf("prop%03d", i), kind: kinds[rng.IntN(len(kinds))], nested: rng.IntN(4) == 0, childFirst: rng.IntN(2) == 0}
		switch c.kind {
		case "edit", "commit", "untracked":
			c.changed = true
		case "error", "cancel", "panic":
			c.changed = rng.IntN(2) == 0
		}
		children[i] = c
	}
	t.Logf("seed %d: %d agents", propertySeed, n)

	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i := range children {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			children[i].final, children[i].err = children[i].run(m, repo)
		})
	}
	wg.Wait()

	var kept []string
	for _, c := range children {
		path := filepath.Join(repo, TreesDir, TreeName(c.id))
		if c.err != nil {
			t.Errorf("%s (%s): %v", c.id, c.kind, c.err)
			continue
		}
		switch {
		case c.changed && c.final.State != Kept:
			t.Errorf("%s (%s, changed): outcome %s, want kept", c.id, c.kind, c.final.State)
		case !c.changed && c.final.State != Removed:
			t.Errorf("%s (%s, unchanged): outcome %s (%s), want removed", c.id, c.kind, c.final.State, c.final.Reason)
		}
		if c.changed {
			kept = append(kept, path)
			assertKept(t, repo, c.id)
		} else {
			assertGone(t, repo, c.id)
		}
	}
	slices.Sort(kept)
	if got := treeDirs(t, repo); !slices.Equal(got, kept) {
		t.Errorf("directories on disk: %d, want the %d kept", len(got), len(kept))
	}
	if got := registeredTrees(t, repo); !slices.Equal(got, kept) {
		t.Errorf("git worktree list: %d trees, want the %d kept on disk", len(got), len(kept))
	}
	entries, err := m.List(context.Background(), repo)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.State != StateChanged {
			t.Errorf("List: %s is %s (%s), want changed", e.AgentID, e.State, e.Note)
		}
	}
	if len(entries) != len(kept) {
		t.Errorf("List has %d entries, want %d", len(entries), len(kept))
	}
	if pruned, err := m.Prune(context.Background(), repo, false); err != nil || len(pruned) != 0 {
		t.Errorf("Prune after the run removed %d trees (%v); want none", len(pruned), err)
	}
}

// propChild is one agent of the property test.
type propChild struct {
	id, kind   string
	changed    bool // the agent leaves work behind
	nested     bool // a descendant with its own lease does the work
	childFirst bool // the descendant's lease is released first
	final      Outcome
	err        error
}

// run creates the agent's tree, does its work (or has a descendant do
// it), fails as its kind says, and returns the tree's final outcome.
func (c *propChild) run(m *Manager, repo string) (Outcome, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l, err := m.Create(ctx, Request{Dir: repo, AgentID: c.id})
	if err != nil {
		return Outcome{}, err
	}
	worker := l
	if c.nested {
		if worker, err = l.Acquire(); err != nil {
			return Outcome{}, err
		}
	}
	first, second := worker, l
	if c.nested && !c.childFirst {
		first, second = l, worker
	}
	runErr := c.work(ctx, cancel, l.Info().Path, first)
	if c.nested {
		// The other lease ends normally.
		if o, err := second.Release(ctx); err != nil {
			return o, err
		}
	}
	if runErr != nil && c.kind != "error" && c.kind != "cancel" && c.kind != "panic" {
		return Outcome{}, runErr
	}
	return l.Wait(context.Background())
}

// work does the agent's work in dir and releases lease as a spawn would:
// deferred, while an error returns, a context is cancelled or a panic
// unwinds.
func (c *propChild) work(ctx context.Context, cancel func(), dir string, lease *Lease) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("recovered: %v", p)
		}
	}()
	defer func() { _, _ = lease.Release(ctx) }()
	if c.changed {
		if err := c.change(dir); err != nil {
			return err
		}
	}
	switch c.kind {
	case "error":
		return errors.New("the agent failed")
	case "cancel":
		cancel()
		return ctx.Err()
	case "panic":
		panic("the agent crashed")
	}
	return nil
}

// change leaves work of the agent's kind in dir.
func (c *propChild) change(dir string) error {
	switch c.kind {
	case "commit":
		_, err := gitOut(dir, "commit", "-q", "--allow-empty", "-m", "work of "+c.id)
		return err
	case "untracked", "error", "cancel", "panic":
		return os.WriteFile(filepath.Join(dir, c.id+".txt"), []byte("new\n"), 0o644)
	default: // edit
		return os.WriteFile(filepath.Join(dir, "README.md"), []byte("# edited by "+c.id+"\n"), 0o644)
	}
}
