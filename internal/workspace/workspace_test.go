package workspace

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFindRepo(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sub := filepath.Join(root, "a", "b")
	write(t, filepath.Join(root, ".git", "HEAD"), "ref: refs/heads/feature/x\n")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if r, ok := FindRepo(sub); !ok || r != (Repo{Root: root, Branch: "feature/x"}) {
		t.Fatalf("FindRepo = %+v %v", r, ok)
	}
	// A worktree: .git is a file pointing at the real git dir.
	wt := t.TempDir()
	gitdir := filepath.Join(root, ".git", "worktrees", "w")
	write(t, filepath.Join(gitdir, "HEAD"), "ref: refs/heads/worktree-agent-a1\n")
	write(t, filepath.Join(wt, ".git"), "gitdir: "+gitdir+"\n")
	if r, ok := FindRepo(wt); !ok || r.Branch != "worktree-agent-a1" {
		t.Fatalf("worktree %+v %v", r, ok)
	}
	// A detached HEAD has no branch.
	det := t.TempDir()
	write(t, filepath.Join(det, ".git", "HEAD"), "0123456789abcdef0123456789abcdef01234567\n")
	if r, ok := FindRepo(det); !ok || r.Branch != "" {
		t.Fatalf("detached %+v %v", r, ok)
	}
}

func TestReadInstructions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if got := ReadInstructions(dir); got != (Instructions{}) {
		t.Fatalf("found instructions in an empty dir: %+v", got)
	}
	write(t, filepath.Join(dir, "AGENTS.md"), "agents\n")
	if got := ReadInstructions(dir); got != (Instructions{Name: "AGENTS.md", Text: "agents"}) {
		t.Fatalf("%+v", got)
	}
	// CLAUDE.md comes before AGENTS.md; a long file is cut at a character
	// boundary (é is two bytes and straddles the limit).
	write(t, filepath.Join(dir, "CLAUDE.md"), strings.Repeat("x", MaxInstructionsBytes-1)+"é and more")
	got := ReadInstructions(dir)
	if got.Name != "CLAUDE.md" || !got.Cut || got.Text != strings.Repeat("x", MaxInstructionsBytes-1) {
		t.Fatalf("%s: %d bytes, cut %v", got.Name, len(got.Text), got.Cut)
	}
}

func TestFactCacheReadsOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "CADRE.md"), "first")
	var c FactCache
	if f := c.Get(dir); f.Instructions.Text != "first" || f.InRepo {
		t.Fatalf("%+v", f)
	}
	write(t, filepath.Join(dir, "CADRE.md"), "second")
	if f := c.Get(dir); f.Instructions.Text != "first" {
		t.Fatalf("read again: %+v", f)
	}
}

func TestMemoryDir(t *testing.T) {
	t.Parallel()
	cases := []struct{ scope, name, home, want string }{
		{MemoryUser, "rev", "/h", "/h/.config/cadre/agent-memory/rev"},
		{MemoryUser, "rev", "", ""},
		{MemoryProject, "plugin:rev", "/h", "/p/.cadre/agent-memory/plugin-rev"},
		{MemoryLocal, "a/b", "", "/p/.cadre/agent-memory-local/a-b"},
		{"", "rev", "/h", ""},
		{"team", "rev", "/h", ""},
	}
	for _, c := range cases {
		if got := MemoryDir(c.scope, c.name, c.home, "/p"); got != c.want {
			t.Errorf("MemoryDir(%q, %q, %q) = %q, want %q", c.scope, c.name, c.home, got, c.want)
		}
	}
}

func TestReadMemory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m, err := ReadMemory(dir, 3)
	if err != nil || m.Exists {
		t.Fatalf("missing file: %+v %v", m, err)
	}
	write(t, filepath.Join(dir, MemoryFile), "a\nb\nc\nd\n")
	m, err = ReadMemory(dir, 3)
	if err != nil || !m.Exists || !m.Cut || !cmp.Equal(m.Lines, []string{"a", "b", "c"}) {
		t.Fatalf("%+v %v", m, err)
	}
	m, err = ReadMemory(dir, 4)
	if err != nil || m.Cut || len(m.Lines) != 4 {
		t.Fatalf("exactly the limit: %+v %v", m, err)
	}
	// A directory where the file should be is an error, not a silent
	// "no memory".
	other := t.TempDir()
	if err := os.Mkdir(filepath.Join(other, MemoryFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadMemory(other, 3); err == nil {
		t.Fatal("no error for a directory named MEMORY.md")
	}
}

func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func TestSnapshot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gitRun(t, dir, "init", "-q", "-b", "main")
	write(t, filepath.Join(dir, "a.txt"), "a")
	gitRun(t, dir, "add", ".")
	gitRun(t, dir, "commit", "-q", "-m", "first commit")
	for i := range MaxStatusLines + 5 {
		write(t, filepath.Join(dir, fmt.Sprintf("new%02d.txt", i)), "x")
	}
	s := NewSnapshot(dir)
	if _, ready := s.Get(dir); ready {
		t.Fatal("ready before Take")
	}
	if g, ready := s.Get(filepath.Join(dir, "sub")); !ready || !g.Empty() {
		t.Fatal("another directory must get an empty, ready status")
	}
	s.Take(context.Background())
	g, ready := s.Get(dir)
	if !ready || !strings.HasPrefix(g.Status, "## main") || !strings.Contains(g.Log, "first commit") {
		t.Fatalf("%+v ready %v", g, ready)
	}
	// 45 untracked files and the branch line: 40 kept, 6 counted.
	if n := len(strings.Split(g.Status, "\n")); n != MaxStatusLines || g.MoreLines != 6 {
		t.Fatalf("%d lines, %d more", n, g.MoreLines)
	}
	// Outside a repository, or cancelled before git answers: empty.
	if g := ReadGitStatus(context.Background(), t.TempDir()); !g.Empty() {
		t.Fatalf("outside a repository: %+v", g)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if g := ReadGitStatus(ctx, dir); !g.Empty() {
		t.Fatalf("cancelled: %+v", g)
	}
}
