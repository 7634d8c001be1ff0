package cli

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// TestTeamMessagesInStreamJSON (issue 25): the team's mailbox traffic is
// in stream-json, one system/teammate_message per message as it is
// posted: lead to teammate, teammate to teammate, teammate to lead, and
// each teammate's idle notice, with sender, receiver (names and agent ids), team, kind,
// summary and the body the receiver reads.
func TestTeamMessagesInStreamJSON(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	env["CADRE_AGENT_TEAMS"] = "1"
	s.ScriptFunc("LEAD", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.ToolUses(
				llmtest.Call{Name: "Agent", Input: map[string]any{"description": "one", "prompt": "MATE-one go", "subagent_type": "general-purpose", "name": "one"}},
				llmtest.Call{Name: "Agent", Input: map[string]any{"description": "two", "prompt": "MATE-two go", "subagent_type": "general-purpose", "name": "two"}})
		}
		if len(r.Messages) == 3 {
			return llmtest.ToolUse("SendMessage", map[string]any{"to": "one", "message": "BODY-lead-to-one", "summary": "hello one"})
		}
		return llmtest.Text("lead done")
	})
	s.ScriptFunc("MATE-one", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.ToolUse("SendMessage", map[string]any{"to": "two", "message": "BODY-one-to-two", "summary": "greet two"})
		}
		return llmtest.Text("one idle")
	})
	s.ScriptFunc("MATE-two", func(r *llmtest.Request) llmtest.Turn {
		if strings.Contains(r.LastUserText(), "BODY-one-to-two") {
			return llmtest.ToolUse("SendMessage", map[string]any{"to": "team-lead", "message": "BODY-two-to-lead", "summary": "tell lead"})
		}
		return llmtest.Text("two idle")
	})
	p := runCadre(t, env, "", "-p", "LEAD start a team", "--output-format", "stream-json", "--verbose")
	if p.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", p.code, p.stdout, p.stderr)
	}
	ids := map[string]string{} // teammate name -> agent id
	var msgs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(p.stdout), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if m["subtype"] == "task_started" {
			c, _ := m["cadre"].(map[string]any)
			tm, _ := c["teammate"].(map[string]any)
			name, _ := tm["name"].(string)
			ids[name], _ = m["task_id"].(string)
		}
		if m["type"] == "system" && m["subtype"] == "teammate_message" {
			msgs = append(msgs, m)
		}
	}
	if ids["one"] == "" || ids["two"] == "" {
		t.Fatalf("teammates %v", ids)
	}
	var team string
	idle := map[string]int{}
	var texts []string
	for _, m := range msgs {
		if team == "" {
			team, _ = m["team_name"].(string)
		}
		if !strings.HasPrefix(team, "session-") || m["team_name"] != team || m["session_id"] == "" || m["uuid"] == "" {
			t.Errorf("message %v", m)
		}
		from, _ := m["from"].(string)
		if id, _ := m["from_agent_id"].(string); id != ids[from] {
			t.Errorf("from_agent_id of %v, want %s", m, ids[from])
		}
		switch m["message_type"] {
		case "idle_notification":
			idle[from]++
			if m["to"] != "team-lead" || !strings.Contains(m["message"].(string), `"type":"idle_notification"`) {
				t.Errorf("idle notice %v", m)
			}
		case "message":
			texts = append(texts, from+">"+m["to"].(string)+":"+m["message"].(string)+":"+m["summary"].(string))
			if to := m["to"].(string); to != "team-lead" && m["to_agent_id"] != ids[to] {
				t.Errorf("to_agent_id of %v, want %s", m, ids[to])
			}
		default:
			t.Errorf("message_type %v", m)
		}
	}
	slices.Sort(texts) // the lead's message and one's are sent concurrently
	want := "one>two:BODY-one-to-two:greet two, team-lead>one:BODY-lead-to-one:hello one, two>team-lead:BODY-two-to-lead:tell lead"
	if got := strings.Join(texts, ", "); got != want {
		t.Errorf("text messages %s, want %s", got, want)
	}
	if idle["one"] < 1 || idle["two"] < 1 {
		t.Errorf("idle notices by sender %v", idle)
	}
	// What the events say was sent is what the receivers read.
	var two, lead bool
	for _, r := range s.RequestsFor("MATE-two") {
		two = two || strings.Contains(r.LastUserText(), "BODY-one-to-two")
	}
	for _, r := range s.RequestsFor("LEAD") {
		lead = lead || strings.Contains(r.LastUserText(), "BODY-two-to-lead")
	}
	if !two || !lead {
		t.Errorf("read by two: %v, by the lead: %v", two, lead)
	}
}

// TestTeamNoticesInStreamJSON (issue 25): a notice the team posts itself
// is a system/teammate_message line too: the task_assignment that the
// lead's TaskUpdate with an owner puts in the teammate's mailbox, with
// the structured kind and the body the teammate reads.
func TestTeamNoticesInStreamJSON(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	env["CADRE_AGENT_TEAMS"] = "1"
	s.ScriptFunc("LEAD", func(r *llmtest.Request) llmtest.Turn {
		switch len(r.Messages) {
		case 1:
			return llmtest.ToolUse("TaskCreate", map[string]any{"subject": "JOB-subject", "description": "the job"})
		case 3:
			// The lead holds it, so the idle teammate does not claim it.
			return llmtest.ToolUse("TaskUpdate", map[string]any{"taskId": "1", "status": "in_progress"})
		case 5:
			return llmtest.ToolUse("Agent", map[string]any{"description": "kim", "prompt": "MATE-kim go", "subagent_type": "general-purpose", "name": "kim"})
		case 7:
			return llmtest.ToolUse("TaskUpdate", map[string]any{"taskId": "1", "owner": "kim"})
		}
		return llmtest.Text("lead done")
	})
	s.ScriptFunc("MATE-kim", func(r *llmtest.Request) llmtest.Turn {
		if strings.Contains(r.LastUserText(), "task_assignment") {
			return llmtest.ToolUse("TaskUpdate", map[string]any{"taskId": "1", "status": "completed"})
		}
		return llmtest.Text("kim idle")
	})
	p := runCadre(t, env, "", "-p", "LEAD start", "--output-format", "stream-json", "--verbose")
	if p.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", p.code, p.stdout, p.stderr)
	}
	kim := ""
	var assigned []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(p.stdout), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if m["subtype"] == "task_started" {
			kim, _ = m["task_id"].(string)
		}
		if m["type"] == "system" && m["subtype"] == "teammate_message" && m["message_type"] == "task_assignment" {
			assigned = append(assigned, m)
		}
	}
	if len(assigned) != 1 {
		t.Fatalf("task_assignment lines: %v\n%s", assigned, p.stdout)
	}
	a := assigned[0]
	body, _ := a["message"].(string)
	team, _ := a["team_name"].(string)
	if kim == "" || a["from"] != "team-lead" || a["to"] != "kim" || a["to_agent_id"] != kim ||
		!strings.HasPrefix(team, "session-") || !strings.Contains(body, `"subject":"JOB-subject"`) {
		t.Errorf("task_assignment %v (kim %s)", a, kim)
	}
	var read bool
	for _, r := range s.RequestsFor("MATE-kim") {
		read = read || strings.Contains(r.LastUserText(), body)
	}
	if !read {
		t.Errorf("kim never read %s", body)
	}
}
