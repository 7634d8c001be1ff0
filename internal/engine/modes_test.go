package engine

import (
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/llm/llmtest"
)

// Issue 29 point 7: a sync Agent result tells the main agent how to
// continue the agent (SendMessage with its id); an Agent call with bad
// input lists every field the tool offers, isolation and
// run_in_background among them where offered.
func TestAgentResultAndInputErrorTexts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Script("MAIN", llmtest.ToolUses(
		llmtest.Call{ID: "toolu_1", Name: "Agent", Input: agentCall("", "CHILD-1: do it")},
		llmtest.Call{ID: "toolu_2", Name: "Agent", Input: map[string]any{"description": "d", "prompt": "p", "background": true}},
	), llmtest.Text("ok"))
	h.srv.Script("CHILD-1", llmtest.Text("done it"))
	mustRun(t, h.config(), "MAIN: go")
	res := h.toolResults("MAIN")
	if len(res) != 2 {
		t.Fatalf("results %q", res)
	}
	contains(t, res[0], "done it")
	contains(t, res[0], "by SendMessage to: \"a")
	for _, f := range []string{"subagent_type", "model", "run_in_background", `unknown field "background"`} {
		contains(t, res[1], f)
	}
	if strings.Contains(res[1], "isolation") {
		t.Errorf("the error lists isolation, which this Agent tool does not offer (no git repository): %q", res[1])
	}
}

// Issue 29 point 7: an agent whose tools are only MCP tools spawns once its
// servers are connected — not refused because its list of built-in tools
// is empty while the server still connects (no waitMCP here: the spawn
// comes right at the start). One naming tools no server offers is still
// refused, saying so.
func TestMCPOnlyAgentSpawns(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cfg := h.mcpConfig(testServer(t, "a", nil))
	cfg.Agents = []*agentdef.Definition{defineAgent(t, "mcponly", "tools: mcp__a"), defineAgent(t, "nowhere", "tools: mcp__nope__x")}
	h.srv.Script("MAIN", llmtest.ToolUses(
		llmtest.Call{ID: "toolu_1", Name: "Agent", Input: agentCall("mcponly", "CHILD: go")},
		llmtest.Call{ID: "toolu_2", Name: "Agent", Input: agentCall("nowhere", "NEVER: go")},
	), llmtest.Text("main done"))
	h.srv.Script("CHILD", llmtest.ToolUse("mcp__a__echo", map[string]any{"text": "hi"}), llmtest.Text("child done"))
	rt := newRuntime(t, cfg)
	runMCP(t, rt, "MAIN")
	res := h.toolResults("MAIN")
	contains(t, res[0], "child done")
	contains(t, res[1], "no connected server offers them")
	var mcpTools []string
	for _, n := range h.srv.RequestsFor("CHILD")[0].ToolNames() {
		if strings.HasPrefix(n, "mcp__") {
			mcpTools = append(mcpTools, n)
		}
	}
	if len(mcpTools) == 0 || !slices.Contains(mcpTools, "mcp__a__echo") {
		t.Fatalf("the child's tools %v", h.srv.RequestsFor("CHILD")[0].ToolNames())
	}
}
