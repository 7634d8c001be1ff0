package worktreecmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/cli/agentscmd"
	"github.com/cadre-dev/cadre/internal/worktree"
)

// abandonEnv, set to a repository, makes the test binary a cadre process
// that starts three agents' worktrees — one left clean, one with an
// uncommitted file, one with a commit — and exits without releasing them,
// as a crashed run would.
const abandonEnv = "CADRE_WORKTREECMD_ABANDON"

func TestMain(m *testing.M) {
	if repo := os.Getenv(abandonEnv); repo != "" {
		if err := abandon(repo); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func abandon(repo string) error {
	m, err := worktree.New(worktree.Config{})
	if err != nil {
		return err
	}
	for _, id := range []string{"clean", "dirty", "done"} {
		l, err := m.Create(context.Background(), worktree.Request{Dir: repo, AgentID: id, SessionID: "sess-1"})
		if err != nil {
			return err
		}
		dir := l.Info().Path
		switch id {
		case "dirty":
			err = os.WriteFile(filepath.Join(dir, "wip.txt"), []byte("wip\n"), 0o644)
		case "done":
			if err = os.WriteFile(filepath.Join(dir, "done.txt"), []byte("done\n"), 0o644); err == nil {
				err = run("git", dir, "add", "done.txt")
			}
			if err == nil {
				err = run("git", dir, "commit", "-q", "-m", "finished the task")
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func run(name, dir string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %v: %w\n%s", name, args, err, out)
	}
	return nil
}

// setup makes a repository with abandoned trees. The tests share git's
// environment through the process, so they do not run in parallel.
func setup(t *testing.T) string {
	t.Helper()
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, k := range []string{"AUTHOR", "COMMITTER"} {
		t.Setenv("GIT_"+k+"_NAME", "cadre test")
		t.Setenv("GIT_"+k+"_EMAIL", "test@cadre.invalid")
	}
	repo, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "initial"}} {
		if err := run("git", repo, args...); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), abandonEnv+"="+repo)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("abandoning process: %v\n%s", err, out)
	}
	return repo
}

// cadre runs `worktrees ARGS…` and returns stdout and the error.
func cadre(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := New()
	var out, errb bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

func TestListPruneMerge(t *testing.T) {
	repo := setup(t)
	out, err := cadre(t, "list", "--cwd", repo)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "PATH") {
		t.Fatalf("table:\n%s", out)
	}
	for i, want := range []string{
		".cadre/worktrees/agent-clean  worktree-agent-clean  clean  sess-1   orphaned",
		".cadre/worktrees/agent-dirty  worktree-agent-dirty  dirty  sess-1   changed   1 file uncommitted",
		".cadre/worktrees/agent-done   worktree-agent-done   done   sess-1   changed   1 commit, 1 file committed",
	} {
		if got := strings.TrimSpace(lines[i+1]); got != want {
			t.Errorf("line %d:\n got %q\nwant %q", i+1, got, want)
		}
	}

	out, err = cadre(t, "list", "--json", "--cwd", repo)
	if err != nil {
		t.Fatal(err)
	}
	var entries []worktree.Entry
	if err := json.Unmarshal([]byte(out), &entries); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if len(entries) != 3 || entries[1].State != worktree.StateChanged || entries[1].Changes.Uncommitted[0].Path != "wip.txt" || entries[0].PID == 0 {
		t.Errorf("--json entries: %+v", entries)
	}

	out, err = cadre(t, "prune", "--dry-run", "--cwd", repo)
	if err != nil || out != "would remove .cadre/worktrees/agent-clean (branch worktree-agent-clean, agent clean)\n" {
		t.Errorf("prune --dry-run = %q, %v", out, err)
	}
	out, err = cadre(t, "prune", "--cwd", repo)
	if err != nil || out != "removed .cadre/worktrees/agent-clean (branch worktree-agent-clean, agent clean)\n" {
		t.Errorf("prune = %q, %v", out, err)
	}
	if out, err = cadre(t, "prune", "--cwd", repo); err != nil || out != "Nothing to prune.\n" {
		t.Errorf("second prune = %q, %v", out, err)
	}
	for _, id := range []string{"dirty", "done"} {
		if _, err := os.Stat(filepath.Join(repo, ".cadre", "worktrees", "agent-"+id)); err != nil {
			t.Errorf("prune touched a tree with work: %v", err)
		}
	}

	out, err = cadre(t, "merge", "done", "--remove", "--cwd", repo)
	if err != nil || !strings.Contains(out, "merged worktree-agent-done (1 commit)") || !strings.Contains(out, "removed the worktree") {
		t.Errorf("merge = %q, %v", out, err)
	}
	if _, err := os.Stat(filepath.Join(repo, "done.txt")); err != nil {
		t.Errorf("merged file missing: %v", err)
	}
	out, err = cadre(t, "merge", "agent-dirty", "--json", "--cwd", repo)
	var res worktree.MergeResult
	if err != nil || json.Unmarshal([]byte(out), &res) != nil || res.Status != worktree.MergeDone || res.Committed == nil {
		t.Errorf("merge --json = %q, %v", out, err)
	}
}

func TestMergeConflictExitsOne(t *testing.T) {
	repo := setup(t)
	// The parent commits its own done.txt: the kept branch conflicts.
	if err := os.WriteFile(filepath.Join(repo, "done.txt"), []byte("parent\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"add", "done.txt"}, {"commit", "-q", "-m", "parent's done"}} {
		if err := run("git", repo, args...); err != nil {
			t.Fatal(err)
		}
	}
	out, err := cadre(t, "merge", "done", "--cwd", repo)
	var ee *agentscmd.ExitError
	if !errors.As(err, &ee) || ee.Code != 1 || !strings.Contains(out, "conflict: done.txt") {
		t.Errorf("conflicting merge = %q, %v; want exit 1 naming done.txt", out, err)
	}
}

func TestErrors(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	plain := t.TempDir()
	_, err := cadre(t, "list", "--cwd", plain)
	var ee *agentscmd.ExitError
	if !errors.As(err, &ee) || ee.Code != 1 || !strings.Contains(err.Error(), "not inside a git working tree") {
		t.Errorf("list outside a repository: %v", err)
	}
	if _, err := cadre(t, "merge", "--cwd", plain, "a", "b"); err == nil {
		t.Error("merge with two arguments accepted")
	}
}
