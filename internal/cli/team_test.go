package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// TestTeamHeadlessStreamJSON: with CADRE_AGENT_TEAMS=1 a headless
// stream-json run starts two teammates; their task_started lines say
// in_process_teammate with their names; they go idle, the lead answers
// their idle notices in one turn, and the process exits once the lead is
// done and the teammates are idle; the result counts the teammates.
func TestTeamHeadlessStreamJSON(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	env["CADRE_AGENT_TEAMS"] = "1"
	s.ScriptFunc("LEAD", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.ToolUses(
				llmtest.Call{Name: "Agent", Input: map[string]any{"description": "one", "prompt": "MATE-one go", "subagent_type": "general-purpose", "name": "one"}},
				llmtest.Call{Name: "Agent", Input: map[string]any{"description": "two", "prompt": "MATE-two go", "subagent_type": "general-purpose", "name": "two"}})
		}
		return llmtest.Text("lead done")
	})
	s.ScriptFunc("MATE-", func(r *llmtest.Request) llmtest.Turn { return llmtest.Text("mate idle") })
	p := runCadre(t, env, "", "-p", "LEAD start a team", "--output-format", "stream-json", "--verbose")
	if p.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", p.code, p.stdout, p.stderr)
	}
	var teammates []string
	var result map[string]any
	for _, line := range strings.Split(strings.TrimSpace(p.stdout), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if m["subtype"] == "task_started" {
			if m["task_type"] != "in_process_teammate" {
				t.Errorf("task_started %v", m)
			}
			c, _ := m["cadre"].(map[string]any)
			tm, _ := c["teammate"].(map[string]any)
			name, _ := tm["name"].(string)
			teammates = append(teammates, name)
		}
		if m["type"] == "result" {
			result = m
		}
	}
	if len(teammates) != 2 {
		t.Errorf("teammates started: %v", teammates)
	}
	if result == nil {
		t.Fatal("no result line")
	}
	c, _ := result["cadre"].(map[string]any)
	subs, _ := c["subagents"].(map[string]any)
	if subs["teammates"] != float64(2) {
		t.Errorf("result subagents %v", subs)
	}
	// The idle notices of both came in one lead request.
	var withNotices int
	for _, r := range s.RequestsFor("LEAD") {
		if strings.Contains(r.LastUserText(), "idle_notification") {
			withNotices++
			if strings.Count(r.LastUserText(), "idle_notification") != 2 {
				t.Errorf("a lead request holds %d idle notices: %s", strings.Count(r.LastUserText(), "idle_notification"), r.LastUserText())
			}
		}
	}
	if withNotices > 1 {
		t.Errorf("%d lead requests carried idle notices, want at most 1", withNotices)
	}
}
