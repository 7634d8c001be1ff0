package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/transcript"
)

// taskByDescription returns the id of the task with description d.
func taskByDescription(t *testing.T, rt *Runtime, d string) string {
	t.Helper()
	for _, info := range rt.Tasks() {
		if info.Description == d {
			return info.ID
		}
	}
	t.Fatalf("no task %q in %+v", d, rt.Tasks())
	return ""
}

// waitTask waits until task id has ended.
func waitTask(rt *Runtime, id string) {
	for {
		ch := rt.bg.reg.Changed()
		if info, ok := rt.Task(id); ok && info.Status.Terminal() {
			return
		}
		<-ch
	}
}

// TestSendMessageToEveryKindOfRecipient: SendMessage to a running agent
// (queued for its next tool round), to a finished one (continued in the
// background with its whole history read back from its transcript, then
// notified like any background child), to main (queued for its next
// turn), to a one-shot agent and to an unknown id (errors, the latter
// listing the known ids).
func TestSendMessageToEveryKindOfRecipient(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var rt *Runtime
	runArrived, runRelease := make(chan struct{}), make(chan struct{})
	var fin, run, exp string
	call := func(d, prompt, typ string, bg bool) llmtest.Call {
		return llmtest.Call{Name: "Agent", Input: map[string]any{"description": d, "prompt": prompt, "subagent_type": typ, "run_in_background": bg}}
	}
	h.srv.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
		switch len(r.Messages) {
		case 1:
			return llmtest.ToolUses(call("finisher", "FIN: first job", "general-purpose", true),
				call("runner", "RUN: long job", "general-purpose", true), call("explorer", "EXP: look", "Explore", false))
		case 3:
			fin, run, exp = taskByDescription(t, rt, "finisher"), taskByDescription(t, rt, "runner"), taskByDescription(t, rt, "explorer")
			waitTask(rt, fin)
			<-runArrived
			send := func(to, msg string) llmtest.Call {
				return llmtest.Call{Name: "SendMessage", Input: map[string]any{"to": to, "message": msg, "summary": "more"}}
			}
			return llmtest.ToolUses(send(fin, "FOLLOW-UP: go on"), send(run, "EXTRA: more input"), send(exp, "hi"),
				send("a0000000000000000", "hi"), send("main", "NOTE-TO-SELF"))
		case 5:
			close(runRelease)
			return llmtest.Text("waiting")
		}
		return llmtest.Text("noted")
	})
	h.srv.ScriptFunc("FIN", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.Text("first answer")
		}
		return llmtest.Text("continued answer")
	})
	h.srv.ScriptFunc("RUN", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			close(runArrived)
			<-runRelease
			return llmtest.ToolUse("Glob", map[string]any{"pattern": "*.none"})
		}
		return llmtest.Text("run saw: " + r.LastUserText())
	})
	h.srv.Script("EXP", llmtest.Text("explored"))
	cfg := h.config()
	cfg.Background = BackgroundDefault // the task tools are offered
	rt = newRuntime(t, cfg)
	if _, _, err := runAll(t, context.Background(), rt, "MAIN go"); err != nil {
		t.Fatal(err)
	}
	drainNotifications(t, rt)

	mains := h.srv.RequestsFor("MAIN")
	results := mains[2].LastToolResults()
	if len(results) != 5 {
		t.Fatalf("%d results", len(results))
	}
	contains(t, results[0].ResultText(), "continued in the background")
	contains(t, results[1].ResultText(), "Message queued for "+run)
	contains(t, results[2].ResultText(), "runs once and cannot be sent messages")
	for _, id := range []string{"Known agents: main, ", fin, run, exp} {
		contains(t, results[3].ResultText(), id)
	}
	contains(t, results[4].ResultText(), "Message queued for main")
	for i, r := range results {
		if r.IsError != (i == 2 || i == 3) {
			t.Fatalf("result %d is_error %v: %s", i, r.IsError, r.ResultText())
		}
	}

	// The running agent got the message with its next tool results.
	runs := h.srv.RequestsFor("RUN")
	contains(t, runs[len(runs)-1].LastUserText(), "EXTRA: more input")

	// The finished agent was continued with its whole history.
	fins := h.srv.RequestsFor("FIN")
	if len(fins) != 2 {
		t.Fatalf("%d FIN requests", len(fins))
	}
	got := fins[1].Messages
	if len(got) != 3 || got[0].Text() != "FIN: first job" || got[1].Text() != "first answer" || !strings.Contains(got[2].Text(), "FOLLOW-UP: go on") {
		t.Fatalf("continued conversation: %+v", got)
	}
	// Its transcript holds every message once, the new ones appended.
	info, _ := rt.Task(fin)
	entries, err := transcript.ReadFile(info.OutputFile)
	if err != nil {
		t.Fatal(err)
	}
	msgs := transcript.Messages(entries)
	if len(msgs) != 4 || msgs[3].Text() != "continued answer" || strings.Count(msgs[2].Text(), "FOLLOW-UP") != 1 {
		t.Fatalf("transcript: %+v", msgs)
	}

	// The main agent heard of the finisher twice (its first run and its
	// continuation), of the runner once, and read its own note once.
	last := mains[len(mains)-1]
	if n := notesIn(last, fin); n != 2 {
		t.Fatalf("finisher notified %d times", n)
	}
	if n := notesIn(last, run); n != 1 {
		t.Fatalf("runner notified %d times", n)
	}
	all := lastTexts(last)
	contains(t, all, "continued answer")
	contains(t, all, "run saw:")
	if n := strings.Count(all, "NOTE-TO-SELF"); n != 1 {
		t.Fatalf("note to self seen %d times", n)
	}
	if info.Status != task.Completed || info.Parent != "main" || !info.Background {
		t.Fatalf("continued task %+v", info)
	}
	if rt.RunningTasks() != 0 || rt.PendingNotifications() {
		t.Fatal("work left behind")
	}
}

// TestContinuationRepairsAnEndedConversation: a history whose last answer
// has calls without results gets error results, and a last user turn that
// was never answered takes the message at its end, its blocks counted as
// kept (they are in the transcript already).
func TestContinuationRepairsAnEndedConversation(t *testing.T) {
	t.Parallel()
	call := llm.Block{Type: llm.BlockToolUse, ID: "toolu_1", Name: "Read", Input: []byte(`{}`)}
	for _, c := range []struct {
		name    string
		history []llm.Message
		want    int // messages
		kept    int
	}{
		{"answered", []llm.Message{llm.UserText("go"), {Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("done")}}}, 3, 0},
		{"dangling call", []llm.Message{llm.UserText("go"), {Role: llm.RoleAssistant, Content: []llm.Block{call}}}, 3, 0},
		{"unanswered", []llm.Message{llm.UserText("go")}, 1, 1},
		{"empty", nil, 1, 0},
	} {
		msgs, kept := continuation(c.history, "more")
		if len(msgs) != c.want || kept != c.kept {
			t.Errorf("%s: %d messages, kept %d", c.name, len(msgs), kept)
			continue
		}
		last := msgs[len(msgs)-1]
		if last.Role != llm.RoleUser || last.Content[len(last.Content)-1].Text != "more" {
			t.Errorf("%s: last %+v", c.name, last)
		}
		if c.name == "dangling call" && (last.Content[0].ToolUseID != "toolu_1" || !last.Content[0].IsError) {
			t.Errorf("dangling call not answered: %+v", last.Content[0])
		}
	}
}
