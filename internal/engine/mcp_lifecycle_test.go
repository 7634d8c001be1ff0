package engine

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/run"
)

// A background child's inline server lives as long as the child, not its
// parent's Agent call: the child uses it after the call has returned, and
// its process is gone once the child has ended.
func TestMCPInlineServerOfABackgroundChild(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	pidfile := filepath.Join(t.TempDir(), "pid")
	raw, err := json.Marshal([]json.RawMessage{inlineServer(t, "own", map[string]string{"CADRE_TEST_MCP_PIDFILE": pidfile})})
	if err != nil {
		t.Fatal(err)
	}
	cfg := h.mcpConfig()
	cfg.Agents = []*agentdef.Definition{defineAgent(t, "helper", "mcpServers: "+string(raw))}
	call := agentCall("helper", "CHILD: use your server")
	call["run_in_background"] = true
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", call), llmtest.Text("started"), llmtest.Text("got it"))
	h.srv.Script("CHILD", llmtest.ToolUse("mcp__own__echo", map[string]any{"text": "later"}), llmtest.Text("child done"))
	rt := newRuntime(t, cfg)
	runMCP(t, rt, "MAIN: delegate")
	drainNotifications(t, rt)
	reqs := h.srv.RequestsFor("CHILD")
	if len(reqs) != 2 || !slices.Contains(reqs[0].ToolNames(), "mcp__own__echo") {
		t.Fatalf("child requests %d", len(reqs))
	}
	contains(t, reqs[1].LastToolResults()[0].ResultText(), "echo: later")
	if pid := readPid(t, pidfile); alive(pid) {
		t.Fatalf("the inline server %d outlived its background child", pid)
	}
}

// A plugin agent's mcpServers are ignored with a warning (S-4.4): even a
// definition built in code with an inline server starts nothing.
func TestMCPPluginAgentStartsNoServer(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	pidfile := filepath.Join(t.TempDir(), "pid")
	raw, err := json.Marshal([]json.RawMessage{inlineServer(t, "own", map[string]string{"CADRE_TEST_MCP_PIDFILE": pidfile})})
	if err != nil {
		t.Fatal(err)
	}
	def := defineAgent(t, "plugged", "mcpServers: "+string(raw))
	def.Source = agentdef.SourcePlugin
	cfg := h.mcpConfig()
	cfg.Agents = []*agentdef.Definition{def}
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("plugged", "CHILD: go")), llmtest.Text("main done"))
	h.srv.Script("CHILD", llmtest.Text("child done"))
	rt := newRuntime(t, cfg)
	evs, _ := runMCP(t, rt, "MAIN")
	for _, n := range h.srv.RequestsFor("CHILD")[0].ToolNames() {
		if strings.HasPrefix(n, "mcp__") {
			t.Fatalf("a plugin agent got %s", n)
		}
	}
	var warned bool
	for _, ev := range evs {
		if ev.Type == run.EventTaskStarted {
			warned = slices.ContainsFunc(ev.Task.Receipt.Warnings, func(w string) bool { return strings.Contains(w, "plugin agent") })
		}
	}
	if !warned {
		t.Fatal("no warning that the plugin agent's mcpServers were ignored")
	}
	if _, err := os.Stat(pidfile); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the plugin agent's server started (%v)", err)
	}
}
