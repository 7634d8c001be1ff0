package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/sandbox"
)

// gitIn runs git in dir outside the sandbox, with no user configuration.
func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), gitEnv...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v: %s", args, err, b)
	}
}

var gitEnv = []string{"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
	"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t.invalid"}

// TestProtectedPathsReadOnly (issue 23): inside the sandbox, what cadre's
// own git and cadre's next run trust — .git/config, .git/hooks/,
// .git/info/, the project's .cadre/, .claude/ and .mcp.json — cannot be
// changed, in the main tree and from a linked worktree (whose git
// directories are writable); a refused write gets the sandbox's note.
// Ordinary work still goes through: files, git add and commit.
func TestProtectedPathsReadOnly(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, sandbox.Config{})
	work, _ := dirs(t)
	files := map[string]string{
		"a.txt": "a\n", ".cadre/settings.json": "{}\n", ".claude/settings.json": "{}\n",
		".claude/agents/x.md": "---\nname: x\n---\n", ".mcp.json": `{"mcpServers": {}}` + "\n",
	}
	for rel, body := range files {
		p := filepath.Join(work, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitIn(t, work, "init", "-q")
	gitIn(t, work, "add", "-A")
	gitIn(t, work, "commit", "-q", "-m", "init")
	tree := filepath.Join(work, "..", "tree")
	gitIn(t, work, "worktree", "add", "-q", tree)
	tree, _ = filepath.EvalSymlinks(tree)
	gitDir := filepath.Join(work, ".git")

	env := strings.Join(gitEnv, " ")
	writes := []struct{ name, cwd, command, path string }{
		{"git config", work, "git config core.fsmonitor /bin/evil", filepath.Join(gitDir, "config")},
		{"append config", work, "echo '[core] fsmonitor = x' >> .git/config", filepath.Join(gitDir, "config")},
		{"new hook", work, "printf '#!/bin/sh\\n' > .git/hooks/post-checkout", filepath.Join(gitDir, "hooks")},
		{"info", work, "echo '* filter=x' > .git/info/attributes", filepath.Join(gitDir, "info")},
		{"cadre settings", work, "echo '{\"hooks\": {}}' > .cadre/settings.json", filepath.Join(work, ".cadre")},
		{"cadre agent", work, "mkdir -p .cadre/agents && echo x > .cadre/agents/evil.md", filepath.Join(work, ".cadre")},
		{"claude agent", work, "echo x > .claude/agents/x.md", filepath.Join(work, ".claude")},
		{"mcp", work, "echo '{}' > .mcp.json", filepath.Join(work, ".mcp.json")},
		{"mcp removed", work, "rm -f .mcp.json", work},
		{"common config from a worktree", tree, "git config core.fsmonitor /bin/evil", filepath.Join(gitDir, "config")},
		{"common hooks from a worktree", tree, "touch " + filepath.Join(gitDir, "hooks", "pre-commit"), filepath.Join(gitDir, "hooks")},
	}
	before := map[string]string{}
	for _, f := range []string{".git/config", ".mcp.json", ".cadre/settings.json", ".claude/agents/x.md"} {
		b, _ := os.ReadFile(filepath.Join(work, f))
		before[f] = string(b)
	}
	for _, w := range writes {
		out, code, notes := run(t, sb, sandbox.Policy{Cwd: w.cwd}, "env "+env+" sh -c \""+strings.ReplaceAll(w.command, `"`, `\"`)+"\"")
		if code == 0 {
			t.Errorf("%s: the write succeeded: %s", w.name, out)
			continue
		}
		if w.path != work && !strings.Contains(notes, "git and cadre trust it later") {
			t.Errorf("%s: notes %q lack the sandbox's message (output %q)", w.name, notes, out)
		}
	}
	for f, was := range before {
		if b, _ := os.ReadFile(filepath.Join(work, f)); string(b) != was {
			t.Errorf("%s changed: %q", f, b)
		}
	}
	for _, f := range []string{".git/hooks/post-checkout", ".cadre/agents/evil.md", ".git/info/attributes"} {
		if _, err := os.Lstat(filepath.Join(work, f)); err == nil {
			t.Errorf("%s was created", f)
		}
	}

	// An agent's worktree inside .cadre/worktrees, given as a further
	// directory, stays writable; its own .cadre does not.
	nested := filepath.Join(work, ".cadre", "worktrees", "agent-x")
	if err := os.MkdirAll(filepath.Join(nested, ".cadre"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, code, _ := run(t, sb, sandbox.Policy{Cwd: work, Dirs: []string{nested}}, "echo ok > .cadre/worktrees/agent-x/f"); code != 0 {
		t.Errorf("write in a worktree below .cadre: exit %d: %s", code, out)
	}
	if out, code, _ := run(t, sb, sandbox.Policy{Cwd: work, Dirs: []string{nested}}, "echo x > .cadre/worktrees/agent-x/.cadre/settings.json"); code == 0 {
		t.Errorf("the nested tree's .cadre was writable: %s", out)
	}

	// Work still goes through, in the main tree and in the worktree.
	for _, dir := range []string{work, tree} {
		out, code, _ := run(t, sb, sandbox.Policy{Cwd: dir}, "echo b > b.txt && env "+env+" git add b.txt && env "+env+" git commit -q -m b && git log --oneline | wc -l")
		if code != 0 || strings.TrimSpace(out) != "2" {
			t.Errorf("commit in %s: exit %d: %s", dir, code, out)
		}
	}
}

// TestCreatedProtectedMovedAside (issue 23): what does not exist yet
// cannot be mounted read-only, so a command could create .mcp.json,
// .cadre/agents/ or .git/info/attributes. Once the command has ended,
// what it created there is moved aside (and not loaded), with a note;
// its other files stay.
func TestCreatedProtectedMovedAside(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, sandbox.Config{})
	work, _ := dirs(t)
	gitIn(t, work, "init", "-q")
	if err := os.RemoveAll(filepath.Join(work, ".git", "info")); err != nil {
		t.Fatal(err)
	}
	b := &sandbox.Bash{Sandbox: sb}
	cmd, explain, err := b.Command(work, nil, `echo '{"mcpServers": {}}' > .mcp.json; mkdir -p .cadre/agents .git/info; echo x > .cadre/agents/a.md; echo '* filter=x' > .git/info/attributes; echo ok > fine.txt`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	notes := explain(string(out))
	for _, p := range []string{".mcp.json", ".cadre/agents", ".git/info/attributes"} {
		path := filepath.Join(work, p)
		if _, err := os.Lstat(path); err == nil {
			t.Errorf("%s is still there", p)
		}
		if _, err := os.Lstat(path + ".sandbox-refused"); err != nil {
			t.Errorf("%s was not moved aside: %v", p, err)
		}
		if !strings.Contains(notes, "the command created "+path) {
			t.Errorf("notes %q do not name %s", notes, p)
		}
	}
	if b, err := os.ReadFile(filepath.Join(work, "fine.txt")); err != nil || string(b) != "ok\n" {
		t.Errorf("fine.txt = %q, %v", b, err)
	}
}
