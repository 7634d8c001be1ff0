package engine

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/permission"

	"github.com/cadre-dev/cadre/internal/sandbox/sandboxtest"
)

// The Runtime's Bash sandbox (issue 9, sandbox.go), with real bubblewrap.

func needBwrap(t *testing.T) {
	t.Helper()
	if err := exec.Command("bwrap", "--ro-bind", "/", "/", "--unshare-pid", "--", "true").Run(); err != nil {
		t.Skipf("bubblewrap cannot run here: %v", err)
	}
}

// outsideDir is a directory no agent works in, off /tmp (which each
// sandboxed command sees private).
func outsideDir(t *testing.T) string {
	return sandboxtest.OutsideDir(t, ".sandbox-rt-")
}

// A worktree-isolated child's sandbox has the child's worktree as its
// working directory: its commands start there and may write and commit
// there, and cannot write the parent's tree. The init event says the
// sandbox is on.
func TestSandboxWorktreeChildWorksInItsTree(t *testing.T) {
	t.Parallel()
	needBwrap(t)
	h, cfg := wtHarness(t)
	// The repository lives off /tmp: each sandboxed command has a private
	// /tmp, where a write to the parent's tree would vanish rather than
	// fail.
	h.dir = outsideDir(t)
	runGit(t, h.dir, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(h.dir, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runGit(t, h.dir, "add", "a.txt")
	runGit(t, h.dir, "commit", "-q", "-m", "first")
	cfg.Cwd = h.dir
	cfg.Permissions = &Permissions{Mode: permission.ModeBypassPermissions} // no git rule: the sandbox confines git
	cfg.Sandbox = &SandboxConfig{}
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", isolated("CHILD: commit")), llmtest.Text("done"))
	h.srv.Script("CHILD",
		llmtest.ToolUse("Bash", map[string]any{"command": "pwd; echo x > b.txt && git add b.txt && git -c user.name=t -c user.email=t@t commit -qm b && echo committed; echo p > " + filepath.Join(h.dir, "p.txt")}),
		llmtest.Text("ok"))
	evs, _, _ := mustRun(t, cfg, "MAIN: go")
	if in := evs[0].Init; in == nil || in.Sandbox == nil || !in.Sandbox.Enabled || !in.Sandbox.Network || in.Sandbox.BackgroundOnly {
		t.Errorf("init sandbox %+v", evs[0].Init.Sandbox)
	}
	tree := treeOf(t, h.srv.RequestsFor("CHILD")[0])
	out := h.toolResults("CHILD")[0]
	if first, _, _ := strings.Cut(out, "\n"); first != tree {
		t.Errorf("the child's command started in %q, not its worktree %s:\n%s", first, tree, out)
	}
	contains(t, out, "committed")
	contains(t, out, "Read-only file system")
	contains(t, out, "Sandbox: the write to "+filepath.Join(h.dir, "p.txt")+" was refused")
	if _, err := os.Stat(filepath.Join(h.dir, "p.txt")); err == nil {
		t.Error("the child wrote its parent's tree")
	}
	contains(t, h.toolResults("MAIN")[0], "commits (1):")
}

// With BackgroundOnly, a background sub-agent's Bash is confined and the
// main agent's is not.
func TestSandboxBackgroundOnly(t *testing.T) {
	t.Parallel()
	needBwrap(t)
	h := newHarness(t)
	cfg := h.config()
	cfg.Sandbox = &SandboxConfig{BackgroundOnly: true}
	outside := outsideDir(t)
	h.srv.Script("MAIN",
		llmtest.ToolUse("Bash", map[string]any{"command": "touch " + filepath.Join(outside, "main") + " && echo main-wrote"}),
		llmtest.ToolUse("Agent", bgCall("BGSB: write")), llmtest.Text("started"), llmtest.Text("noted"))
	h.srv.Script("BGSB", llmtest.ToolUse("Bash", map[string]any{"command": "touch " + filepath.Join(outside, "child")}), llmtest.Text("finished"))
	rt := newRuntime(t, cfg)
	evs, _, err := runAll(t, context.Background(), rt, "MAIN: go")
	if err != nil {
		t.Fatal(err)
	}
	drainNotifications(t, rt)
	if st := evs[0].Init.Sandbox; st == nil || !st.Enabled || !st.BackgroundOnly {
		t.Errorf("init sandbox %+v", st)
	}
	if _, err := os.Stat(filepath.Join(outside, "main")); err != nil {
		t.Errorf("the main agent's command was confined: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "child")); err == nil {
		t.Error("the background child's command was not confined")
	}
	contains(t, h.toolResults("BGSB")[0], "Sandbox: the write to "+filepath.Join(outside, "child")+" was refused")
}

// FailIfUnavailable makes New fail when bubblewrap cannot run; without
// it, New succeeds and reports why commands run unconfined.
func TestSandboxUnavailableRuntime(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cfg := h.config()
	cfg.Sandbox = &SandboxConfig{BwrapPath: filepath.Join(t.TempDir(), "no-bwrap"), FailIfUnavailable: true}
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "not installed") {
		t.Errorf("required: err = %v", err)
	}
	cfg.Sandbox.FailIfUnavailable = false
	rt := newRuntime(t, cfg)
	if st := rt.SandboxStatus(); st == nil || st.Enabled || !strings.Contains(st.Unavailable, "run without it") {
		t.Errorf("status %+v", st)
	}
	cfg.Sandbox = &SandboxConfig{Writable: []string{"relative/cache"}}
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "relative/cache") {
		t.Errorf("relative writable path: err = %v", err)
	}
	cfg.Sandbox = nil
	if st := newRuntime(t, cfg).SandboxStatus(); st != nil {
		t.Errorf("no sandbox asked for: status %+v", st)
	}
}
