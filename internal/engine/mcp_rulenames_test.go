package engine

import (
	"slices"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/permission"
)

// Issue 9, Build 4: mcp__ rule names are checked once the servers are
// known. A deny rule that misnames a tool of a connected server
// (mcp__a__echoo) protects nothing while mcp__a__echo would run, so the
// server's tools are withheld, from the main agent and from a sub-agent,
// with a did-you-mean; servers the rules name correctly (b, and x__y
// whose name holds the separator) are untouched.
// The control runs the same calls with the right name.
func TestMisnamedMCPDenyRuleWithholdsTheServer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		deny     string
		withheld bool
	}{{deny: "mcp__a__echoo", withheld: true}, {deny: "mcp__a__echo"}} {
		t.Run(tc.deny, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			cfg := h.mcpConfig(testServer(t, "a", map[string]string{"CADRE_TEST_MCP_TOOLS": "echo,ping"}), testServer(t, "b", nil), testServer(t, "x__y", nil))
			rules, err := permission.ParseRules(permission.Deny, "test", h.dir, []string{tc.deny, "mcp__b__crash", "mcp__x__y__crash"})
			if err != nil {
				t.Fatal(err)
			}
			cfg.Permissions = &Permissions{Mode: permission.ModeBypassPermissions, Rules: rules}
			calls := llmtest.ToolUses(
				llmtest.Call{Name: "mcp__a__echo", Input: map[string]any{"text": "1"}},
				llmtest.Call{Name: "mcp__a__ping", Input: map[string]any{"text": "2"}},
				llmtest.Call{Name: "mcp__b__echo", Input: map[string]any{"text": "3"}},
			)
			h.srv.Script("MAIN", calls, llmtest.ToolUse("Agent", agentCall("general-purpose", "CHILD")), llmtest.Text("done"))
			h.srv.Script("CHILD", calls, llmtest.Text("child done"))
			rt := newRuntime(t, cfg)
			waitMCP(t, rt)
			runMCP(t, rt, "MAIN")
			for _, key := range []string{"MAIN", "CHILD"} {
				reqs := h.srv.RequestsFor(key)
				names := reqs[0].ToolNames()
				var out []string
				for _, r := range reqs[1].LastToolResults() {
					out = append(out, r.ResultText())
				}
				if len(out) < 3 {
					t.Fatalf("%s: results %q", key, out)
				}
				if !slices.Contains(names, "mcp__b__echo") || slices.Contains(names, "mcp__b__crash") {
					t.Errorf("%s: server b offered %v", key, names)
				}
				// A server whose name holds "__" is told apart by name, not
				// by splitting the rule.
				if !slices.Contains(names, "mcp__x__y__echo") || slices.Contains(names, "mcp__x__y__crash") {
					t.Errorf("%s: server x__y offered %v", key, names)
				}
				contains(t, out[2], "echo: 3")
				if !tc.withheld {
					if !slices.Contains(names, "mcp__a__ping") || slices.Contains(names, "mcp__a__echo") {
						t.Errorf("%s: control offered %v", key, names)
					}
					contains(t, out[0], "denied by rule")
					contains(t, out[1], "ping: 2")
					continue
				}
				if slices.Contains(names, "mcp__a__ping") || slices.Contains(names, "mcp__a__echo") {
					t.Errorf("%s: the misnamed server's tools were offered: %v", key, names)
				}
				for _, r := range out[:2] {
					contains(t, r, `deny rule mcp__a__echoo from test: MCP server "a" has no tool "echoo" (did you mean mcp__a__echo?)`)
					contains(t, r, "withheld")
				}
			}
		})
	}
}
