package engine

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/run"
)

// teamMessages is the team messages among evs, by message_type.
func teamMessages(evs []run.Event) map[string][]run.TeamMessage {
	out := map[string][]run.TeamMessage{}
	for _, ev := range evs {
		if ev.Type == run.EventTeamMessage && ev.TeamMessage != nil {
			out[ev.TeamMessage.Type] = append(out[ev.TeamMessage.Type], *ev.TeamMessage)
		}
	}
	return out
}

// TestTeamNoticesAreEvents (issue 25, point 10): the team messages the
// engine posts itself are on the stream like SendMessage's, once each,
// with their structured kind: the task_assignment a TaskUpdate with an
// owner puts in the new owner's mailbox, the teammate_terminated notice
// when a teammate that ignored its shutdown_request is stopped after the
// grace period, and the notice of its open tasks going back to pending
// (tasks_released). Each says what the receiver reads.
func TestTeamNoticesAreEvents(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var stage atomic.Int32
	h.srv.ScriptFunc("LEAD", func(r *llmtest.Request) llmtest.Turn {
		switch {
		case len(r.Messages) == 1:
			return llmtest.ToolUse("TaskCreate", map[string]any{"subject": "job", "description": "the job"})
		case len(r.Messages) == 3:
			// The lead holds it, so the idle teammate does not claim it.
			return llmtest.ToolUse("TaskUpdate", map[string]any{"taskId": "1", "status": "in_progress"})
		case len(r.Messages) == 5:
			return llmtest.ToolUse("Agent", teamCall("kim", "TN-kim start").Input)
		case strings.Contains(r.LastUserText(), "idle_notification") && stage.CompareAndSwap(0, 1):
			return llmtest.ToolUse("TaskUpdate", map[string]any{"taskId": "1", "owner": "kim"})
		case stage.CompareAndSwap(1, 2):
			return llmtest.ToolUse("SendMessage", teamSend("kim", map[string]any{"type": "shutdown_request"}).Input)
		}
		return llmtest.Text("lead ok")
	})
	h.srv.ScriptFunc("TN-kim", func(r *llmtest.Request) llmtest.Turn {
		return llmtest.Text("kim ignores everything")
	})
	cfg := teamConfig(h)
	cfg.TeamShutdownGrace = 20 * time.Millisecond
	rt := newRuntime(t, cfg)
	evs, _, err := runAll(t, context.Background(), rt, "LEAD go")
	if err != nil {
		t.Fatal(err)
	}
	evs = append(evs, drainNotifications(t, rt)...)
	if err := rt.Close(); err != nil {
		t.Error(err)
	}
	if stage.Load() != 2 {
		t.Fatalf("the lead's script stopped at stage %d", stage.Load())
	}
	msgs := teamMessages(evs)
	reqs := msgs["shutdown_request"]
	if len(reqs) != 1 || reqs[0].ToAgentID == "" || reqs[0].Team == "" {
		t.Fatalf("shutdown requests %+v", reqs)
	}
	kim, team := reqs[0].ToAgentID, reqs[0].Team
	one := func(kind string) run.TeamMessage {
		t.Helper()
		if len(msgs[kind]) != 1 {
			t.Errorf("%s events: %+v", kind, msgs[kind])
			return run.TeamMessage{}
		}
		m := msgs[kind][0]
		if m.Team != team {
			t.Errorf("%s in team %q, want %q", kind, m.Team, team)
		}
		return m
	}
	as := one("task_assignment")
	if as.From != "team-lead" || as.FromAgentID != "" || as.To != "kim" || as.ToAgentID != kim ||
		!strings.Contains(as.Text, `"type":"task_assignment"`) || !strings.Contains(as.Text, `"taskId":"1"`) {
		t.Errorf("task_assignment %+v", as)
	}
	term := one("teammate_terminated")
	if term.From != "kim" || term.FromAgentID != kim || term.To != "team-lead" || term.ToAgentID != "" ||
		term.RequestID != reqs[0].RequestID || !strings.Contains(term.Text, `"type":"teammate_terminated"`) ||
		!strings.Contains(term.Text, "did not answer shutdown_request "+reqs[0].RequestID) {
		t.Errorf("teammate_terminated %+v (request %s)", term, reqs[0].RequestID)
	}
	rel := one("tasks_released")
	if rel.From != "kim" || rel.FromAgentID != kim || rel.To != "team-lead" || !strings.Contains(rel.Text, "#1 job") {
		t.Errorf("tasks_released %+v", rel)
	}
	// What the events say is what the receivers read.
	var readAssign, readTerm, readRel bool
	for _, r := range h.srv.RequestsFor("TN-kim") {
		readAssign = readAssign || strings.Contains(r.LastUserText(), as.Text)
	}
	firstLine, _, _ := strings.Cut(rel.Text, "\n")
	for _, r := range h.srv.RequestsFor("LEAD") {
		readTerm = readTerm || strings.Contains(r.LastUserText(), term.Text)
		readRel = readRel || strings.Contains(r.LastUserText(), firstLine) && strings.Contains(r.LastUserText(), "#1 job")
	}
	if !readAssign || !readTerm || !readRel {
		t.Errorf("read: the assignment by kim %v, the stop notice by the lead %v, the released tasks by the lead %v", readAssign, readTerm, readRel)
	}
}
