package prompts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestGitInfo(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".git", "HEAD"), []byte("ref: refs/heads/feature/x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r, b, ok := GitInfo(sub); !ok || r != root || b != "feature/x" {
		t.Fatalf("GitInfo = %q %q %v", r, b, ok)
	}
	// A worktree: .git is a file pointing at the real git dir.
	wt := t.TempDir()
	gitdir := filepath.Join(root, ".git", "worktrees", "w")
	if err := os.MkdirAll(gitdir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(gitdir, "HEAD"), []byte("ref: refs/heads/worktree-agent-a1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+gitdir+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, b, ok := GitInfo(wt); !ok || b != "worktree-agent-a1" {
		t.Fatalf("worktree branch %q %v", b, ok)
	}
	if _, _, ok := GitInfo(t.TempDir()); ok && !strings.HasPrefix(os.TempDir(), root) {
		// A temp dir outside any repository has no git info (unless the
		// machine's temp dir itself sits in a repository).
		if _, err := os.Stat(filepath.Join(os.TempDir(), ".git")); err != nil {
			t.Fatal("git info found outside a repository")
		}
	}
}

func TestProjectInstructions(t *testing.T) {
	dir := t.TempDir()
	if n, text := ProjectInstructions(dir); n != "" || text != "" {
		t.Fatal("found instructions in an empty dir")
	}
	if err := os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte("agents\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "CLAUDE.md"), []byte(strings.Repeat("x", 70<<10)), 0o644); err != nil {
		t.Fatal(err)
	}
	n, text := ProjectInstructions(dir)
	if n != "CLAUDE.md" || !strings.HasSuffix(text, "(cut: the file is longer than 64 KiB)") {
		t.Fatalf("%s: %d bytes", n, len(text))
	}
}

func TestEnvironmentRender(t *testing.T) {
	e := Environment{Cwd: "/w", Dirs: []string{"/x"}, ModelID: "m1", Date: time.Date(2026, 12, 2, 23, 0, 0, 0, time.UTC), GitRepo: true, GitBranch: "main"}
	got := e.Render()
	for _, want := range []string{"Working directory: /w\n", "Additional working directory: /x\n", "Current branch: main\n", "Today's date: 2026-12-02\n", "Model: m1\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("render lacks %q:\n%s", want, got)
		}
	}
	if e.Render() != got {
		t.Fatal("render is not deterministic")
	}
	if !strings.Contains(AgentTool("- X: does x (Tools: All tools)\n", "general-purpose"), "- X: does x (Tools: All tools)\n\nPick") {
		t.Fatal("listing not placed")
	}
	if strings.Contains(AgentTool("", ""), "Without it") {
		t.Fatal("default type named when there is none")
	}
}
