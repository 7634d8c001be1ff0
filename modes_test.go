package cadre

import (
	"strings"
	"testing"

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
	contains(t, res[0], "use SendMessage with to: \"a")
	for _, f := range []string{"subagent_type", "model", "run_in_background", `unknown field "background"`} {
		contains(t, res[1], f)
	}
	if strings.Contains(res[1], "isolation") {
		t.Errorf("the error lists isolation, which this Agent tool does not offer (no git repository): %q", res[1])
	}
}
