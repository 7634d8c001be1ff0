package agentwf_test

import (
	"slices"
	"testing"

	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/internal/remote/agentwf"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
)

// A sub-agent a remote agent starts on the worker gets its type's own
// budget (the request's TypeBudgets, from the launcher's definitions) —
// the least of it, its call's and what its parent has free — and its own
// spawn receipt: its type, tools, depth and reservation with why, in its
// task and its result, not its parent's.
func TestRemoteSubagentTakesItsTypesBudgetAndReceipt(t *testing.T) {
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	e := env(t, srv)
	srv.ScriptFunc("KID", func(r *llmtest.Request) llmtest.Turn {
		return llmtest.ToolUses(llmtest.Call{Name: "Bash", Input: map[string]any{"command": "true"}})
	})
	srv.ScriptFunc("PARENT", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.ToolUses(llmtest.Call{Name: "Agent", Input: map[string]any{"description": "k", "prompt": "KID work",
				"subagent_type": "reviewer", "budget": map[string]any{"turns": 5}}})
		}
		return llmtest.Text("parent done")
	})
	req := spawn(t, "PARENT delegate", 0, permission.ModeBypassPermissions)
	req.Ceiling.Tools = append(req.Ceiling.Tools, "Agent")
	req.Budget = executor.Budget{Turns: 10}
	req.TypeBudgets = map[string]executor.Budget{"reviewer": {Turns: 2}, "other": {Turns: 1}}
	e.ExecuteWorkflow(agentwf.WorkflowName, agentwf.Input{Request: req})
	out := result(t, e)
	if res := out.Result; res.Status != task.Completed || res.Text != "parent done" || res.Budget == nil || res.Budget.Spent.Turns != 4 {
		t.Fatalf("the parent's result %+v (budget %+v), want completed after 4 turns (2 its own, 2 its child's)", res, res.Budget)
	}
	if got := len(srv.RequestsFor("KID")); got != 2 {
		t.Fatalf("the child made %d requests, want its type's 2 turns (its call asked 5)", got)
	}
	var started *run.TaskInfo
	var ended *run.SubagentResult
	for _, ev := range out.Events {
		if ev.AgentID == req.AgentID {
			continue
		}
		switch ev.Type {
		case run.EventTaskStarted:
			started = ev.Task
		case run.EventTaskCompleted:
			ended = ev.Subagent
		}
	}
	if started == nil || ended == nil {
		t.Fatalf("the child's start %+v, end %+v", started, ended)
	}
	for name, rec := range map[string]run.Receipt{"task": started.Receipt, "result": ended.Receipt} {
		if rec.AgentType != "reviewer" || rec.Depth != req.Depth+1 || rec.Model != req.Model.ID || !slices.Equal(rec.Tools, req.Ceiling.Tools) ||
			rec.PermissionMode != req.Mode || rec.Budget == nil || rec.Budget.Turns != 2 || rec.Budget.Why == "" {
			t.Fatalf("the child's receipt in its %s: %+v (budget %+v)", name, rec, rec.Budget)
		}
	}
	if ended.Status != task.BudgetExhausted || ended.Budget == nil || ended.Budget.Spent.Turns != 2 {
		t.Fatalf("the child's end %+v", ended)
	}
}
