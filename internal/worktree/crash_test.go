package worktree

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// crashHelperEnv, set to a repository path, turns the test binary into a
// process that creates worktrees there, reports "ready" on stdout and
// waits to be killed.
const crashHelperEnv = "CADRE_WORKTREE_CRASH_HELPER"

// crashHelper is the body of that process: three agents' trees, one left
// clean, one dirty, one with a commit.
func crashHelper() int {
	repo := os.Getenv(crashHelperEnv)
	m, err := New(Config{Env: testEnv})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx := context.Background()
	for _, id := range []string{"kclean", "kdirty", "kcommit"} {
		l, err := m.Create(ctx, Request{Dir: repo, AgentID: id, SessionID: "crashed-session"})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		dir := l.Info().Path
		switch id {
		case "kdirty":
			err = os.WriteFile(filepath.Join(dir, "wip.txt"), []byte("unsaved\n"), 0o644)
		case "kcommit":
			_, err = gitOut(dir, "commit", "-q", "--allow-empty", "-m", "done before the crash")
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin) // until killed
	return 0
}

// TestCrashLeavesTreesForListAndPrune kills a process holding worktrees
// with SIGKILL: its trees stay, List tells the orphaned from the changed,
// and Prune removes only the orphaned one.
func TestCrashLeavesTreesForListAndPrune(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	m := newManager(t)
	// A tree this process holds: running, whatever Prune does.
	mine := create(t, m, repo, "live")
	defer func() {
		if o, err := mine.Release(context.Background()); err != nil || o.State != Removed {
			t.Errorf("release of the live tree = %+v, %v", o, err)
		}
	}()

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashHelperEnv+"="+repo)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if line != "ready\n" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("helper said %q; stderr: %s", line, stderr.String())
	}
	states := func() map[string]State {
		t.Helper()
		entries, err := m.List(context.Background(), repo)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]State{}
		for _, e := range entries {
			got[e.AgentID] = e.State
			if e.AgentID != "live" && (e.SessionID != "crashed-session" || e.PID != cmd.Process.Pid) {
				t.Errorf("entry %+v: want session crashed-session, pid %d", e, cmd.Process.Pid)
			}
		}
		return got
	}
	want := map[string]State{"live": StateRunning, "kclean": StateRunning, "kdirty": StateRunning, "kcommit": StateRunning}
	if got := states(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("while the helper runs: %v, want %v", got, want)
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	want = map[string]State{"live": StateRunning, "kclean": StateOrphaned, "kdirty": StateChanged, "kcommit": StateChanged}
	if got := states(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after kill -9: %v, want %v", got, want)
	}
	for _, id := range []string{"kclean", "kdirty", "kcommit", "live"} {
		assertKept(t, repo, id)
	}

	dry, err := m.Prune(context.Background(), repo, true)
	if err != nil || len(dry) != 1 || dry[0].AgentID != "kclean" {
		t.Fatalf("dry run = %+v, %v; want kclean only", dry, err)
	}
	assertKept(t, repo, "kclean")

	pruned, err := m.Prune(context.Background(), repo, false)
	if err != nil || len(pruned) != 1 || pruned[0].AgentID != "kclean" {
		t.Fatalf("prune = %+v, %v; want kclean only", pruned, err)
	}
	assertGone(t, repo, "kclean")
	for _, id := range []string{"kdirty", "kcommit", "live"} {
		assertKept(t, repo, id)
	}
	if b, err := os.ReadFile(filepath.Join(repo, TreesDir, "agent-kdirty", "wip.txt")); err != nil || string(b) != "unsaved\n" {
		t.Errorf("the crashed agent's work: %q %v", b, err)
	}
	// A second prune, as a later run would do, finds nothing more.
	if pruned, err := m.Prune(context.Background(), repo, false); err != nil || len(pruned) != 0 {
		t.Errorf("second prune = %+v, %v", pruned, err)
	}
	want = map[string]State{"live": StateRunning, "kdirty": StateChanged, "kcommit": StateChanged}
	if got := states(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after prune: %v, want %v", got, want)
	}
}

// TestListEdgeCases: a tree without a record is left alone; a tree whose
// directory was deleted is orphaned when its branch holds nothing and
// changed when it does.
func TestListEdgeCases(t *testing.T) {
	t.Parallel()
	repo := newRepo(t)
	m := newManager(t)
	ctx := context.Background()
	// Made by hand, as another tool would.
	foreign := filepath.Join(repo, TreesDir, "agent-foreign")
	gitT(t, repo, "worktree", "add", "-q", "-b", "foreign", foreign)
	// Records that say a dead process owns them.
	dead := Owner{Host: m.self().Host, BootID: m.self().BootID, PID: deadPID(t), Start: 1}
	for _, id := range []string{"gone-clean", "gone-commit"} {
		l := create(t, m, repo, id)
		if id == "gone-commit" {
			gitT(t, l.Info().Path, "commit", "-q", "--allow-empty", "-m", "kept on the branch")
		}
		rec, err := readRecord(l.Info().Path)
		if err != nil {
			t.Fatal(err)
		}
		// Forget the lease as a crash would, then lose the directory.
		m.mu.Lock()
		delete(m.live, rec.Path)
		m.mu.Unlock()
		rec.Owner = dead
		if err := writeRecord(rec); err != nil {
			t.Fatal(err)
		}
		if err := os.RemoveAll(rec.Path); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := m.List(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range entries {
		got[e.AgentID] = fmt.Sprintf("%s missing=%v", e.State, e.Missing)
	}
	want := map[string]string{"foreign": "unknown missing=false", "gone-clean": "orphaned missing=true", "gone-commit": "changed missing=true"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("List = %v, want %v", got, want)
	}
	pruned, err := m.Prune(ctx, repo, false)
	if err != nil || len(pruned) != 1 || pruned[0].AgentID != "gone-clean" {
		t.Fatalf("prune = %+v, %v", pruned, err)
	}
	assertGone(t, repo, "gone-clean")
	if !branchExists(t, repo, BranchName("gone-commit")) || !exists(foreign) {
		t.Error("prune removed work")
	}
	for _, p := range registeredTrees(t, repo) {
		if filepath.Base(p) == "agent-gone-clean" {
			t.Error("git still lists the pruned tree")
		}
	}
}

// deadPID returns the pid of a process that has ended.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}
