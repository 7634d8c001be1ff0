package engine

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cadre-dev/cadre/internal/tasklist"
	"github.com/cadre-dev/cadre/llm/llmtest"
)

var claimedRe = regexp.MustCompile(`You claimed task #(\d+)`)

// TestTeamWorksTaskList: the lead makes a task list with dependencies
// (2 after 1, 3 after 2, 4 free) and starts three teammates; idle
// teammates claim the lowest claimable task, work it and complete it;
// every task ends completed once, by the teammate that claimed it, never
// before its blockers; the lead is woken once for the idle notices of
// the whole team (counted from the request log), never one turn each.
func TestTeamWorksTaskList(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	create := func(s string) llmtest.Call {
		return llmtest.Call{Name: "TaskCreate", Input: map[string]any{"subject": s, "description": "do " + s}}
	}
	h.srv.ScriptFunc("LEAD", func(r *llmtest.Request) llmtest.Turn {
		switch len(r.Messages) {
		case 1:
			return llmtest.ToolUses(create("design"), create("build"), create("test"), create("docs"))
		case 3:
			return llmtest.ToolUses(
				llmtest.Call{Name: "TaskUpdate", Input: map[string]any{"taskId": "2", "addBlockedBy": []string{"1"}}},
				llmtest.Call{Name: "TaskUpdate", Input: map[string]any{"taskId": "3", "addBlockedBy": []string{"2"}}})
		case 5:
			return llmtest.ToolUses(teamCall("amy", "TW-amy start"), teamCall("bo", "TW-bo start"), teamCall("cy", "TW-cy start"))
		case 7:
			return llmtest.Text("team at work")
		}
		return llmtest.Text("lead ok")
	})
	var order []string // completion order, under the server's per-key calls
	done := make(chan string, 8)
	for _, name := range []string{"amy", "bo", "cy"} {
		h.srv.ScriptFunc("TW-"+name, func(r *llmtest.Request) llmtest.Turn {
			if m := claimedRe.FindStringSubmatch(r.LastUserText()); m != nil {
				done <- m[1]
				return llmtest.ToolUse("TaskUpdate", map[string]any{"taskId": m[1], "status": "completed"})
			}
			return llmtest.Text(name + " idle")
		})
	}
	rt := newRuntime(t, teamConfig(h))
	if _, _, err := runAll(t, context.Background(), rt, "LEAD go"); err != nil {
		t.Fatal(err)
	}
	drainNotifications(t, rt)
	close(done)
	for id := range done {
		order = append(order, id)
	}
	s, err := sessionTaskList(rt)
	if err != nil {
		t.Fatal(err)
	}
	all, err := s.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 4 {
		t.Fatalf("%d tasks", len(all))
	}
	claims := map[string][]string{} // task → teammates that were told they claimed it
	for _, name := range []string{"amy", "bo", "cy"} {
		for _, r := range h.srv.RequestsFor("TW-" + name) {
			if m := claimedRe.FindStringSubmatch(r.LastUserText()); m != nil {
				claims[m[1]] = append(claims[m[1]], name)
			}
		}
	}
	for _, task := range all {
		if task.Status != tasklist.Completed {
			t.Errorf("task %s (%s) is %s", task.ID, task.Subject, task.Status)
		}
		if c := claims[task.ID]; len(c) != 1 || c[0] != task.Owner {
			t.Errorf("task %s owned by %q, claimed by %v", task.ID, task.Owner, c)
		}
	}
	pos := map[string]int{}
	for i, id := range order {
		pos[id] = i
	}
	if !(pos["1"] < pos["2"] && pos["2"] < pos["3"]) {
		t.Errorf("worked in the order %v: a task ran before its blocker", order)
	}
	// Idle notices: the lead's requests after its turn each carry new
	// notices, never the same twice, and the team's idles of the whole
	// job woke it at most twice (the notices held while a teammate works).
	leads := h.srv.RequestsFor("LEAD")
	after := 0
	for _, r := range leads[4:] {
		if strings.Contains(r.LastUserText(), "idle_notification") && len(r.LastToolResults()) == 0 {
			after++
		}
	}
	if after > 2 {
		t.Errorf("the lead was woken %d times by idle notices", after)
	}
	last := leads[len(leads)-1]
	for _, name := range []string{"amy", "bo", "cy"} {
		if n := countIn(last, fmt.Sprintf(`"from":"%s","idleReason"`, name)); n < 1 {
			t.Errorf("the lead never heard %s idle", name)
		}
	}
	if err := rt.Close(); err != nil {
		t.Error(err)
	}
}

// TestTeamShutdownReleasesTasks: a teammate that approves its shutdown
// with a task still open gives it back — pending and unowned — and the
// lead is told which.
func TestTeamShutdownReleasesTasks(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var asked atomic.Bool
	h.srv.ScriptFunc("LEAD", func(r *llmtest.Request) llmtest.Turn {
		last := r.LastUserText()
		switch {
		case len(r.Messages) == 1:
			return llmtest.ToolUse("TaskCreate", map[string]any{"subject": "long job", "description": "never finished"})
		case len(r.Messages) == 3:
			return llmtest.ToolUse("Agent", teamCall("kim", "TR-kim start").Input)
		case strings.Contains(last, "idle_notification") && asked.CompareAndSwap(false, true):
			return llmtest.ToolUse("SendMessage", teamSend("kim", map[string]any{"type": "shutdown_request"}).Input)
		}
		return llmtest.Text("lead ok")
	})
	h.srv.ScriptFunc("TR-kim", func(r *llmtest.Request) llmtest.Turn {
		if res := r.LastToolResults(); len(res) > 0 && strings.Contains(res[0].ResultText(), "Shutdown approved") {
			return llmtest.Text("bye")
		}
		if id := lastRequestID(r); id != "" && strings.Contains(r.LastUserText(), "shutdown_request") {
			return llmtest.ToolUse("SendMessage", teamSend("team-lead", map[string]any{"type": "shutdown_response", "request_id": id, "approve": true}).Input)
		}
		return llmtest.Text("kim pauses")
	})
	rt := newRuntime(t, teamConfig(h))
	if _, _, err := runAll(t, context.Background(), rt, "LEAD go"); err != nil {
		t.Fatal(err)
	}
	drainTeam(t, rt)
	var claimed bool
	for _, r := range h.srv.RequestsFor("TR-kim") {
		claimed = claimed || strings.Contains(r.LastUserText(), "You claimed task #1")
	}
	if !claimed {
		t.Fatal("kim never claimed the task")
	}
	s, err := sessionTaskList(rt)
	if err != nil {
		t.Fatal(err)
	}
	task, err := s.Get(context.Background(), "1")
	if err != nil {
		t.Fatal(err)
	}
	if task.Status != tasklist.Pending || task.Owner != "" {
		t.Errorf("after kim's shutdown task 1 is %s owned by %q", task.Status, task.Owner)
	}
	var told bool
	for _, r := range h.srv.RequestsFor("LEAD") {
		told = told || strings.Contains(r.LastUserText(), "its open tasks are pending and unowned again") && strings.Contains(r.LastUserText(), "#1 long job")
	}
	if !told {
		t.Error("the lead was not told task #1 went back")
	}
}

// TestTeamTwentyRaceForTenTasks: 20 teammates, started at once (beyond
// the running cap: the spawn gate queues them and idle ones give their
// slots back), race to claim 10 tasks: each task is claimed once and
// completed by its owner.
func TestTeamTwentyRaceForTenTasks(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var creates, mates []llmtest.Call
	for i := range 10 {
		creates = append(creates, llmtest.Call{Name: "TaskCreate", Input: map[string]any{"subject": fmt.Sprintf("job %d", i), "description": "d"}})
	}
	for i := range 20 {
		name := fmt.Sprintf("r%02d", i)
		mates = append(mates, teamCall(name, "RACE-"+name+"- start"))
	}
	h.srv.ScriptFunc("RACELEAD", func(r *llmtest.Request) llmtest.Turn {
		switch len(r.Messages) {
		case 1:
			return llmtest.ToolUses(creates...)
		case 3:
			return llmtest.ToolUses(mates...)
		}
		return llmtest.Text("lead ok")
	})
	for i := range 20 {
		name := fmt.Sprintf("r%02d", i)
		h.srv.ScriptFunc("RACE-"+name+"-", func(r *llmtest.Request) llmtest.Turn {
			if m := claimedRe.FindStringSubmatch(r.LastUserText()); m != nil {
				return llmtest.ToolUse("TaskUpdate", map[string]any{"taskId": m[1], "status": "completed"})
			}
			return llmtest.Text(name + " idle")
		})
	}
	rt := newRuntime(t, teamConfig(h))
	if _, _, err := runAll(t, context.Background(), rt, "RACELEAD go"); err != nil {
		t.Fatal(err)
	}
	drainTeam(t, rt)
	claims := map[string][]string{}
	for i := range 20 {
		name := fmt.Sprintf("r%02d", i)
		for _, r := range h.srv.RequestsFor("RACE-" + name + "-") {
			if m := claimedRe.FindStringSubmatch(r.LastUserText()); m != nil {
				claims[m[1]] = append(claims[m[1]], name)
			}
		}
	}
	s, err := sessionTaskList(rt)
	if err != nil {
		t.Fatal(err)
	}
	all, err := s.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 10 {
		t.Fatalf("%d tasks", len(all))
	}
	for _, task := range all {
		if c := claims[task.ID]; len(c) != 1 || c[0] != task.Owner || task.Status != tasklist.Completed {
			t.Errorf("task %s: %s, owner %q, claimed by %v", task.ID, task.Status, task.Owner, c)
		}
	}
}
