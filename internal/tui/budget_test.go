package tui

import (
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/run"
	taskpkg "github.com/cadre-dev/cadre/task"
)

// TestTreeShowsBudget: a budgeted agent's row shows its spend against its
// reservation as progress arrives and when it ends, and an agent stopped
// at its budget shows budget_exhausted.
func TestTreeShowsBudget(t *testing.T) {
	t.Parallel()
	tr := NewTree()
	tr.Apply(initEvent(), t0)
	start := task("a1", "worker", "d", "main", "c1", 1, "m")
	start.Task.Receipt.Budget = &run.BudgetGrant{USD: 0.05, Turns: 10}
	tr.Apply(start, t0)
	tr.Apply(run.Event{Type: run.EventTaskProgress, AgentID: "a1", Task: &run.TaskInfo{AgentID: "a1", Spent: &run.Spend{USD: 0.012, Turns: 3}}}, t0)
	n := tr.Get("a1")
	if got := nodeStats(n, t0); !strings.Contains(got, "$0.012/$0.050") || !strings.Contains(got, "3/10 turns") {
		t.Fatalf("stats %q", got)
	}
	tr.Apply(run.Event{Type: run.EventTaskCompleted, AgentID: "a1", Subagent: &run.SubagentResult{AgentID: "a1", Status: taskpkg.BudgetExhausted,
		Budget: &run.BudgetSpend{Spent: run.Spend{USD: 0.05, Turns: 7}}}}, t0)
	if tr.State(n) != StateBudget || !tr.State(n).Finished() || !strings.Contains(nodeStats(n, t0), "$0.050/$0.050 · 7/10 turns") {
		t.Fatalf("state %s stats %q", tr.State(n), nodeStats(n, t0))
	}
	// An agent without a budget shows none.
	tr.Apply(task("a2", "worker", "d", "main", "c2", 1, "m"), t0)
	if got := nodeStats(tr.Get("a2"), t0); strings.Contains(got, "$") || strings.Contains(got, "turns") {
		t.Fatalf("unbudgeted stats %q", got)
	}
}
