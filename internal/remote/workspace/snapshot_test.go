package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A tree's snapshot after the agent committed once, changed a tracked
// file, deleted another and left a new file untracked restores into a
// fresh tree in another clone (another worker) with the same branch
// head, the same files and the same uncommitted changes; the snapshot
// leaves the first tree's index and branch as they were; an unchanged
// tree gives no new snapshot; and the restored tree finishes into a
// result that lands like any other.
func TestSnapshotRestoresTheTreeInAnotherClone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFleet(t)
	src, err := Describe(ctx, f.launcher)
	if err != nil {
		t.Fatal(err)
	}
	// A second worker: its own clone, made from the upstream.
	root2 := filepath.Join(filepath.Dir(f.workerRoot), "worker2")
	gitT(t, filepath.Dir(f.workerRoot), "clone", "-q", f.upstream, root2)
	pool1 := newPool(t, Config{Roots: []string{f.workerRoot}})
	pool2 := newPool(t, Config{Roots: []string{root2}})
	co, err := pool1.Checkout(ctx, src, "snap1", "sess")
	if err != nil {
		t.Fatal(err)
	}
	first, err := co.Snapshot(ctx)
	if err != nil || first == nil || first.Head != src.Commit || first.State != "" || len(first.Bundle) != 0 {
		t.Fatalf("the fresh tree's snapshot %+v, %v: want its base and nothing else", first, err)
	}
	if again, err := co.Snapshot(ctx); err != nil || again != nil {
		t.Fatalf("an unchanged tree gave snapshot %+v, %v", again, err)
	}
	dir := co.Dir()
	write(t, filepath.Join(dir, "feature.txt"), "feature\n")
	gitT(t, dir, "add", "feature.txt")
	gitT(t, dir, "commit", "-q", "-m", "agent: add feature")
	write(t, filepath.Join(dir, "README.md"), "# changed, not committed\n")
	gitT(t, dir, "rm", "-q", "src/lib.go")
	write(t, filepath.Join(dir, "notes", "todo.md"), "untracked\n")
	write(t, filepath.Join(dir, "staged.txt"), "staged\n")
	gitT(t, dir, "add", "staged.txt")
	status := gitT(t, dir, "status", "--porcelain")
	head := gitT(t, dir, "rev-parse", "HEAD")
	snap, err := co.Snapshot(ctx)
	if err != nil || snap == nil {
		t.Fatalf("snapshot: %+v, %v", snap, err)
	}
	if snap.Head != head || snap.State == "" || len(snap.Bundle) == 0 {
		t.Fatalf("snapshot %+v: want head %s, a state and a bundle", snap, head)
	}
	if got := gitT(t, dir, "status", "--porcelain"); got != status {
		t.Fatalf("the snapshot changed the tree's status:\n%s\nwas:\n%s", got, status)
	}
	if out := gitT(t, dir, "for-each-ref", "refs/cadre/"); out != "" {
		t.Fatalf("the snapshot left refs behind: %s", out)
	}
	// It travels as JSON.
	raw, _ := json.Marshal(snap)
	var back Snapshot
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	co2, err := pool2.Restore(ctx, src, back, "snap1", "sess")
	if err != nil {
		t.Fatal(err)
	}
	dir2 := co2.Dir()
	if got := gitT(t, dir2, "rev-parse", "HEAD"); got != head {
		t.Fatalf("restored HEAD %s, want %s", got, head)
	}
	if got := gitT(t, dir2, "rev-parse", "--abbrev-ref", "HEAD"); got != "worktree-agent-snap1" {
		t.Fatalf("restored tree on %q, not its branch", got)
	}
	for name, want := range map[string]string{"feature.txt": "feature\n", "README.md": "# changed, not committed\n", "notes/todo.md": "untracked\n", "staged.txt": "staged\n"} {
		got, err := os.ReadFile(filepath.Join(dir2, name))
		if err != nil || string(got) != want {
			t.Fatalf("restored %s = %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir2, "src", "lib.go")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the deleted file is back in the restored tree: %v", err)
	}
	// Nothing staged after a restore: what was uncommitted is uncommitted.
	// (The first line's leading blank is trimmed.)
	want := "M README.md\n D src/lib.go\n?? notes/\n?? staged.txt"
	if got := gitT(t, dir2, "status", "--porcelain"); got != want {
		t.Fatalf("restored status:\n%s\nwant:\n%s", got, want)
	}
	if again, err := co2.Snapshot(ctx); err != nil || again != nil {
		t.Fatalf("the restored, unchanged tree gave snapshot %+v, %v", again, err)
	}
	res, err := co2.Finish(ctx)
	if err != nil || !res.Changed() {
		t.Fatalf("finish the restored tree: %+v, %v", res.Pack, err)
	}
	o, err := Land(ctx, manager(t), f.launcher, "snap1", "sess", res, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := gitT(t, f.launcher, "show", o.Branch+":notes/todo.md"); got != "untracked" {
		t.Fatalf("landed notes/todo.md %q", got)
	}
	if _, err := co.Finish(ctx); err != nil {
		t.Fatal(err)
	}
}
