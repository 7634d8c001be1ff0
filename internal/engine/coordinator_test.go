package engine

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/task"
)

// TestCoordinatorMode (S-11.2): the main agent has only Agent,
// SendMessage, TaskStop and ListAgents and is told it coordinates; its
// worker runs in the background though the call does not ask (and forks
// are off though the fork path is configured), with the session's tools
// but no Agent tool; ListAgents lists it; SendMessage continues it once
// it has finished, and each of its ends reaches the coordinator once.
func TestCoordinatorMode(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	idRe := regexp.MustCompile(`agent_id: (a[0-9a-f]{16})`)
	var worker string
	h.srv.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
		all := lastTexts(r)
		switch {
		case len(r.Messages) == 1:
			return llmtest.ToolUse("Agent", map[string]any{"description": "worker one", "prompt": "WORK-1: do the job"})
		case strings.Contains(all, "worker continued"):
			return llmtest.Text("all done")
		case strings.Contains(all, "worker did it"):
			if strings.Contains(r.Messages[len(r.Messages)-1].Content[0].ResultText(), "continued in the background") {
				return llmtest.Text("sent")
			}
			return llmtest.ToolUse("SendMessage", map[string]any{"to": worker, "message": "AGAIN: one more thing"})
		case len(r.Messages) == 3:
			worker = idRe.FindStringSubmatch(r.Messages[2].Content[0].ResultText())[1]
			return llmtest.ToolUse("ListAgents", map[string]any{})
		}
		return llmtest.Text("waiting")
	})
	h.srv.ScriptFunc("WORK", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.Text("worker did it")
		}
		return llmtest.Text("worker continued")
	})
	cfg := h.config()
	cfg.Coordinator, cfg.ForkSubagent = true, true
	rt := newRuntime(t, cfg)
	if got := rt.ToolNames(); !slices.Equal(got, []string{"Agent", "SendMessage", "TaskStop", "ListAgents"}) {
		t.Fatalf("coordinator tools %v", got)
	}
	if _, _, err := runAll(t, context.Background(), rt, "MAIN coordinate"); err != nil {
		t.Fatal(err)
	}
	drainNotifications(t, rt)

	mains := h.srv.RequestsFor("MAIN")
	first := mains[0]
	if got := first.ToolNames(); !slices.Equal(got, []string{"Agent", "SendMessage", "TaskStop", "ListAgents"}) {
		t.Fatalf("tools sent %v", got)
	}
	contains(t, first.System, "# Coordinator mode")
	if strings.Contains(string(first.Tools[0].InputSchema), "run_in_background") {
		t.Fatal("the Agent tool offers run_in_background in coordinator mode")
	}
	contains(t, mains[1].LastToolResults()[0].ResultText(), "async_launched")
	list := mains[2].LastToolResults()[0].ResultText()
	contains(t, list, worker+"  type: general-purpose")
	contains(t, list, `description: "worker one"`)

	works := h.srv.RequestsFor("WORK")
	if len(works) != 2 {
		t.Fatalf("%d worker requests", len(works))
	}
	tools := works[0].ToolNames()
	if !slices.Contains(tools, "Read") || !slices.Contains(tools, "Bash") || slices.Contains(tools, "Agent") || slices.Contains(tools, "SendMessage") {
		t.Fatalf("worker tools %v", tools)
	}
	if len(works[1].Messages) != 3 || !strings.Contains(works[1].LastUserText(), "AGAIN: one more thing") {
		t.Fatalf("continued worker: %+v", works[1].Messages)
	}
	last := mains[len(mains)-1]
	if n := notesIn(last, worker); n != 2 {
		t.Fatalf("worker notified %d times", n)
	}
	info, _ := rt.Task(worker)
	if info.AgentType != "general-purpose" || !info.Background || info.Status != task.Completed {
		t.Fatalf("worker task %+v", info)
	}

	cfg.Background = BackgroundOff
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "Coordinator") {
		t.Fatalf("coordinator with background off: %v", err)
	}
}
