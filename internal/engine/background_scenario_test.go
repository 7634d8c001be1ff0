package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
)

// TestTwoChildrenFinishingTogether: two background children answer at the
// same instant (both responses are released together) while the main
// agent is idle; the main agent's next request carries both
// notifications, each once, in the order they were delivered, and no
// request after it carries them again.
func TestTwoChildrenFinishingTogether(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var arrived sync.WaitGroup
	arrived.Add(2)
	release := make(chan struct{})
	h.srv.Script("MAIN", llmtest.ToolUses(
		llmtest.Call{Name: "Agent", Input: bgCall("TWIN-1: count a")},
		llmtest.Call{Name: "Agent", Input: bgCall("TWIN-2: count b")},
	), llmtest.Text("started both"), llmtest.Text("heard both"))
	twin := func(answer string) func(*llmtest.Request) llmtest.Turn {
		return func(*llmtest.Request) llmtest.Turn {
			arrived.Done()
			<-release
			return llmtest.Text(answer)
		}
	}
	h.srv.ScriptFunc("TWIN-1", twin("twin one done"))
	h.srv.ScriptFunc("TWIN-2", twin("twin two done"))
	rt := newRuntime(t, h.config())
	evs, _, err := runAll(t, context.Background(), rt, "MAIN go")
	if err != nil {
		t.Fatal(err)
	}
	ids := taskIDs(evs)
	if len(ids) != 2 {
		t.Fatalf("tasks %v", ids)
	}
	arrived.Wait()
	close(release)
	// Both end before the main agent runs again: a task queues its
	// notification before it leaves the registry.
	for {
		ch := rt.bg.reg.Changed()
		if rt.bg.reg.Live() == 0 {
			break
		}
		<-ch
	}
	drained := drainNotifications(t, rt)
	reqs := h.srv.RequestsFor("MAIN")
	if len(reqs) != 3 {
		t.Fatalf("%d main requests, want 3 (both notifications in one)", len(reqs))
	}
	last := reqs[2]
	batch := last.Messages[len(last.Messages)-1]
	if len(batch.Content) != 2 {
		t.Fatalf("the last user message has %d blocks, want the two notifications", len(batch.Content))
	}
	var order []string
	for _, ev := range drained {
		if ev.Type == run.EventNotification {
			order = append(order, ev.Notification.TaskID)
		}
	}
	if len(order) != 2 {
		t.Fatalf("notification events %v", order)
	}
	for i, id := range order {
		if !strings.Contains(batch.Content[i].Text, "<task-id>"+id+"</task-id>") {
			t.Fatalf("block %d is not %s's notification: %s", i, id, batch.Content[i].Text)
		}
		if n := notesIn(last, id); n != 1 {
			t.Fatalf("%s notified %d times", id, n)
		}
	}
	contains(t, batch.Content[0].Text+batch.Content[1].Text, "twin one done")
	contains(t, batch.Content[0].Text+batch.Content[1].Text, "twin two done")
	if rt.PendingNotifications() || len(drainNotifications(t, rt)) != 0 || len(h.srv.RequestsFor("MAIN")) != 3 {
		t.Fatal("delivered twice")
	}
}

// TestBackgroundDenialReported: a background child cannot prompt (S-7.5):
// its Write is denied without asking the session's prompter, the denial
// is in the child's result, in the run's denials (marked background), and
// in the parent's notification, which names the call so it can be redone.
func TestBackgroundDenialReported(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	target := filepath.Join(h.dir, "bg.txt")
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", bgCall("WRITER: write it")), llmtest.Text("started"), llmtest.Text("will redo it"))
	h.srv.ScriptFunc("WRITER", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.ToolUse("Write", map[string]any{"file_path": target, "content": "from the background"})
		}
		if res := r.LastToolResults(); len(res) == 1 && res[0].IsError {
			return llmtest.Text("WRITE REFUSED: " + res[0].ResultText())
		}
		return llmtest.Text("wrote it")
	})
	rec := &allowAll{}
	cfg := h.config()
	cfg.Permissions = &Permissions{Mode: permission.ModeDefault, Prompter: rec,
		Rules: []permission.Rule{{Behavior: permission.Allow, Tool: "Agent"}}}
	rt := newRuntime(t, cfg)
	evs, _, err := runAll(t, context.Background(), rt, "MAIN go")
	if err != nil {
		t.Fatal(err)
	}
	id := taskIDs(evs)[0]
	evs = append(evs, drainNotifications(t, rt)...)

	if _, err := os.Stat(target); err == nil {
		t.Fatal("the background child wrote the file")
	}
	rec.mu.Lock()
	asked := len(rec.prompts)
	rec.mu.Unlock()
	if asked != 0 {
		t.Fatalf("the prompter was asked %d times from the background", asked)
	}
	// The child's own result says it was denied.
	writer := h.srv.RequestsFor("WRITER")
	res := writer[len(writer)-1].LastToolResults()
	if len(res) != 1 || !res[0].IsError {
		t.Fatalf("the child's Write result: %+v", res)
	}
	contains(t, res[0].ResultText(), "background")
	// The runs' denials: the child's is in the result of the run going on
	// when it was denied, or the next one, and in one only.
	var denials []permission.Denial
	for _, ev := range evs {
		if ev.Type == run.EventResult {
			denials = append(denials, ev.Result.PermissionDenials...)
		}
	}
	if len(denials) != 1 || denials[0].AgentID != id || denials[0].ToolName != "Write" || !denials[0].Background {
		t.Fatalf("denials %+v", denials)
	}
	// The parent's notification names the call.
	reqs := h.srv.RequestsFor("MAIN")
	last := reqs[len(reqs)-1]
	if notesIn(last, id) != 1 {
		t.Fatalf("notified %d times", notesIn(last, id))
	}
	note := last.Messages[len(last.Messages)-1].Text()
	contains(t, note, "<denied>")
	contains(t, note, "- Write ")
	contains(t, note, target)
	contains(t, note, "<status>completed</status>")
}

// TestNotificationToAnEndedParent: a foreground sub-agent starts a
// background child of its own, then fails; the child goes on, and when it
// ends its notification reaches the nearest live ancestor — the main
// agent — once, never the ended parent.
func TestNotificationToAnEndedParent(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var rt *Runtime
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("general-purpose", "MID: delegate")),
		llmtest.Text("mid failed"), llmtest.Text("got the orphan's report"))
	h.srv.Script("MID", llmtest.ToolUse("Agent", bgCall("ORPHAN: work")), llmtest.HTTPError(400, "invalid request"))
	h.srv.ScriptFunc("ORPHAN", func(*llmtest.Request) llmtest.Turn {
		// Answer only once the parent has ended.
		mid := taskByDescription(t, rt, "a task")
		for {
			ch := rt.bg.reg.Changed()
			if info, _ := rt.Task(mid); info.Status.Terminal() {
				break
			}
			<-ch
		}
		return llmtest.Text("orphan result")
	})
	rt = newRuntime(t, h.config())
	evs, _, err := runAll(t, context.Background(), rt, "MAIN go")
	if err != nil {
		t.Fatal(err)
	}
	evs = append(evs, drainNotifications(t, rt)...)
	mid, orphan := taskByDescription(t, rt, "a task"), taskByDescription(t, rt, "bg ORPH")
	if info, _ := rt.Task(mid); info.Status != task.Failed {
		t.Fatalf("mid %+v", info)
	}
	if info, _ := rt.Task(orphan); info.Status != task.Completed || info.Parent != mid {
		t.Fatalf("orphan %+v", info)
	}
	for _, r := range h.srv.RequestsFor("MID") {
		if notesIn(r, orphan) != 0 {
			t.Fatal("the ended parent was sent the notification")
		}
	}
	reqs := h.srv.RequestsFor("MAIN")
	last := reqs[len(reqs)-1]
	if notesIn(last, orphan) != 1 {
		t.Fatalf("main heard of the orphan %d times", notesIn(last, orphan))
	}
	contains(t, last.Messages[len(last.Messages)-1].Text(), "orphan result")
	var delivered int
	for _, ev := range evs {
		if ev.Type == run.EventNotification {
			delivered++
			if ev.AgentID != "" || ev.Notification.To != "main" || ev.Notification.TaskID != orphan {
				t.Fatalf("notification %+v to %q", ev.Notification, ev.AgentID)
			}
		}
	}
	if delivered != 1 || rt.RunningTasks() != 0 || rt.PendingNotifications() {
		t.Fatalf("%d notifications delivered; work left behind", delivered)
	}
}

// TestTaskOutputBlocks: TaskOutput with block waits for a running task to
// end and returns its output; with a timeout on a task that goes on, it
// returns the running status when the timeout passes.
func TestTaskOutputBlocks(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var rt *Runtime
	asked, hold := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(hold) })
	var quick, stuck string
	h.srv.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
		switch len(r.Messages) {
		case 1:
			return llmtest.ToolUses(llmtest.Call{Name: "Agent", Input: bgCall("QUICK: answer")}, llmtest.Call{Name: "Agent", Input: bgCall("STUCK: wait")})
		case 3:
			quick, stuck = taskByDescription(t, rt, "bg QUIC"), taskByDescription(t, rt, "bg STUC")
			close(asked) // QUICK answers only now: it runs when the call is made
			return llmtest.ToolUse("TaskOutput", map[string]any{"task_id": quick, "block": true, "timeout": 600000})
		case 5:
			return llmtest.ToolUse("TaskOutput", map[string]any{"task_id": stuck, "block": true, "timeout": 1})
		case 7:
			return llmtest.ToolUse("TaskStop", map[string]any{"task_id": stuck})
		}
		return llmtest.Text("ok")
	})
	h.srv.ScriptFunc("QUICK", func(*llmtest.Request) llmtest.Turn {
		<-asked
		return llmtest.Text("quick output")
	})
	h.srv.ScriptFunc("STUCK", func(*llmtest.Request) llmtest.Turn {
		<-hold
		return llmtest.Text("never read")
	})
	cfg := h.config()
	cfg.Background = BackgroundDefault // the task tools are offered
	rt = newRuntime(t, cfg)
	if _, _, err := runAll(t, context.Background(), rt, "MAIN go"); err != nil {
		t.Fatal(err)
	}
	reqs := h.srv.RequestsFor("MAIN")
	waited := reqs[2].LastToolResults()[0].ResultText()
	contains(t, waited, `"status":"completed"`)
	contains(t, waited, `"output":"quick output"`)
	timedOut := reqs[3].LastToolResults()[0].ResultText()
	contains(t, timedOut, `"status":"running"`)
	contains(t, timedOut, stuck)
	drainNotifications(t, rt)
	if info, _ := rt.Task(stuck); info.Status != task.Killed {
		t.Fatalf("stuck task %+v", info)
	}
}
