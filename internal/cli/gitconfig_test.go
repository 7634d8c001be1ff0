package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// Issue 23: a repository's own .git/config (core.fsmonitor, a filter
// driver named by its .gitattributes) ran when cadre took its git
// snapshot and made a worktree, before any trust decision. Through the
// built binary, in an untrusted repository: the main agent spawns a child
// in a worktree (creation checks files out, release inspects the tree
// with git status), and nothing the configuration names runs; plain git
// in the same repository does run it (the control).
func TestRepositoryGitConfigRunsNothing(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	marker := filepath.Join(out, "ran")
	evil := filepath.Join(out, "evil.sh")
	if err := os.WriteFile(evil, []byte("#!/bin/sh\necho \"$0 $*\" >> '"+marker+"'\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	home, dir := t.TempDir(), t.TempDir()
	gitEnv := append(os.Environ(), "HOME="+home, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t.invalid")
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, gitEnv
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, b)
		}
	}
	writeFiles(t, dir, map[string]string{"a.txt": "a\n", ".gitattributes": "*.txt filter=x\n"})
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "init")
	git("config", "core.fsmonitor", evil)
	git("config", "filter.x.smudge", evil)
	git("config", "filter.x.process", evil)
	git("config", "core.hooksPath", out)
	if err := os.Symlink(evil, filepath.Join(out, "post-checkout")); err != nil {
		t.Fatal(err)
	}

	s, env := server(t)
	s.Script("MAIN", llmtest.ToolUse("Agent", map[string]any{"description": "look", "prompt": "CHILD: look", "subagent_type": "general-purpose", "isolation": "worktree"}),
		llmtest.Text("done"))
	s.Script("CHILD", llmtest.Text("nothing to change"))
	p := cadreAt(t, home, dir, env, "-p", "MAIN: go", "--output-format", "json")
	if p.code != 0 {
		t.Fatalf("exit %d: %s", p.code, p.stderr)
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("cadre's git ran the repository's program: %s", b)
	}
	if res := s.RequestsFor("MAIN")[1].LastToolResults(); len(res) != 1 || !strings.Contains(res[0].ResultText(), "nothing to change") {
		t.Fatalf("the isolated child did not run: %+v", res)
	}

	cmd := exec.Command("git", "status")
	cmd.Dir, cmd.Env = dir, gitEnv
	_ = cmd.Run()
	if _, err := os.Stat(marker); err != nil {
		t.Fatal("control: plain git status did not run core.fsmonitor; the test tests nothing")
	}
}

// Issue 23: a checked-in link .cadre/worktrees -> ~/.claude/agents made
// worktree isolation write the repository's files into the user's agents
// (one became a user agent with a hook). Through the binary: the isolated
// spawn fails with an error naming the link, and nothing is written
// where it points.
func TestSymlinkedWorktreesDirThroughCLI(t *testing.T) {
	t.Parallel()
	home, dir := t.TempDir(), t.TempDir()
	agents := filepath.Join(home, ".claude", "agents")
	if err := os.MkdirAll(agents, 0o755); err != nil {
		t.Fatal(err)
	}
	gitEnv := append(os.Environ(), "HOME="+home, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t.invalid")
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, gitEnv
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, b)
		}
	}
	writeFiles(t, dir, map[string]string{"evil.md": "---\nname: evil\ndescription: d\n---\nx\n"})
	link := filepath.Join(dir, ".cadre", "worktrees")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(agents, link); err != nil {
		t.Fatal(err)
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "init")

	s, env := server(t)
	s.Script("MAIN", llmtest.ToolUse("Agent", map[string]any{"description": "look", "prompt": "CHILD: look", "subagent_type": "general-purpose", "isolation": "worktree"}),
		llmtest.Text("done"))
	s.Script("CHILD", llmtest.Text("child ran"))
	p := cadreAt(t, home, dir, env, "-p", "MAIN: go")
	if p.code != 0 {
		t.Fatalf("exit %d: %s", p.code, p.stderr)
	}
	res := s.RequestsFor("MAIN")[1].LastToolResults()
	if len(res) != 1 || !strings.Contains(res[0].ResultText(), link) || !strings.Contains(res[0].ResultText(), "symbolic link") {
		t.Errorf("the spawn's result does not name the link: %+v", res)
	}
	if entries, _ := os.ReadDir(agents); len(entries) != 0 {
		t.Errorf("files were written through the link into %s: %v", agents, entries)
	}
	if n := len(s.RequestsFor("CHILD")); n != 0 {
		t.Errorf("the child ran (%d requests) without its worktree", n)
	}
}
