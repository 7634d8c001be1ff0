package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// TestClaudeAgentSDKTeammatePrompt (issue 25): with agent teams on, a
// teammate's Bash call that asks reaches the real Agent SDK's canUseTool
// with the teammate's agent id as agentID (the field Claude Code fills for
// a prompt from a sub-agent) and its tool_use id; the allow runs the
// command, and its result reaches the teammate's next request.
func TestClaudeAgentSDKTeammatePrompt(t *testing.T) {
	t.Parallel()
	s := sdkServer(t)
	s.ScriptFunc("SDK-LEAD", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.ToolUse("Agent", map[string]any{"description": "a mate", "prompt": "SDK-MATE: make the file",
				"subagent_type": "general-purpose", "name": "wes"})
		}
		return llmtest.Text("lead done")
	})
	s.ScriptFunc("SDK-MATE", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.ToolUse("Bash", map[string]string{"command": "touch mate-made.txt && echo MATE-RAN", "description": "make a file"})
		}
		return llmtest.Text("wes idle")
	})
	lines, work := runSDKScenario(t, s, "teammate")
	var asked []sdkLine
	var started map[string]any
	for _, l := range lines {
		if l.Callback == "canUseTool" {
			asked = append(asked, l)
		}
		if l.Message != nil && l.Message["subtype"] == "task_started" {
			started = l.Message
		}
	}
	if started == nil || started["task_type"] != "in_process_teammate" {
		t.Fatalf("task_started %v", started)
	}
	if len(asked) != 1 || asked[0].ToolName != "Bash" || !strings.Contains(string(asked[0].Input), "mate-made.txt") {
		t.Fatalf("canUseTool calls %+v", asked)
	}
	// The agent id the SDK handed canUseTool is the teammate's: the one
	// its task_started carries and the lead's teammate_spawned result names.
	id := asked[0].AgentID
	if id == "" || id != started["task_id"] {
		t.Fatalf("canUseTool agentID %q, the teammate's task %v", id, started["task_id"])
	}
	var spawned string
	for _, r := range s.RequestsFor("SDK-LEAD") {
		if res := r.LastToolResults(); len(res) == 1 && spawned == "" {
			spawned = res[0].ResultText()
		}
	}
	var sp map[string]any
	if err := json.Unmarshal([]byte(spawned), &sp); err != nil || sp["status"] != "teammate_spawned" || sp["agent_id"] != id {
		t.Fatalf("the lead's Agent result %q (%v), want teammate_spawned with agent_id %s", spawned, err, id)
	}
	mate := s.RequestsFor("SDK-MATE")
	if len(mate) < 2 {
		t.Fatalf("%d teammate requests", len(mate))
	}
	res := mate[1].LastToolResults()
	if len(res) != 1 || res[0].IsError || !strings.Contains(res[0].ResultText(), "MATE-RAN") {
		t.Fatalf("the teammate's next request carries %+v", res)
	}
	if asked[0].UseID == "" || res[0].ToolUseID != asked[0].UseID {
		t.Fatalf("canUseTool toolUseID %q, the teammate's tool result answers %q", asked[0].UseID, res[0].ToolUseID)
	}
	if _, err := os.Stat(filepath.Join(work, "mate-made.txt")); err != nil {
		t.Fatalf("the allowed command did not run: %v", err)
	}
	// While canUseTool had the prompt the teammate's task read "waiting
	// for approval" (stream-json task_progress), and working once answered.
	var states []string
	for _, l := range lines {
		if l.Message == nil || l.Message["subtype"] != "task_progress" || l.Message["task_id"] != id {
			continue
		}
		c, _ := l.Message["cadre"].(map[string]any)
		tm, _ := c["teammate"].(map[string]any)
		if st, ok := tm["state"].(string); ok {
			states = append(states, st)
		}
	}
	if got := strings.Join(states, " > "); !strings.Contains(got, "waiting for approval > working") {
		t.Fatalf("the teammate's task_progress states: %s", got)
	}
	// cadre's own system/teammate_message (the teammate's idle notice)
	// passes through query() like any subtype it does not know, and the
	// run still ends with its result.
	idle := 0
	for _, l := range lines {
		if l.Message != nil && l.Message["subtype"] == "teammate_message" && l.Message["from_agent_id"] == id && l.Message["message_type"] == "idle_notification" {
			idle++
		}
	}
	if _, res := messages(lines); idle == 0 || res == nil || res["result"] != "lead done" {
		t.Fatalf("%d idle notices of the teammate in the SDK's messages; result %v", idle, res)
	}
}
