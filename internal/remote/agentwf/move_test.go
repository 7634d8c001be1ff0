package agentwf_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/cadre-dev/cadre/internal/remote/agentwf"
	"github.com/cadre-dev/cadre/internal/remote/workspace"
)

func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=W", "-c", "user.email=w@example.com"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// A killed worker's agents all move at once: the checkout of each move
// (CheckoutActivity with the tree's last snapshot) runs on one live
// worker at the same time as the others, in that worker's one clone, and
// every one of them gets its tree back with its commits. (Before, some
// failed on "fatal: bad object worktrees/agent-…/HEAD": a restore's git
// fetch walked a tree another move was adding, and the agent ended with
// its worker taken for lost.)
func TestMovesAtOnceIntoOneWorkerAllRestore(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	seed, upstream := filepath.Join(base, "seed"), filepath.Join(base, "upstream.git")
	launcher, dead, live := filepath.Join(base, "launcher"), filepath.Join(base, "dead"), filepath.Join(base, "live")
	gitRun(t, base, "init", "-q", "-b", "main", seed)
	if err := os.WriteFile(filepath.Join(seed, "README.md"), []byte("# project\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(t, seed, "add", "-A")
	gitRun(t, seed, "commit", "-q", "-m", "initial")
	gitRun(t, base, "clone", "-q", "--bare", seed, upstream)
	for _, d := range []string{launcher, dead, live} {
		gitRun(t, base, "clone", "-q", upstream, d)
	}
	src, err := workspace.Describe(ctx, launcher)
	if err != nil {
		t.Fatal(err)
	}
	deadPool, err := workspace.NewPool(workspace.Config{Roots: []string{dead}})
	if err != nil {
		t.Fatal(err)
	}
	livePool, err := workspace.NewPool(workspace.Config{Roots: []string{live}})
	if err != nil {
		t.Fatal(err)
	}
	// The trees on the worker that dies, each with a commit of its agent
	// and uncommitted work, snapshotted as a tool call does.
	const n = 16
	snaps := make([]*workspace.Snapshot, n)
	for i := range n {
		id := fmt.Sprintf("mv%d", i)
		co, err := deadPool.Checkout(ctx, src, id, "sess")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(co.Dir(), "out.txt"), []byte(id+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		gitRun(t, co.Dir(), "add", "out.txt")
		gitRun(t, co.Dir(), "commit", "-q", "-m", "agent "+id)
		if err := os.WriteFile(filepath.Join(co.Dir(), "wip.txt"), []byte(id+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if snaps[i], err = co.Snapshot(ctx); err != nil || snaps[i] == nil {
			t.Fatalf("snapshot %s: %+v, %v", id, snaps[i], err)
		}
	}
	acts := &agentwf.Activities{Pool: livePool, WorkerID: "live", OwnQueue: "q/live"}
	var s testsuite.WorkflowTestSuite
	var wg sync.WaitGroup
	errs := make([]error, n)
	places := make([]agentwf.Placement, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := s.NewTestActivityEnvironment()
			e.RegisterActivityWithOptions(acts.Checkout, activity.RegisterOptions{Name: agentwf.CheckoutActivity})
			v, err := e.ExecuteActivity(agentwf.CheckoutActivity, agentwf.Checkout{AgentID: fmt.Sprintf("mv%d", i), SessionID: "sess", Source: src, Snapshot: snaps[i]})
			if err == nil {
				err = v.Get(&places[i])
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("the move of agent %d of %d at once: %v", i, n, errs[i])
		}
		dir := places[i].Dir
		if got := gitRun(t, dir, "log", "-1", "--format=%s"); got != fmt.Sprintf("agent mv%d", i) {
			t.Fatalf("agent %d's tree restored at commit %q", i, got)
		}
		if raw, err := os.ReadFile(filepath.Join(dir, "wip.txt")); err != nil || string(raw) != fmt.Sprintf("mv%d\n", i) {
			t.Fatalf("agent %d's uncommitted file: %q, %v", i, raw, err)
		}
	}
}
