package worktree

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// testEnv isolates git from the machine's configuration and gives commits
// an author.
var testEnv = []string{
	"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
	"GIT_AUTHOR_NAME=cadre test", "GIT_AUTHOR_EMAIL=test@cadre.invalid",
	"GIT_COMMITTER_NAME=cadre test", "GIT_COMMITTER_EMAIL=test@cadre.invalid",
}

func TestMain(m *testing.M) {
	if os.Getenv(crashHelperEnv) != "" {
		os.Exit(crashHelper())
	}
	goleak.VerifyTestMain(m)
}

// newManager returns a Manager whose git sees testEnv.
func newManager(t testing.TB) *Manager {
	t.Helper()
	m, err := New(Config{Env: testEnv})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// gitT runs git in dir with testEnv and returns its trimmed stdout.
func gitT(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := gitOut(dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return out
}

func gitOut(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), testEnv...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%w: %s", err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// newRepo makes a repository with one commit holding README.md,
// src/a.txt (three lines) and a .gitignore that ignores *.log.
func newRepo(t testing.TB) string {
	t.Helper()
	dir := canonical(t.TempDir())
	gitT(t, dir, "init", "-q", "-b", "main")
	writeFile(t, filepath.Join(dir, "README.md"), "# test\n")
	writeFile(t, filepath.Join(dir, "src", "a.txt"), "one\ntwo\nthree\n")
	writeFile(t, filepath.Join(dir, ".gitignore"), "*.log\n")
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-q", "-m", "initial")
	return dir
}

func writeFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// branchExists reports whether refs/heads/branch exists in repo.
func branchExists(t testing.TB, repo, branch string) bool {
	t.Helper()
	_, err := gitOut(repo, "rev-parse", "-q", "--verify", "refs/heads/"+branch)
	return err == nil
}

// create makes a tree for id in dir, failing the test on error.
func create(t testing.TB, m *Manager, dir, id string) *Lease {
	t.Helper()
	l, err := m.Create(context.Background(), Request{Dir: dir, AgentID: id, SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// registeredTrees lists git's linked worktrees of repo (not the main one).
func registeredTrees(t testing.TB, repo string) []string {
	t.Helper()
	var paths []string
	for _, g := range parseWorktreeList(gitT(t, repo, "worktree", "list", "--porcelain", "-z") + "\x00") {
		if p := canonical(g.path); p != repo {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	return paths
}

// treeDirs lists the agent-* directories under repo's trees directory.
func treeDirs(t testing.TB, repo string) []string {
	t.Helper()
	des, err := os.ReadDir(filepath.Join(repo, TreesDir))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var paths []string
	for _, de := range des {
		if de.IsDir() {
			paths = append(paths, filepath.Join(repo, TreesDir, de.Name()))
		}
	}
	slices.Sort(paths)
	return paths
}

// assertGone checks that id's tree, branch and record are all gone.
func assertGone(t testing.TB, repo, id string) {
	t.Helper()
	path := filepath.Join(repo, TreesDir, TreeName(id))
	if exists(path) {
		t.Errorf("tree %s still exists", path)
	}
	if exists(recordPath(path)) {
		t.Errorf("record of %s still exists", path)
	}
	if branchExists(t, repo, BranchName(id)) {
		t.Errorf("branch %s still exists", BranchName(id))
	}
}

// assertKept checks that id's tree, branch and record all exist.
func assertKept(t testing.TB, repo, id string) {
	t.Helper()
	path := filepath.Join(repo, TreesDir, TreeName(id))
	if !exists(path) {
		t.Errorf("tree %s was deleted", path)
	}
	if !exists(recordPath(path)) {
		t.Errorf("record of %s was deleted", path)
	}
	if !branchExists(t, repo, BranchName(id)) {
		t.Errorf("branch %s was deleted", BranchName(id))
	}
}
