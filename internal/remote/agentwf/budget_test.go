package agentwf_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/internal/remote/agentwf"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
)

func result(t *testing.T, e interface {
	GetWorkflowError() error
	GetWorkflowResult(any) error
}) agentwf.Output {
	t.Helper()
	if err := e.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var out agentwf.Output
	if err := e.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// A remote agent with a turn budget of 7 that never stops calling tools:
// after its 6th answer (86 %) its next request carries the wrap-up
// reminder, once; its 7th answer spends the budget, so the tool call it
// asks for is not made and it ends budget_exhausted with a partial report
// and its spend in its result.
func TestRemoteBudgetWrapsUpThenStops(t *testing.T) {
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	e := env(t, srv)
	srv.ScriptFunc("SPEND", func(r *llmtest.Request) llmtest.Turn {
		return llmtest.ToolUses(llmtest.Call{Name: "Bash", Input: map[string]any{"command": "echo ran >> calls.log"}})
	})
	req := spawn(t, "SPEND turns", 0, permission.ModeBypassPermissions)
	req.Budget = executor.Budget{Turns: 7}
	e.ExecuteWorkflow(agentwf.WorkflowName, agentwf.Input{Request: req})
	out := result(t, e)
	res := out.Result
	if res.Status != task.BudgetExhausted || res.Turns != 7 || !strings.Contains(res.Text, "budget_exhausted") || !strings.Contains(res.Text, "Bash") {
		t.Fatalf("result %+v", res)
	}
	if res.Budget == nil || res.Budget.Spent.Turns != 7 || res.Budget.Spent.Tokens != res.Usage.Total() {
		t.Fatalf("spend %+v, usage %+v", res.Budget, res.Usage)
	}
	log, err := os.ReadFile(filepath.Join(req.Cwd, "calls.log"))
	if err != nil || strings.Count(string(log), "ran") != 6 {
		t.Fatalf("calls made: %q %v (want 6: the 7th is not made)", log, err)
	}
	reqs := srv.RequestsFor("SPEND")
	if len(reqs) != 7 {
		t.Fatalf("%d model requests, want 7", len(reqs))
	}
	for i, r := range reqs {
		n := strings.Count(string(r.Body), "Wrap up now")
		if want := map[bool]int{true: 1, false: 0}[i == 6]; n != want {
			t.Fatalf("request %d carries the wrap-up %d times, want %d", i+1, n, want)
		}
	}
	last := out.Messages[len(out.Messages)-1]
	if len(last.Content) != 1 || !strings.Contains(last.Content[0].ResultText(), "budget is spent") {
		t.Fatalf("the unmade call is not answered: %+v", last)
	}
}

// A sub-agent of a remote agent reserves from its budget: it gets the
// turns its Agent call asks for, stops at them, and its spend is charged
// to its parent's, whose result counts the whole subtree. A call asking
// for more than is left gets what is left.
func TestRemoteSubagentReservesFromTheBudget(t *testing.T) {
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	e := env(t, srv)
	srv.ScriptFunc("CHILD", func(r *llmtest.Request) llmtest.Turn {
		return llmtest.ToolUses(llmtest.Call{Name: "Bash", Input: map[string]any{"command": "true"}})
	})
	srv.ScriptFunc("PARENT", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.ToolUses(llmtest.Call{Name: "Agent", Input: map[string]any{"description": "c", "prompt": "CHILD work", "budget": map[string]any{"turns": 2}}})
		}
		return llmtest.Text("parent done")
	})
	req := spawn(t, "PARENT delegate", 0, permission.ModeBypassPermissions)
	req.Ceiling.Tools = append(req.Ceiling.Tools, "Agent")
	req.Budget = executor.Budget{Turns: 10}
	e.ExecuteWorkflow(agentwf.WorkflowName, agentwf.Input{Request: req})
	res := result(t, e).Result
	if res.Status != task.Completed || res.Text != "parent done" {
		t.Fatalf("result %+v", res)
	}
	if got := len(srv.RequestsFor("CHILD")); got != 2 {
		t.Fatalf("the child made %d requests, want its 2 turns", got)
	}
	if res.Budget == nil || res.Budget.Spent.Turns != 4 {
		t.Fatalf("the parent's spend %+v, want 4 turns (2 its own, 2 its child's)", res.Budget)
	}
	var child *run.SubagentResult
	for _, ev := range result(t, e).Events {
		if ev.Type == run.EventTaskCompleted && ev.AgentID != req.AgentID {
			child = ev.Subagent
		}
	}
	if child == nil || child.Status != task.BudgetExhausted || child.Budget == nil || child.Budget.Spent.Turns != 2 {
		t.Fatalf("the child's end %+v", child)
	}
}
