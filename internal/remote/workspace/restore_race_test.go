package workspace

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
)

// Many agents of a dead worker restored at once into one worker's clone
// (as a killed worker's agents all move together) each get their tree
// back: a restore's fetch walks every worktree's HEAD in the clone, and
// must not stumble on a tree another restore is bringing its commits
// into at the same time.
func TestConcurrentRestoresIntoOneClone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFleet(t)
	src, err := Describe(ctx, f.launcher)
	if err != nil {
		t.Fatal(err)
	}
	root2 := filepath.Join(filepath.Dir(f.workerRoot), "worker2")
	gitT(t, filepath.Dir(f.workerRoot), "clone", "-q", f.upstream, root2)
	pool1 := newPool(t, Config{Roots: []string{f.workerRoot}})
	pool2 := newPool(t, Config{Roots: []string{root2}})
	const n = 16
	snaps := make([]*Snapshot, n)
	for i := range n {
		id := fmt.Sprintf("race%d", i)
		co, err := pool1.Checkout(ctx, src, id, "sess")
		if err != nil {
			t.Fatal(err)
		}
		dir := co.Dir()
		write(t, filepath.Join(dir, "out.txt"), id+"\n")
		gitT(t, dir, "add", "out.txt")
		gitT(t, dir, "-c", "user.name=W", "-c", "user.email=w@example.com", "commit", "-q", "-m", "agent "+id)
		write(t, filepath.Join(dir, "wip.txt"), "uncommitted "+id+"\n")
		if snaps[i], err = co.Snapshot(ctx); err != nil || snaps[i] == nil || len(snaps[i].Bundle) == 0 {
			t.Fatalf("snapshot of %s: %+v, %v", id, snaps[i], err)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	heads := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			co, err := pool2.Restore(ctx, src, *snaps[i], fmt.Sprintf("race%d", i), "sess")
			if err != nil {
				errs[i] = err
				return
			}
			heads[i] = co.Dir()
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("restore %d of %d at once: %v", i, n, errs[i])
		}
		if got := gitT(t, heads[i], "rev-parse", "HEAD"); got != snaps[i].Head {
			t.Fatalf("restored tree %d at %s, want %s", i, got, snaps[i].Head)
		}
	}
}

// Many agents' first checkouts at once into one clone (a fan-out) all
// get their trees: picking the clone reads its root commits, and must
// not stumble on a tree being added beside.
func TestConcurrentCheckoutsIntoOneClone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFleet(t)
	src, err := Describe(ctx, f.launcher)
	if err != nil {
		t.Fatal(err)
	}
	pool := newPool(t, Config{Roots: []string{f.workerRoot}})
	const n = 32
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = pool.Checkout(ctx, src, fmt.Sprintf("fan%d", i), "sess")
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("checkout %d of %d at once: %v", i, n, err)
		}
	}
}
