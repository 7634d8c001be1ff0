package engine

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
)

func bgCall(prompt string) map[string]any {
	return map[string]any{"description": "bg " + prompt[:4], "prompt": prompt, "subagent_type": "general-purpose", "run_in_background": true}
}

// drainNotifications runs the main agent on notifications until no task
// runs and nothing waits, and returns every event.
func drainNotifications(t *testing.T, rt *Runtime) []run.Event {
	t.Helper()
	var evs []run.Event
	for rt.RunningTasks() > 0 || rt.PendingNotifications() {
		for ev, err := range rt.RunNotifications(context.Background()) {
			if err != nil {
				t.Fatal(err)
			}
			evs = append(evs, ev)
		}
	}
	return evs
}

// notesIn counts the task notifications for id in every message of req.
func notesIn(req *llmtest.Request, id string) int {
	n := 0
	for _, m := range req.Messages {
		for _, b := range m.Content {
			if b.Type == llm.BlockText {
				n += strings.Count(b.Text, "<task-id>"+id+"</task-id>")
			}
		}
	}
	return n
}

// taskIDs returns the ids of the sub-agents started, in event order.
func taskIDs(evs []run.Event) []string {
	var ids []string
	for _, ev := range evs {
		if ev.Type == run.EventTaskStarted {
			ids = append(ids, ev.AgentID)
		}
	}
	return ids
}

func TestBackgroundChildrenNotifyOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Script("MAIN", llmtest.ToolUses(
		llmtest.Call{Name: "Agent", Input: bgCall("BG-1: count a")},
		llmtest.Call{Name: "Agent", Input: bgCall("BG-2: count b")},
	), llmtest.Text("started two"), llmtest.Text("got them"), llmtest.Text("got the rest"))
	h.srv.Script("BG-1", llmtest.Text("done 1"))
	h.srv.Script("BG-2", llmtest.Text("done 2"))
	rt := newRuntime(t, h.config())
	evs, res, err := runAll(t, context.Background(), rt, "MAIN go")
	if err != nil || res == nil {
		t.Fatal(err)
	}
	for _, r := range h.toolResults("MAIN") {
		contains(t, r, "async_launched")
		contains(t, r, "Do not poll")
	}
	ids := taskIDs(evs)
	evs = append(evs, drainNotifications(t, rt)...)
	ids = append(ids, taskIDs(evs[len(ids):])...)
	reqs := h.srv.RequestsFor("MAIN")
	last := reqs[len(reqs)-1]
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		if n := notesIn(last, id); n != 1 {
			t.Fatalf("task %s notified %d times in the conversation", id, n)
		}
	}
	if len(seen) != 2 {
		t.Fatalf("tasks %v", ids)
	}
	var delivered int
	for _, ev := range evs {
		if ev.Type == run.EventNotification {
			delivered++
			if ev.Notification.Status != task.Completed || ev.AgentID != "" {
				t.Fatalf("notification %+v", ev.Notification)
			}
		}
	}
	if delivered != 2 {
		t.Fatalf("%d notification events", delivered)
	}
	contains(t, last.Messages[len(last.Messages)-1].Text()+lastTexts(last), "done ")
	for _, info := range rt.Tasks() {
		if info.Status != task.Completed || !info.Background {
			t.Fatalf("task %+v", info)
		}
	}
	if c := rt.gate.Counts(); c.Running != 0 || c.Queued != 0 {
		t.Fatalf("gate %+v", c)
	}
}

// lastTexts joins the text of every message of req.
func lastTexts(req *llmtest.Request) string {
	var b strings.Builder
	for _, m := range req.Messages {
		b.WriteString(m.Text())
	}
	return b.String()
}

func TestNotificationJoinsToolResultsMidTurn(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var rt *Runtime
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", bgCall("BG-1: quick")))
	h.srv.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
		switch len(r.Messages) {
		case 3:
			// The child ends while the parent is mid-turn.
			for {
				ch := rt.bg.main.changed()
				if rt.bg.main.pending() {
					break
				}
				<-ch
			}
			return llmtest.ToolUse("Glob", map[string]any{"pattern": "*.none"})
		default:
			return llmtest.Text("seen")
		}
	})
	h.srv.Script("BG-1", llmtest.Text("quick done"))
	rt = newRuntime(t, h.config())
	if _, _, err := runAll(t, context.Background(), rt, "MAIN go"); err != nil {
		t.Fatal(err)
	}
	reqs := h.srv.RequestsFor("MAIN")
	if len(reqs) != 3 {
		t.Fatalf("%d main requests", len(reqs))
	}
	last := reqs[2].Messages[len(reqs[2].Messages)-1]
	if len(last.Content) != 2 || last.Content[0].Type != llm.BlockToolResult || !strings.Contains(last.Content[1].Text, "quick done") {
		t.Fatalf("the notification does not follow the tool result: %+v", last.Content)
	}
	if rt.PendingNotifications() || len(drainNotifications(t, rt)) != 0 {
		t.Fatal("delivered twice")
	}
}

func TestSubagentWaitsForItsBackgroundChildren(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("general-purpose", "MID: delegate")), llmtest.Text("all done"))
	// The leaf answers only once MID has asked for its second turn: a leaf
	// done sooner is a notification joined to MID's tool result, and MID
	// would have nothing to wait for (TestNotificationJoinsToolResultsMidTurn).
	midAsked := make(chan struct{})
	h.srv.ScriptFunc("MID", func(r *llmtest.Request) llmtest.Turn {
		switch len(r.Messages) {
		case 1:
			return llmtest.ToolUse("Agent", bgCall("LEAF: work"))
		case 3:
			close(midAsked)
			return llmtest.Text("mid waiting")
		default:
			return llmtest.Text("mid done after leaf")
		}
	})
	h.srv.ScriptFunc("LEAF", func(*llmtest.Request) llmtest.Turn {
		select {
		case <-midAsked:
		case <-time.After(time.Minute): // only bounds a failing test
		}
		return llmtest.Text("leaf result")
	})
	rt := newRuntime(t, h.config())
	evs, res, err := runAll(t, context.Background(), rt, "MAIN go")
	if err != nil || res == nil {
		t.Fatal(err)
	}
	contains(t, h.toolResults("MAIN")[0], "mid done after leaf")
	mid := h.srv.RequestsFor("MID")
	if len(mid) != 3 || !strings.Contains(mid[2].LastUserText(), "leaf result") {
		t.Fatalf("MID did not get its child's notification: %d requests", len(mid))
	}
	// The leaf ended before its parent did.
	order := map[string]int{}
	for i, ev := range evs {
		if ev.Type == run.EventTaskCompleted {
			order[ev.Subagent.AgentType+fmt.Sprint(ev.Subagent.Receipt.Depth)] = i
		}
	}
	if order["general-purpose2"] == 0 || order["general-purpose2"] > order["general-purpose1"] {
		t.Fatalf("completion order %v", order)
	}
	if rt.RunningTasks() != 0 || rt.PendingNotifications() {
		t.Fatal("left work behind")
	}
}

func TestBackgroundModes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		mode BackgroundMode
		call *bool
		def  bool
		want bool
	}{
		{BackgroundOn, nil, false, false},
		{BackgroundOn, new(true), false, true},
		{BackgroundOn, nil, true, true},
		{BackgroundOn, new(false), true, false},
		{BackgroundDefault, nil, false, true},
		{BackgroundDefault, new(false), false, false},
		{BackgroundForced, new(false), false, true},
		{BackgroundOff, new(true), true, false},
	} {
		rt := &Runtime{cfg: Config{Background: c.mode}}
		if got := toolboxOf(rt).wantsBackground(bgAsk{Call: c.call, Definition: c.def}); got != c.want {
			t.Errorf("mode %q call %v def %v: %v, want %v", c.mode, c.call, c.def, got, c.want)
		}
	}
	if !toolboxOf(&Runtime{}).wantsBackground(bgAsk{Fork: true}) || toolboxOf(&Runtime{cfg: Config{Background: BackgroundOff}}).wantsBackground(bgAsk{Fork: true}) {
		t.Error("fork")
	}
}

func TestBackgroundDefaultAndOff(t *testing.T) {
	t.Parallel()
	for _, mode := range []BackgroundMode{BackgroundDefault, BackgroundOff} {
		h := newHarness(t)
		call := agentCall("general-purpose", "KID: x")
		call["run_in_background"] = mode == BackgroundOff // asked, but off wins
		if mode == BackgroundDefault {
			delete(call, "run_in_background")
		}
		h.srv.Script("MAIN", llmtest.ToolUse("Agent", call), llmtest.Text("ok"), llmtest.Text("ok again"))
		h.srv.Script("KID", llmtest.Text("kid report"))
		cfg := h.config()
		cfg.Background = mode
		rt := newRuntime(t, cfg)
		if _, _, err := runAll(t, context.Background(), rt, "MAIN go"); err != nil {
			t.Fatal(err)
		}
		got := h.toolResults("MAIN")[0]
		if bg := strings.Contains(got, "async_launched"); bg != (mode == BackgroundDefault) {
			t.Fatalf("mode %s: %s", mode, got)
		}
		drainNotifications(t, rt)
	}
}

func TestStopBackgroundTaskNotifiesKilledOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	arrived, release := make(chan struct{}), make(chan struct{})
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", bgCall("SLOW: wait")), llmtest.Text("started"), llmtest.Text("noted the stop"))
	h.srv.ScriptFunc("SLOW", func(*llmtest.Request) llmtest.Turn {
		close(arrived)
		<-release
		return llmtest.Text("too late")
	})
	rt := newRuntime(t, h.config())
	evs, _, err := runAll(t, context.Background(), rt, "MAIN go")
	if err != nil {
		t.Fatal(err)
	}
	id := taskIDs(evs)[0]
	<-arrived
	if err := rt.Stop(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := rt.Stop(context.Background(), id); err == nil {
		t.Fatal("stopping an ended task succeeded")
	}
	drainNotifications(t, rt)
	reqs := h.srv.RequestsFor("MAIN")
	last := reqs[len(reqs)-1]
	if notesIn(last, id) != 1 || !strings.Contains(lastTexts(last), "<status>killed</status>") {
		t.Fatalf("killed notification missing: %s", lastTexts(last))
	}
	if info, _ := rt.Task(id); info.Status != task.Killed {
		t.Fatalf("status %s", info.Status)
	}
}

func TestMoveForegroundChildToBackground(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	arrived, release := make(chan struct{}), make(chan struct{})
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("general-purpose", "FG: long job")), llmtest.Text("moved on"), llmtest.Text("got the report"))
	h.srv.ScriptFunc("FG", func(*llmtest.Request) llmtest.Turn {
		close(arrived)
		<-release
		return llmtest.Text("long job finished")
	})
	rt := newRuntime(t, h.config())
	var evs []run.Event
	for ev, err := range rt.Run(context.Background(), "MAIN go") {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
		if ev.Type == run.EventTaskStarted {
			<-arrived
			if err := rt.Background(context.Background(), ev.AgentID); err != nil {
				t.Fatal(err)
			}
			if err := rt.Background(context.Background(), ev.AgentID); err == nil {
				t.Fatal("moved twice")
			}
		}
	}
	contains(t, h.toolResults("MAIN")[0], "moved to the background")
	close(release)
	drainNotifications(t, rt)
	reqs := h.srv.RequestsFor("MAIN")
	contains(t, lastTexts(reqs[len(reqs)-1]), "long job finished")
	if err := rt.Background(context.Background(), "a0000000000000000"); err == nil {
		t.Fatal("unknown agent moved")
	}
}

func TestTaskToolsStopReadAndMessage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	arrived, release := make(chan struct{}), make(chan struct{})
	idRe := regexp.MustCompile(`agent_id: (a[0-9a-f]{16})`)
	var id string
	h.srv.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
		switch len(r.Messages) {
		case 1:
			return llmtest.ToolUse("Agent", bgCall("SLOW: wait"))
		case 3:
			id = idRe.FindStringSubmatch(r.Messages[2].Content[0].ResultText())[1]
			<-arrived
			return llmtest.ToolUses(
				llmtest.Call{Name: "SendMessage", Input: map[string]any{"to": "nobody", "message": "hi"}},
				llmtest.Call{Name: "TaskOutput", Input: map[string]any{"task_id": id, "block": false}},
			)
		case 5:
			return llmtest.ToolUse("TaskStop", map[string]any{"task_id": id})
		}
		return llmtest.Text("done")
	})
	h.srv.ScriptFunc("SLOW", func(*llmtest.Request) llmtest.Turn {
		close(arrived)
		<-release
		return llmtest.Text("too late")
	})
	cfg := h.config()
	cfg.Background = BackgroundDefault
	rt := newRuntime(t, cfg)
	if _, _, err := runAll(t, context.Background(), rt, "MAIN go"); err != nil {
		t.Fatal(err)
	}
	close(release)
	reqs := h.srv.RequestsFor("MAIN")
	third := reqs[2].LastToolResults()
	contains(t, third[0].ResultText(), "Known agents: main, "+id)
	contains(t, third[1].ResultText(), `"status":"running"`)
	contains(t, reqs[3].LastToolResults()[0].ResultText(), "Stopped task "+id)
	drainNotifications(t, rt)
	if info, _ := rt.Task(id); info.Status != task.Killed {
		t.Fatalf("status %s", info.Status)
	}
}
