package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/task"
)

// A remote agent under a session budget: its spawn request carries what
// the session had free when it started (its turns are shared with the
// session, so that is the limit the worker holds it to), each answer it
// reports is charged up the launcher's chain — the session's account
// counts it with the main agent's —, and its result says what it spent.
func TestRemoteSpendChargedUpTheLaunchersChain(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	x := newWorkerExecutor(t)
	x.w.Model.Script("FAR-SPEND", llmtest.Text("far spent one turn"))
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", map[string]any{"description": "far", "prompt": "FAR-SPEND go", "isolation": "remote"}),
		llmtest.Text("launched"), llmtest.Text("heard back"))
	cfg := h.config()
	cfg.Remote = Remote{Executor: x}
	cfg.Budget = agentdef.Budget{Turns: 10}
	rt := newRuntime(t, cfg)
	evs, _, err := runAll(t, context.Background(), rt, "MAIN go")
	if err != nil {
		t.Fatal(err)
	}
	// Its completion is in the run's stream or a later one's, as it ends
	// before or after the run.
	evs = append(evs, drainNotifications(t, rt)...)
	reqs := x.requests()
	if len(reqs) != 1 || reqs[0].Budget.Turns != 9 {
		t.Fatalf("the spawn request's budget %+v, want the 9 turns the session had free", reqs[0].Budget)
	}
	var done bool
	for _, ev := range evs {
		if s := ev.Subagent; s != nil && s.Status == task.Completed && s.Budget != nil && s.Budget.Spent.Turns == 1 {
			done = true
		}
	}
	if !done {
		t.Fatalf("no completion of the remote agent with its spend among %d events", len(evs))
	}
	// The main agent's three answers and the remote agent's one.
	if got := rt.budgets.session.Spent().Turns; got != 4 {
		t.Fatalf("the session's account counts %d turns, want 4", got)
	}
	last := h.srv.RequestsFor("MAIN")
	if text := last[len(last)-1].LastUserText(); !strings.Contains(text, "budget: spent") || !strings.Contains(text, "1 turns") {
		t.Fatalf("the notification does not say what was spent: %s", text)
	}
}
