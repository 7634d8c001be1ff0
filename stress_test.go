package cadre

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/task"
)

// TestBackgroundStress starts many background children at once with
// mixed outcomes — completed, failed (an API error), nested (a background
// grandchild of their own), stopped — and checks that the main agent hears
// of each exactly once, nested ones only after their own child ended, and
// that the gate and the registry end empty (goleak runs in TestMain).
func TestBackgroundStress(t *testing.T) {
	t.Parallel()
	// The figure is 1,000 children: CADRE_STRESS=1 runs that many
	// (minutes under -race on a busy machine); the suite runs 200.
	n := 200
	switch {
	case os.Getenv("CADRE_STRESS") == "1":
		n = 1000
	case testing.Short():
		n = 100
	}
	h := newHarness(t)
	kinds := []string{"ok", "fail", "nest", "stop"}
	hold := make(chan struct{})
	var calls []llmtest.Call
	for i := range n {
		calls = append(calls, llmtest.Call{Name: "Agent", Input: map[string]any{"description": fmt.Sprintf("%s %d", kinds[i%4], i),
			"prompt": fmt.Sprintf("STRESS-%s-%d: go", kinds[i%4], i), "subagent_type": "general-purpose", "run_in_background": true}})
	}
	h.srv.Script("MAIN", llmtest.ToolUses(calls...))
	h.srv.ScriptFunc("MAIN", func(*llmtest.Request) llmtest.Turn { return llmtest.Text("ok") })
	h.srv.ScriptFunc("STRESS", func(r *llmtest.Request) llmtest.Turn {
		var kind string
		var i int
		fmt.Sscanf(strings.ReplaceAll(r.FirstUserText(), "-", " "), "STRESS %s %d", &kind, &i)
		switch kind {
		case "fail":
			return llmtest.HTTPError(400, "invalid request")
		case "stop":
			<-hold
			return llmtest.Text("too late")
		case "leaf":
			return llmtest.Text(fmt.Sprintf("leaf %d", i))
		case "nest":
			switch len(r.Messages) {
			case 1:
				return llmtest.ToolUse("Agent", map[string]any{"description": "leaf", "prompt": fmt.Sprintf("STRESS-leaf-%d: go", i),
					"subagent_type": "general-purpose", "run_in_background": true})
			case 3:
				return llmtest.Text("waiting")
			}
			if !strings.Contains(r.LastUserText(), fmt.Sprintf("leaf %d", i)) {
				return llmtest.Text("MISSING LEAF")
			}
		}
		return llmtest.Text(fmt.Sprintf("done %d", i))
	})
	cfg := h.config()
	cfg.Limits = Limits{MaxRunning: 50, MaxTotal: 10 * n}
	rt := newRuntime(t, cfg)
	evs, res, err := runAll(t, context.Background(), rt, "MAIN go")
	if err != nil || res == nil {
		t.Fatal(err)
	}
	top := map[string]string{} // id → description of the main agent's children
	for _, info := range rt.Tasks() {
		if info.Parent == "main" {
			top[info.ID] = info.Description
		}
	}
	if len(top) != n {
		t.Fatalf("%d children registered, want %d (events %d)", len(top), n, len(evs))
	}
	for id, d := range top {
		if strings.HasPrefix(d, "stop ") {
			if err := rt.Stop(context.Background(), id); err != nil {
				t.Fatal(err)
			}
		}
	}
	close(hold)
	drainNotifications(t, rt)

	reqs := h.srv.RequestsFor("MAIN")
	last := reqs[len(reqs)-1]
	want := map[string]task.Status{"ok": task.Completed, "fail": task.Failed, "nest": task.Completed, "stop": task.Killed}
	for id, d := range top {
		if got := notesIn(last, id); got != 1 {
			t.Fatalf("%s (%s) notified %d times", id, d, got)
		}
		info, _ := rt.Task(id)
		if info.Status != want[strings.Fields(d)[0]] {
			t.Fatalf("%s (%s) ended %s", id, d, info.Status)
		}
	}
	if strings.Contains(lastTexts(last), "MISSING LEAF") {
		t.Fatal("a nested child finished before hearing from its own child")
	}
	if rt.RunningTasks() != 0 || rt.PendingNotifications() {
		t.Fatal("work left behind")
	}
	if c := rt.gate.Counts(); c.Running != 0 || c.Queued != 0 || c.Resuming != 0 {
		t.Fatalf("gate %+v", c)
	}
}
