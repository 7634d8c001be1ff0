package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/tasklist"
	"github.com/cadre-dev/cadre/llm/llmtest"
)

// TestTeammateClaimsBeforeFirstRequest: a teammate started while the
// team's list has free tasks claims one before its first request, which
// carries its prompt and the claimed task together: it never spends a
// request on the prompt alone before it may claim. With two tasks it
// makes 4 requests (task 1 from the first, then its TaskUpdate's result;
// task 2 on its idle claim, then the result); each task is claimed once.
// A teammate started with no free task gets its prompt alone.
func TestTeammateClaimsBeforeFirstRequest(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.ScriptFunc("LEAD", func(r *llmtest.Request) llmtest.Turn {
		switch len(r.Messages) {
		case 1:
			return llmtest.ToolUses(
				llmtest.Call{Name: "TaskCreate", Input: map[string]any{"subject": "one", "description": "do one"}},
				llmtest.Call{Name: "TaskCreate", Input: map[string]any{"subject": "two", "description": "do two"}})
		case 3:
			return llmtest.ToolUse("Agent", teamCall("amy", "FC-amy PROMPT-TEXT for amy").Input)
		}
		return llmtest.Text("lead ok")
	})
	h.srv.ScriptFunc("FC-amy", func(r *llmtest.Request) llmtest.Turn {
		if m := claimedRe.FindStringSubmatch(r.LastUserText()); m != nil {
			return llmtest.ToolUse("TaskUpdate", map[string]any{"taskId": m[1], "status": "completed"})
		}
		return llmtest.Text("amy idle")
	})
	rt := newRuntime(t, teamConfig(h))
	if _, _, err := runAll(t, context.Background(), rt, "LEAD go"); err != nil {
		t.Fatal(err)
	}
	drainTeam(t, rt)
	reqs := h.srv.RequestsFor("FC-amy")
	if len(reqs) == 0 {
		t.Fatal("amy made no request")
	}
	first := reqs[0].LastUserText()
	if !strings.Contains(first, "PROMPT-TEXT for amy") || !strings.Contains(first, "You claimed task #1") ||
		strings.Index(first, "PROMPT-TEXT") > strings.Index(first, "You claimed") {
		t.Errorf("amy's first request: %q, want its prompt, then task #1", first)
	}
	if len(reqs) != 4 {
		t.Errorf("amy made %d requests, want 4", len(reqs))
	}
	claims := map[string]int{}
	for _, r := range reqs {
		if m := claimedRe.FindStringSubmatch(r.LastUserText()); m != nil {
			claims[m[1]]++
		}
	}
	if claims["1"] != 1 || claims["2"] != 1 {
		t.Errorf("claims %v", claims)
	}
	s, err := sessionTaskList(rt)
	if err != nil {
		t.Fatal(err)
	}
	all, err := s.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range all {
		if task.Status != tasklist.Completed || task.Owner != "amy" {
			t.Errorf("task %s: %s by %q", task.ID, task.Status, task.Owner)
		}
	}

	// No free task: the prompt alone.
	h = newHarness(t)
	h.srv.ScriptFunc("LEAD", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.ToolUse("Agent", teamCall("bo", "FC-bo PROMPT-ONLY").Input)
		}
		return llmtest.Text("lead ok")
	})
	h.srv.ScriptFunc("FC-bo", func(r *llmtest.Request) llmtest.Turn { return llmtest.Text("bo idle") })
	rt = newRuntime(t, teamConfig(h))
	if _, _, err := runAll(t, context.Background(), rt, "LEAD go"); err != nil {
		t.Fatal(err)
	}
	drainTeam(t, rt)
	if reqs := h.srv.RequestsFor("FC-bo"); len(reqs) != 1 || reqs[0].LastUserText() != "FC-bo PROMPT-ONLY" {
		t.Errorf("bo's requests: %d", len(reqs))
	}
}
