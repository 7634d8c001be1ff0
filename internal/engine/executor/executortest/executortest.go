// Package executortest is the conformance suite of the executor seam: every
// Executor (the local one, a remote one) runs it against a model scripted
// with llmtest, over real HTTP and SSE, and passes it before the engine
// starts children through it.
//
//	func TestExecutorConformance(t *testing.T) {
//		executortest.Run(t, func(t *testing.T) *executortest.Harness { ... })
//	}
//
// Each subtest gets its own Harness: an executor whose children talk to
// the harness's llmtest server, and whose root agent (the parent of the
// children the suite starts) collects the notifications of background
// children. The suite scripts the children by the text of their prompts
// and checks what the Executor and Handle documents promise: a child's
// report, one notification per background child, a stopped subtree that
// leaves nothing running, messages to a running and to a finished child,
// a crash that becomes a failed result, and events in order with the
// Agent call's tool use id.
package executortest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
)

// Harness is one executor under test and what the suite needs around it.
type Harness struct {
	// Executor is the executor under test.
	Executor executor.Executor
	// Model is the scripted model every child of Executor talks to: a
	// request is answered by the script whose key occurs in the first user
	// message (the child's prompt).
	Model *llmtest.Server
	// Request returns a valid request for a child of the harness's root
	// agent with the prompt, description, background flag and tool use id
	// of c: a general-purpose child that may use every tool (the Agent
	// tool included) without being asked, in the harness's working
	// directory. Everything else is the harness's to choose.
	Request func(t *testing.T, c Child) executor.SpawnRequest
	// Notifications returns the notifications queued so far for the root
	// agent (the parent of the suite's children), without delivering
	// them.
	Notifications func(t *testing.T) []task.Notification
	// Live returns how many agents of the executor are still running or
	// waiting for a slot.
	Live func(t *testing.T) int
	// PanicTool names a tool every child has whose call panics; the
	// panicking-tool subtest needs it and fails without it.
	PanicTool string
}

// Child is what the suite asks of a child.
type Child struct {
	Prompt      string
	Description string
	Background  bool
	ToolUseID   string
}

// Run runs the conformance suite; newHarness makes a fresh harness for
// each subtest (its cleanups registered on the subtest's t).
func Run(t *testing.T, newHarness func(t *testing.T) *Harness) {
	t.Helper()
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, h *Harness)
	}{
		{"SyncChildReturnsItsReport", syncChild},
		{"BackgroundChildNotifiesOnce", backgroundChild},
		{"StopEndsTheSubtree", stopSubtree},
		{"SendToRunningChild", sendRunning},
		{"SendToFinishedChild", sendFinished},
		{"ModelErrorIsAFailedResult", modelError},
		{"PanickingToolIsNoCrash", panickingTool},
		{"EventsInOrder", eventsInOrder},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, newHarness(t))
		})
	}
}

// start starts the child c and begins reading its events; events returns
// them once the sequence has ended.
func start(t *testing.T, h *Harness, c Child) (executor.SpawnRequest, executor.Handle, func() []run.Event) {
	t.Helper()
	req := h.Request(t, c)
	if req.AgentID == "" || req.ToolUseID != c.ToolUseID {
		t.Fatalf("the harness's request has agent id %q and tool use id %q (want one, and %q)", req.AgentID, req.ToolUseID, c.ToolUseID)
	}
	hd, err := h.Executor.Start(context.Background(), req)
	if err != nil {
		t.Fatalf("start %s: %v", req.AgentID, err)
	}
	var (
		wg     sync.WaitGroup
		evs    []run.Event
		evsErr error
	)
	wg.Go(func() {
		for ev, err := range hd.Events() {
			if err != nil {
				evsErr = err
				return
			}
			evs = append(evs, ev)
		}
	})
	t.Cleanup(func() { _ = hd.Stop(context.Background()); wg.Wait() })
	return req, hd, func() []run.Event {
		t.Helper()
		wg.Wait()
		if evsErr != nil {
			t.Fatalf("events of %s: %v", req.AgentID, evsErr)
		}
		return evs
	}
}

// wait waits for the child's result and checks what every result holds.
func wait(t *testing.T, req executor.SpawnRequest, hd executor.Handle) *run.SubagentResult {
	t.Helper()
	res := waitAny(t, req, hd)
	if res.ToolUseID != req.ToolUseID {
		t.Fatalf("result for call %q, want %q", res.ToolUseID, req.ToolUseID)
	}
	return res
}

// waitAny is wait for a run that a message may have continued: its
// result names the agent, and the call that continued it.
func waitAny(t *testing.T, req executor.SpawnRequest, hd executor.Handle) *run.SubagentResult {
	t.Helper()
	res, err := hd.Wait(context.Background())
	if err != nil {
		t.Fatalf("wait for %s: %v", req.AgentID, err)
	}
	if res == nil {
		t.Fatalf("wait for %s: no result and no error", req.AgentID)
	}
	if res.AgentID != req.AgentID {
		t.Fatalf("result of agent %q, want %q", res.AgentID, req.AgentID)
	}
	return res
}

// notesFor returns the root's notifications about id.
func notesFor(t *testing.T, h *Harness, id string) []task.Notification {
	t.Helper()
	var out []task.Notification
	for _, n := range h.Notifications(t) {
		if n.TaskID == id {
			out = append(out, n)
		}
	}
	return out
}

// noneLive checks that nothing of the executor runs any more.
func noneLive(t *testing.T, h *Harness) {
	t.Helper()
	if n := h.Live(t); n != 0 {
		t.Fatalf("%d agents still live", n)
	}
}

// blocker answers a script's requests from fn, and holds the request for
// which fn returns hold until release is called (or the test ends);
// entered is closed when that request arrived.
type blocker struct {
	entered chan struct{}
	release func()
}

func hold(t *testing.T, srv *llmtest.Server, key string, fn func(n int, r *llmtest.Request) (llmtest.Turn, bool)) *blocker {
	t.Helper()
	b := &blocker{entered: make(chan struct{})}
	released := make(chan struct{})
	var once sync.Once
	b.release = func() { once.Do(func() { close(released) }) }
	// Registered after the harness's: runs before its server closes, so a
	// held handler returns and the server's Close does not wait forever.
	t.Cleanup(b.release)
	var mu sync.Mutex
	n := 0
	srv.ScriptFunc(key, func(r *llmtest.Request) llmtest.Turn {
		mu.Lock()
		n++
		i := n
		mu.Unlock()
		turn, held := fn(i, r)
		if held {
			close(b.entered)
			<-released
		}
		return turn
	})
	return b
}

func syncChild(t *testing.T, h *Harness) {
	h.Model.Script("SYNC-CHILD", llmtest.Text("the report: 42 files"))
	req, hd, events := start(t, h, Child{Prompt: "SYNC-CHILD count the files", Description: "count files", ToolUseID: "toolu_sync_1"})
	res := wait(t, req, hd)
	if res.Status != task.Completed || res.Error != "" {
		t.Fatalf("status %s, error %q", res.Status, res.Error)
	}
	if res.Text != "the report: 42 files" || res.Turns != 1 {
		t.Fatalf("report %q after %d turns", res.Text, res.Turns)
	}
	if got := len(h.Model.RequestsFor("SYNC-CHILD")); got != 1 {
		t.Fatalf("%d model requests, want 1", got)
	}
	if notes := notesFor(t, h, req.AgentID); len(notes) != 0 {
		t.Fatalf("a foreground child notified: %+v", notes)
	}
	// A second Wait gives the same result.
	if again := wait(t, req, hd); again.Text != res.Text || again.Status != res.Status {
		t.Fatalf("second wait: %+v", again)
	}
	events()
	noneLive(t, h)
}

func backgroundChild(t *testing.T, h *Harness) {
	h.Model.Script("BG-CHILD", llmtest.Text("background work done"))
	req, hd, events := start(t, h, Child{Prompt: "BG-CHILD do the work", Description: "bg work", Background: true, ToolUseID: "toolu_bg_1"})
	res := wait(t, req, hd)
	if res.Status != task.Completed || res.Text != "background work done" {
		t.Fatalf("status %s, text %q, error %q", res.Status, res.Text, res.Error)
	}
	events()
	noneLive(t, h)
	notes := notesFor(t, h, req.AgentID)
	if len(notes) != 1 {
		t.Fatalf("%d notifications for the background child, want exactly 1: %+v", len(notes), notes)
	}
	n := notes[0]
	if n.Status != task.Completed || n.ToolUseID != req.ToolUseID {
		t.Fatalf("notification %+v", n)
	}
	if !strings.Contains(n.Text, "background work done") {
		t.Fatalf("the notification does not carry the report: %q", n.Text)
	}
	// Waiting again, and asking again, adds none.
	wait(t, req, hd)
	if notes := notesFor(t, h, req.AgentID); len(notes) != 1 {
		t.Fatalf("%d notifications after a second wait", len(notes))
	}
}

func stopSubtree(t *testing.T, h *Harness) {
	grand := map[string]any{"description": "grandchild", "prompt": "GRANDCHILD wait for the stop", "subagent_type": "general-purpose"}
	h.Model.Script("STOP-CHILD", llmtest.ToolUse("Agent", grand))
	b := hold(t, h.Model, "GRANDCHILD", func(n int, _ *llmtest.Request) (llmtest.Turn, bool) {
		return llmtest.Text("the grandchild should not get here"), n == 1
	})
	req, hd, events := start(t, h, Child{Prompt: "STOP-CHILD start a grandchild", Description: "stop me", ToolUseID: "toolu_stop_1"})
	<-b.entered // the grandchild is in its first model request
	if err := hd.Stop(context.Background()); err != nil {
		t.Fatalf("stop: %v", err)
	}
	// Stop returned: the whole subtree has ended.
	noneLive(t, h)
	res := wait(t, req, hd)
	if res.Status != task.Killed {
		t.Fatalf("stopped child: status %s, error %q", res.Status, res.Error)
	}
	b.release()
	evs := events()
	call := llmtest.ToolUseID("STOP-CHILD", 1)
	var grandID string
	grandEnd, childEnd := -1, -1
	for i, ev := range evs {
		switch {
		case ev.Type == run.EventTaskStarted && ev.AgentID != req.AgentID:
			grandID = ev.AgentID
			if ev.ParentToolUseID != call {
				t.Fatalf("the grandchild's start carries call %q, want the child's Agent call %q", ev.ParentToolUseID, call)
			}
		case ev.Type == run.EventTaskCompleted && ev.AgentID == grandID && grandID != "":
			grandEnd = i
			if ev.Subagent == nil || ev.Subagent.Status != task.Killed {
				t.Fatalf("the grandchild ended %+v", ev.Subagent)
			}
		case ev.Type == run.EventTaskCompleted && ev.AgentID == req.AgentID:
			childEnd = i
		}
	}
	if grandID == "" || grandEnd < 0 || childEnd < 0 {
		t.Fatalf("events of the stopped subtree lack a start or an end (grandchild %q at %d, child at %d): %s", grandID, grandEnd, childEnd, kinds(evs))
	}
	if grandEnd > childEnd {
		t.Fatalf("the child's end (event %d) came before its grandchild's (event %d)", childEnd, grandEnd)
	}
	if got := len(h.Model.RequestsFor("GRANDCHILD")); got != 1 {
		t.Fatalf("the stopped grandchild made %d requests", got)
	}
}

func sendRunning(t *testing.T, h *Harness) {
	const msg = "MAILBOX-NOTE: also count the tests"
	b := hold(t, h.Model, "LISTENER", func(n int, _ *llmtest.Request) (llmtest.Turn, bool) {
		if n == 1 {
			return llmtest.ToolUse("Read", map[string]string{"file_path": "/nonexistent/executortest/file.txt"}), true
		}
		return llmtest.Text("heard the note"), false
	})
	req, hd, events := start(t, h, Child{Prompt: "LISTENER work until told more", Description: "listener", ToolUseID: "toolu_send_1"})
	<-b.entered
	d, err := hd.Send(context.Background(), executor.Message{From: "main", Text: msg, Summary: "count tests"})
	if err != nil || d != executor.Queued {
		t.Fatalf("send to a running child: %q, %v", d, err)
	}
	b.release()
	res := wait(t, req, hd)
	if res.Status != task.Completed || res.Text != "heard the note" {
		t.Fatalf("status %s, text %q, error %q", res.Status, res.Text, res.Error)
	}
	reqs := h.Model.RequestsFor("LISTENER")
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if n := count(reqs[0], msg); n != 0 {
		t.Fatalf("the message was in the request made before it was sent")
	}
	if n := count(reqs[1], msg); n != 1 {
		t.Fatalf("the child's next request holds the message %d times, want once", n)
	}
	events()
}

func sendFinished(t *testing.T, h *Harness) {
	const msg = "LATE-NOTE: one more thing"
	h.Model.Script("FINISHED", llmtest.Text("first answer"), llmtest.Text("second answer"))
	req, hd, events := start(t, h, Child{Prompt: "FINISHED answer once", Description: "finished", ToolUseID: "toolu_fin_1"})
	if res := wait(t, req, hd); res.Status != task.Completed {
		t.Fatalf("status %s, error %q", res.Status, res.Error)
	}
	events()
	d, err := hd.Send(context.Background(), executor.Message{From: "main", Text: msg})
	if err != nil {
		var refused *executor.RefusedError
		if !errors.As(err, &refused) || refused.Reason == "" || refused.AgentID != req.AgentID {
			t.Fatalf("a message to a finished child failed without a refusal that says why: %v", err)
		}
		if d != "" {
			t.Fatalf("refused, yet delivered %q", d)
		}
		return
	}
	if d != executor.Resumed {
		t.Fatalf("a message to a finished child was %q, want resumed or a refusal", d)
	}
	res := waitAny(t, req, hd)
	if res.Status != task.Completed || res.Text != "second answer" {
		t.Fatalf("the continued child: status %s, text %q, error %q", res.Status, res.Text, res.Error)
	}
	reqs := h.Model.RequestsFor("FINISHED")
	if len(reqs) != 2 || count(reqs[1], msg) != 1 {
		t.Fatalf("%d requests; the continued one holds the message %d times", len(reqs), count(reqs[len(reqs)-1], msg))
	}
	noneLive(t, h)
}

func modelError(t *testing.T, h *Harness) {
	for _, bg := range []bool{false, true} {
		key := fmt.Sprintf("BROKEN-%v", bg)
		h.Model.Script(key, llmtest.HTTPError(400, "executortest: this request is refused"))
		req, hd, events := start(t, h, Child{Prompt: key + " try", Description: "broken", Background: bg,
			ToolUseID: fmt.Sprintf("toolu_broken_%v", bg)})
		res := wait(t, req, hd)
		if res.Status != task.Failed || res.Error == "" {
			t.Fatalf("background %v: a child whose model fails ended %s (error %q), want failed with the error", bg, res.Status, res.Error)
		}
		evs := events()
		if len(evs) == 0 || evs[len(evs)-1].Type != run.EventTaskCompleted || evs[len(evs)-1].Subagent.Status != task.Failed {
			t.Fatalf("background %v: events end %s", bg, kinds(evs))
		}
		if bg {
			notes := notesFor(t, h, req.AgentID)
			if len(notes) != 1 || notes[0].Status != task.Failed {
				t.Fatalf("the failed background child's notifications: %+v", notes)
			}
		}
	}
	noneLive(t, h)
}

func panickingTool(t *testing.T, h *Harness) {
	if h.PanicTool == "" {
		t.Fatal("the harness names no PanicTool")
	}
	h.Model.Script("PANICKY", llmtest.ToolUse(h.PanicTool, map[string]any{}), llmtest.Text("went on after the panic"))
	req, hd, events := start(t, h, Child{Prompt: "PANICKY call the tool", Description: "panicky", ToolUseID: "toolu_panic_1"})
	res := wait(t, req, hd)
	// The panic is the tool's: the model reads an error result and goes
	// on; the child neither hangs nor takes its executor down.
	if res.Status != task.Completed || res.Text != "went on after the panic" {
		t.Fatalf("status %s, text %q, error %q", res.Status, res.Text, res.Error)
	}
	reqs := h.Model.RequestsFor("PANICKY")
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	results := reqs[1].LastToolResults()
	if len(results) != 1 || !results[0].IsError {
		t.Fatalf("the panicking call's result: %+v", results)
	}
	events()
	noneLive(t, h)
}

func eventsInOrder(t *testing.T, h *Harness) {
	h.Model.Script("ORDERED", llmtest.ToolUse("Read", map[string]string{"file_path": "/nonexistent/executortest/ordered.txt"}),
		llmtest.Text("ordered and done"))
	req, hd, events := start(t, h, Child{Prompt: "ORDERED read then answer", Description: "ordered", ToolUseID: "toolu_order_1"})
	res := wait(t, req, hd)
	if res.Status != task.Completed {
		t.Fatalf("status %s, error %q", res.Status, res.Error)
	}
	evs := events()
	for i, ev := range evs {
		if ev.AgentID != req.AgentID || ev.ParentToolUseID != req.ToolUseID {
			t.Fatalf("event %d (%s) of agent %q for call %q, want %q and %q", i, ev.Type, ev.AgentID, ev.ParentToolUseID, req.AgentID, req.ToolUseID)
		}
	}
	// The child's life in order; other events (text, progress) may come
	// between these.
	want := []run.EventType{run.EventTaskStarted, run.EventAssistant, run.EventToolStart, run.EventToolEnd, run.EventUser,
		run.EventAssistant, run.EventTaskCompleted}
	var got []run.EventType
	for _, ev := range evs {
		if slices.Contains(want, ev.Type) {
			got = append(got, ev.Type)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("events in the order\n%v\nwant\n%v", got, want)
	}
	if evs[0].Type != run.EventTaskStarted || evs[len(evs)-1].Type != run.EventTaskCompleted {
		t.Fatalf("the first and last events are %s and %s", evs[0].Type, evs[len(evs)-1].Type)
	}
	last := evs[len(evs)-1].Subagent
	if last == nil || last.Status != task.Completed || last.Text != res.Text {
		t.Fatalf("the completion event carries %+v, the result %+v", last, res)
	}
	var toolStart, toolEnd *llm.Block
	for _, ev := range evs {
		switch ev.Type {
		case run.EventToolStart:
			toolStart = ev.Call
		case run.EventToolEnd:
			toolEnd = ev.Call
		}
	}
	if toolStart == nil || toolEnd == nil || toolStart.ID != toolEnd.ID || toolStart.ID != llmtest.ToolUseID("ORDERED", 1) {
		t.Fatalf("tool start %+v and end %+v", toolStart, toolEnd)
	}
}

// count counts s in the text of every message of r.
func count(r *llmtest.Request, s string) int {
	n := 0
	for _, m := range r.Messages {
		for _, b := range m.Content {
			n += strings.Count(b.Text, s)
			for _, c := range b.Content {
				n += strings.Count(c.Text, s)
			}
		}
	}
	return n
}

// kinds lists the types of evs, for messages.
func kinds(evs []run.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		fmt.Fprintf(&b, "%s(%s) ", ev.Type, ev.AgentID)
	}
	return b.String()
}
