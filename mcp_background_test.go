package cadre

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/llm/llmtest"
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
	run(t, rt, "MAIN: delegate")
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
