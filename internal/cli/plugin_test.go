package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// TestPluginAgentAndHookThroughCLI runs the built cadre with --plugin-dir
// on the agent-teams fixture plugin (wshobson's agent files unchanged): the
// model spawns agent-teams:team-reviewer with the Agent tool, the child
// gets that file's prompt, and the plugin's PreToolUse hook
// (hooks/hooks.json, its script found through ${CLAUDE_PLUGIN_ROOT})
// refuses the child's `rm -rf` while letting its `echo` run. The same
// plugin copied into an untrusted repository still gives its agent, but
// its hook does not run, and cadre says so.
func TestPluginAgentAndHookThroughCLI(t *testing.T) {
	t.Parallel()
	fixture, err := filepath.Abs(filepath.Join("..", "plugin", "testdata", "agent-teams"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		inside  bool
		hookRan bool
	}{
		{name: "trusted", hookRan: true},
		{name: "inside untrusted repo", inside: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			home, dir := t.TempDir(), t.TempDir()
			plugin := fixture
			if c.inside {
				writeFiles(t, dir, map[string]string{".git/HEAD": "ref: refs/heads/main\n", "plugins/.keep": ""})
				plugin = filepath.Join(dir, "plugins", "agent-teams")
				if out, err := exec.Command("cp", "-R", fixture, plugin).CombinedOutput(); err != nil {
					t.Fatalf("cp: %v: %s", err, out)
				}
			}
			s, env := server(t)
			s.Script("MAIN", llmtest.ToolUse("Agent", map[string]string{"description": "review", "prompt": "CHILD: review the change", "subagent_type": "agent-teams:team-reviewer"}),
				llmtest.Text("done"))
			s.Script("CHILD", llmtest.ToolUses(
				llmtest.Call{ID: "toolu_a", Name: "Bash", Input: map[string]string{"command": "echo safe-ran"}},
				llmtest.Call{ID: "toolu_b", Name: "Bash", Input: map[string]string{"command": "rm -rf ./scratch-does-not-exist"}},
			), llmtest.Text("review done"))
			p := cadreAt(t, home, dir, env, "-p", "MAIN: go", "--dangerously-skip-permissions", "--plugin-dir", plugin)
			if p.code != 0 {
				t.Fatalf("exit %d: %s", p.code, p.stderr)
			}
			child := s.RequestsFor("CHILD")
			if len(child) < 2 {
				t.Fatalf("the plugin agent did not run: %d requests; stderr %s", len(child), p.stderr)
			}
			if !strings.Contains(child[0].System, "specialized code reviewer focused on one assigned review dimension") {
				t.Errorf("the child's system prompt is not the plugin agent's:\n%s", child[0].System)
			}
			res := child[1].LastToolResults()
			if len(res) != 2 || !strings.Contains(res[0].ResultText(), "safe-ran") {
				t.Fatalf("tool results %+v", res)
			}
			blocked := strings.Contains(res[1].ResultText(), "agent-teams guard: rm -rf is not allowed")
			if blocked != c.hookRan {
				t.Errorf("hook blocked %v, want %v: %q", blocked, c.hookRan, res[1].ResultText())
			}
			said := strings.Contains(p.stderr, "hooks ignored") && strings.Contains(p.stderr, filepath.Join("agent-teams", "hooks", "hooks.json"))
			if said == c.hookRan {
				t.Errorf("ignored hooks reported %v: %s", said, p.stderr)
			}
			if main := s.RequestsFor("MAIN"); len(main) < 2 || !strings.Contains(main[1].LastToolResults()[0].ResultText(), "review done") {
				t.Errorf("main agent did not get the child's result")
			}
		})
	}
}

// TestAgentsListPluginDir runs `cadre agents --plugin-dir DIR` (twice, both
// fixture plugins): the table lists every plugin agent as plugin:agent
// with the plugin source, and says why the claude-ecosystem plugin's
// commands are not loaded.
func TestAgentsListPluginDir(t *testing.T) {
	t.Parallel()
	fx := func(p string) string { a, _ := filepath.Abs(filepath.Join("..", "plugin", "testdata", p)); return a }
	p := cadreAt(t, t.TempDir(), t.TempDir(), nil, "agents", "--plugin-dir", fx("agent-teams"), "--plugin-dir", fx("claude-ecosystem"))
	if p.code != 0 {
		t.Fatalf("exit %d: %s", p.code, p.stderr)
	}
	for _, name := range []string{"agent-teams:team-reviewer", "agent-teams:team-debugger", "claude-ecosystem:hook-auditor", "claude-ecosystem:agent-auditor"} {
		line := ""
		for _, l := range strings.Split(p.stdout, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), name+" ") {
				line = l
			}
		}
		if !strings.Contains(line, "plugin") {
			t.Errorf("no plugin row for %s in:\n%s", name, p.stdout)
		}
	}
	if !strings.Contains(p.stderr, "plugin commands are not supported") {
		t.Errorf("stderr: %s", p.stderr)
	}
}

// TestPluginMCPServerThroughCLI loads a plugin (outside the workspace)
// whose manifest names its MCP configuration: the server starts with
// CLAUDE_PLUGIN_ROOT in its environment, and the model's call to its tool
// runs; with --plugin-dir-no-mcp the plugin's server is not started.
func TestPluginMCPServerThroughCLI(t *testing.T) {
	t.Parallel()
	everything := everythingBin(t)
	plugin := t.TempDir()
	// The server runs through sh so the test sees CLAUDE_PLUGIN_ROOT: it
	// leaves a marker in the plugin's directory first.
	writeFiles(t, plugin, map[string]string{
		".claude-plugin/plugin.json": `{"name": "echo-tools", "version": "0.1.0", "description": "An echo server", "mcpServers": "./servers.json"}`,
		"servers.json":               `{"mcpServers": {"plugecho": {"command": "sh", "args": ["-c", "touch \"$CLAUDE_PLUGIN_ROOT/started\"; exec ` + everything + `"]}}}`,
	})
	for _, flag := range []string{"--plugin-dir", "--plugin-dir-no-mcp"} {
		s, env := server(t)
		want := flag == "--plugin-dir"
		s.Script("", llmtest.ToolUse("mcp__plugecho__echo", map[string]any{"message": "from the plugin"}), llmtest.Text("done"))
		p := cadreAt(t, t.TempDir(), t.TempDir(), env, "-p", "go", "--dangerously-skip-permissions", flag, plugin)
		if p.code != 0 {
			t.Fatalf("%s: exit %d: %s", flag, p.code, p.stderr)
		}
		reqs := s.Requests()
		res := reqs[len(reqs)-1].LastToolResults()
		ran := len(res) == 1 && strings.Contains(res[0].ResultText(), "from the plugin")
		_, err := os.Stat(filepath.Join(plugin, "started"))
		if ran != want || (err == nil) != want {
			t.Errorf("%s: tool ran %v (%+v), server started %v; want %v", flag, ran, res, err == nil, want)
		}
		_ = os.Remove(filepath.Join(plugin, "started"))
	}
}

// TestMCPListPluginDir runs `cadre mcp list --plugin-dir DIR`: the
// claude-ecosystem fixture's server is listed from the plugin's file
// (it fails to start: the fixture ships no server binary).
func TestMCPListPluginDir(t *testing.T) {
	t.Parallel()
	fixture, _ := filepath.Abs(filepath.Join("..", "plugin", "testdata", "claude-ecosystem"))
	p := cadreAt(t, t.TempDir(), t.TempDir(), nil, "mcp", "list", "--plugin-dir", fixture)
	if !strings.Contains(p.stdout, "audit-notes") || !strings.Contains(p.stdout, filepath.Join(fixture, "mcp.json")) {
		t.Errorf("exit %d stdout %s stderr %s", p.code, p.stdout, p.stderr)
	}
}
