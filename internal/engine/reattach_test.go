package engine

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/transcript"
)

// errLauncherGone is what a dead launcher's handles say.
var errLauncherGone = errors.New("the launcher that held this handle is gone")

// attachExecutor is the stand-in remote executor with Attach: the
// "worker" keeps every child it was given under the request's id, and
// crash makes the launcher die as kill -9 would — its handles watch,
// stop and wait for nothing any more, its session's journals take no
// more lines — while the children go on running on the worker.
type attachExecutor struct {
	*workerExecutor

	amu      sync.Mutex
	runs     map[string]executor.Handle // the worker's children, by request id
	gone     chan struct{}              // closed when the current launcher dies
	attached []string                   // the ids Attach was asked for
	refuse   bool                       // a dead launcher starts nothing
}

func newAttachExecutor(t *testing.T) *attachExecutor {
	return &attachExecutor{workerExecutor: newWorkerExecutor(t), runs: map[string]executor.Handle{}, gone: make(chan struct{})}
}

func (x *attachExecutor) Start(ctx context.Context, req executor.SpawnRequest) (executor.Handle, error) {
	x.amu.Lock()
	refuse := x.refuse
	x.amu.Unlock()
	if refuse {
		return nil, errLauncherGone
	}
	hd, err := x.workerExecutor.Start(ctx, req)
	if err != nil {
		return nil, err
	}
	x.amu.Lock()
	defer x.amu.Unlock()
	x.runs[req.AgentID] = hd
	return &launcherHandle{hd: hd, gone: x.gone}, nil
}

func (x *attachExecutor) Attach(ctx context.Context, req executor.SpawnRequest) (executor.Handle, error) {
	x.amu.Lock()
	defer x.amu.Unlock()
	x.attached = append(x.attached, req.AgentID)
	hd, ok := x.runs[req.AgentID]
	if !ok {
		return nil, fmt.Errorf("%w: workflow not found for ID: %s", executor.ErrUnknownChild, req.AgentID)
	}
	return &launcherHandle{hd: hd, gone: x.gone}, nil
}

// crash kills the launcher rt runs in: its handles go dead and its task
// and mailbox journals are closed, so nothing it does after this point
// reaches the session's record (a killed process writes nothing).
func (x *attachExecutor) crash(t *testing.T, rt *Runtime) {
	t.Helper()
	if err := rt.bg.taskJournal().Close(); err != nil {
		t.Fatal(err)
	}
	if err := rt.bg.mailboxes().Close(); err != nil {
		t.Fatal(err)
	}
	x.amu.Lock()
	close(x.gone)
	x.gone = make(chan struct{})
	x.refuse = true
	x.amu.Unlock()
	// What the dead runtime still does (ending its tasks as lost, a
	// queued one's Start refused) reaches neither the worker nor the
	// record; once it has nothing running, a new launcher may start.
	for {
		ch := rt.bg.reg.Changed()
		if rt.RunningTasks() == 0 {
			break
		}
		<-ch
	}
	x.amu.Lock()
	x.refuse = false
	x.amu.Unlock()
}

// forget drops a child from the executor, as a workflow removed from the
// server.
func (x *attachExecutor) forget(id string) {
	x.amu.Lock()
	defer x.amu.Unlock()
	delete(x.runs, id)
}

func (x *attachExecutor) attachedIDs() []string {
	x.amu.Lock()
	defer x.amu.Unlock()
	return append([]string(nil), x.attached...)
}

// worker returns the worker's own handle on the child of request id.
func (x *attachExecutor) worker(id string) executor.Handle {
	x.amu.Lock()
	defer x.amu.Unlock()
	return x.runs[id]
}

// launcherHandle is a launcher's handle on a worker's child; it dies with
// its launcher (gone).
type launcherHandle struct {
	hd   executor.Handle
	gone chan struct{}
}

func (h *launcherHandle) Events() iter.Seq2[run.Event, error] {
	return func(yield func(run.Event, error) bool) {
		type item struct {
			ev  run.Event
			err error
		}
		ch, done := make(chan item), make(chan struct{})
		defer close(done)
		go func() {
			defer close(ch)
			for ev, err := range h.hd.Events() {
				select {
				case ch <- item{ev, err}:
				case <-done:
					return
				}
			}
		}()
		for {
			select {
			case it, ok := <-ch:
				if !ok || !yield(it.ev, it.err) {
					return
				}
			case <-h.gone:
				yield(run.Event{}, errLauncherGone)
				return
			}
		}
	}
}

func (h *launcherHandle) dead() bool {
	select {
	case <-h.gone:
		return true
	default:
		return false
	}
}

func (h *launcherHandle) Send(ctx context.Context, m executor.Message) (executor.Delivery, error) {
	if h.dead() {
		return "", errLauncherGone
	}
	return h.hd.Send(ctx, m)
}

func (h *launcherHandle) Stop(ctx context.Context) error {
	if h.dead() {
		return errLauncherGone // it stops nothing: the child runs on
	}
	return h.hd.Stop(ctx)
}

func (h *launcherHandle) Wait(ctx context.Context) (*run.SubagentResult, error) {
	type waited struct {
		res *run.SubagentResult
		err error
	}
	ch := make(chan waited, 1)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		res, err := h.hd.Wait(wctx)
		ch <- waited{res, err}
	}()
	select {
	case w := <-ch:
		return w.res, w.err
	case <-h.gone:
		return nil, errLauncherGone
	}
}

// TestResumeReattachesRemoteAgents: a launcher starts four remote agents
// and dies (kill -9: its handles and journals go dead) while they run on
// the worker. One ends while no launcher watches, one's run is removed
// from the executor. The session resumed re-attaches to each, starting
// none again: the one that ended is reported at once, the one that is
// gone fails saying so, the running ones are live tasks the run waits for
// — one finishes, one is stopped with TaskStop, which stops it on the
// worker. Every agent's notification reaches the main agent exactly once
// across the two processes, and a second resume reports and attaches
// nothing.
func TestResumeReattachesRemoteAgents(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	x := newAttachExecutor(t)
	quickRelease, slowRelease, goneRelease := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var once sync.Once
	releaseAll := func() {
		once.Do(func() {
			for _, c := range []chan struct{}{quickRelease, slowRelease, goneRelease} {
				select {
				case <-c:
				default:
					close(c)
				}
			}
		})
	}
	t.Cleanup(releaseAll)
	blocked := func(release chan struct{}, answer string) func(*llmtest.Request) llmtest.Turn {
		return func(*llmtest.Request) llmtest.Turn {
			<-release
			return llmtest.Text(answer)
		}
	}
	x.w.Model.ScriptFunc("FAR-QUICK", blocked(quickRelease, "QUICK-DONE"))
	x.w.Model.ScriptFunc("FAR-SLOW", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 { // a tool call before the launcher dies
			return llmtest.ToolUse("Bash", map[string]any{"command": "echo slow"})
		}
		return blocked(slowRelease, "SLOW-DONE")(r)
	})
	x.w.Model.ScriptFunc("FAR-GONE", blocked(goneRelease, "GONE-DONE"))
	x.w.Model.Script("FAR-STOP", llmtest.ToolUse("Bash", map[string]any{"command": "sleep 600"}), llmtest.Text("never"))
	agentCall := func(d string) llmtest.Call {
		return llmtest.Call{Name: "Agent", Input: map[string]any{"description": d, "prompt": "FAR-" + strings.ToUpper(d) + " work"}}
	}
	h.srv.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.ToolUses(agentCall("quick"), agentCall("slow"), agentCall("gone"), agentCall("stop"))
		}
		return llmtest.Text("main ok")
	})
	cfg := h.config()
	cfg.Remote = Remote{Executor: x, All: true, PickupWait: time.Hour}
	rt1 := newRuntime(t, cfg)
	if _, _, err := runAll(t, context.Background(), rt1, "MAIN go"); err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, d := range []string{"quick", "slow", "gone", "stop"} {
		ids[d] = taskByDescription(t, rt1, d)
	}
	for range 4 {
		<-x.started // every child runs on the worker
	}
	for len(x.w.Model.RequestsFor("FAR-SLOW")) < 2 {
		// slow's tool call is done: its second request is on its way
		time.Sleep(time.Millisecond)
	}
	x.crash(t, rt1)
	// While no launcher watches: the quick one ends, the gone one's run
	// is removed.
	close(quickRelease)
	if res, err := x.worker(ids["quick"]).Wait(context.Background()); err != nil || res.Status != task.Completed {
		t.Fatalf("the quick agent on the worker: %+v, %v", res, err)
	}
	x.forget(ids["gone"])
	close(goneRelease)

	resume := func(rt *Runtime, prompt string) *Runtime {
		t.Helper()
		entries, err := transcript.ReadFile(rt.TranscriptPath())
		if err != nil {
			t.Fatal(err)
		}
		next := cfg
		next.SessionID, next.History = rt.SessionID(), transcript.Messages(entries)
		rt2 := newRuntime(t, next)
		if _, _, err := runAll(t, context.Background(), rt2, prompt); err != nil {
			t.Fatal(err)
		}
		return rt2
	}
	before := len(h.srv.RequestsFor("MAIN"))
	rt2 := resume(rt1, "MAIN again")
	if got := x.attachedIDs(); len(got) != 4 {
		t.Fatalf("attached %v, want the four remote agents", got)
	}
	// The running ones are live tasks of the resumed session.
	for _, d := range []string{"slow", "stop"} {
		info, ok := rt2.Task(ids[d])
		if !ok || info.Status.Terminal() || !info.Background || !info.Remote || info.Description != d {
			t.Fatalf("re-attached task %s: %+v (known %v)", d, info, ok)
		}
	}
	// The running one's progress counts what it did before the launcher
	// died (its events from the first on).
	for {
		ch := rt2.bg.reg.Changed()
		if info, _ := rt2.Task(ids["slow"]); info.Progress.ToolUses == 1 && info.Progress.LastTool == "Bash" {
			break
		}
		<-ch
	}
	waitTask(rt2, ids["quick"])
	if text, ok := (taskCaller{a: &agent{run: &runState{rt: rt2}}}).FinalText(ids["quick"]); !ok || text != "QUICK-DONE" {
		t.Fatalf("TaskOutput of the re-attached agent: %q, %v", text, ok)
	}
	if _, err := rt2.bg.reg.Stop(ids["stop"]); err != nil {
		t.Fatal(err)
	}
	waitTask(rt2, ids["stop"])
	if res, err := x.worker(ids["stop"]).Wait(context.Background()); err != nil || res.Status != task.Killed {
		t.Fatalf("TaskStop did not stop the re-attached agent on the worker: %+v, %v", res, err)
	}
	close(slowRelease)
	drainNotifications(t, rt2)
	if n := x.w.Live(t); n != 0 {
		t.Fatalf("%d agents still run on the worker", n)
	}
	want := map[string]task.Status{"quick": task.Completed, "slow": task.Completed, "gone": task.Failed, "stop": task.Killed}
	for d, st := range want {
		info, ok := rt2.Task(ids[d])
		if !ok || info.Status != st {
			t.Fatalf("task %s: %+v, want %s", d, info, st)
		}
	}
	// Each agent was started once on the worker: its model heard from it
	// once per turn (the stopped one: its one answer, the sleep).
	for key, want := range map[string]int{"FAR-QUICK": 1, "FAR-SLOW": 2, "FAR-STOP": 1} {
		if n := len(x.w.Model.RequestsFor(key)); n != want {
			t.Fatalf("%s reached the worker's model %d times, want %d", key, n, want)
		}
	}
	reqs := h.srv.RequestsFor("MAIN")
	if len(reqs) <= before {
		t.Fatal("the resumed session made no request")
	}
	last := reqs[len(reqs)-1]
	for d, id := range ids {
		if n := notesIn(last, id); n != 1 {
			t.Fatalf("the main agent read %d notifications of %s (%s), want 1", n, d, id)
		}
	}
	texts := lastTexts(last)
	contains(t, texts, "QUICK-DONE")
	contains(t, texts, "SLOW-DONE")
	contains(t, texts, "could not re-attach")
	if strings.Contains(texts, "interrupted when the session stopped") {
		t.Fatal("a remote agent was reported interrupted")
	}
	notes := journaledNotes(t, rt2.bg.journalPath())
	per := map[string]int{}
	for _, n := range notes {
		per[n.TaskID]++
	}
	for d, id := range ids {
		if per[id] != 1 {
			t.Fatalf("%s was journaled %d times: %+v", d, per[id], notes)
		}
	}

	// A second resume: nothing to re-attach, nothing reported again.
	before = len(h.srv.RequestsFor("MAIN"))
	rt3 := resume(rt2, "MAIN third")
	if got := x.attachedIDs(); len(got) != 4 {
		t.Fatalf("the second resume attached again: %v", got)
	}
	if rt3.RunningTasks() != 0 || rt3.PendingNotifications() {
		t.Fatalf("the second resume has %d tasks running, notifications pending %v", rt3.RunningTasks(), rt3.PendingNotifications())
	}
	first := h.srv.RequestsFor("MAIN")[before]
	for d, id := range ids {
		if n := notesIn(first, id); n != 1 {
			t.Fatalf("after the second resume %s is %d times in the conversation, want once (in its history)", d, n)
		}
	}
}

// A session resumed without a remote executor that can re-attach (no
// remote.temporal settings, or an executor without Attach) ends each
// remote agent the dead launcher left with one failure notification that
// says why, once: a second resume reports nothing.
func TestResumeWithoutAttacherReportsOnce(t *testing.T) {
	t.Parallel()
	for name, ex := range map[string]func(*attachExecutor) executor.Executor{
		"no executor":      func(*attachExecutor) executor.Executor { return nil },
		"cannot re-attach": func(x *attachExecutor) executor.Executor { return x.workerExecutor },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			x := newAttachExecutor(t)
			release := make(chan struct{})
			t.Cleanup(func() { close(release) })
			x.w.Model.ScriptFunc("FAR-LEFT", func(*llmtest.Request) llmtest.Turn {
				<-release
				return llmtest.Text("LEFT-DONE")
			})
			h.srv.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
				if len(r.Messages) == 1 {
					return llmtest.ToolUse("Agent", map[string]any{"description": "left", "prompt": "FAR-LEFT work", "isolation": "remote"})
				}
				return llmtest.Text("main ok")
			})
			cfg := h.config()
			cfg.Remote = Remote{Executor: x, PickupWait: time.Hour}
			rt1 := newRuntime(t, cfg)
			if _, _, err := runAll(t, context.Background(), rt1, "MAIN go"); err != nil {
				t.Fatal(err)
			}
			id := taskByDescription(t, rt1, "left")
			<-x.started
			x.crash(t, rt1)
			next := cfg
			next.Remote = Remote{Executor: ex(x)}
			resume := func(rt *Runtime, prompt string) *Runtime {
				t.Helper()
				entries, err := transcript.ReadFile(rt.TranscriptPath())
				if err != nil {
					t.Fatal(err)
				}
				n := next
				n.SessionID, n.History = rt.SessionID(), transcript.Messages(entries)
				rt2 := newRuntime(t, n)
				if _, _, err := runAll(t, context.Background(), rt2, prompt); err != nil {
					t.Fatal(err)
				}
				drainNotifications(t, rt2)
				return rt2
			}
			rt2 := resume(rt1, "MAIN again")
			if info, ok := rt2.Task(id); !ok || info.Status != task.Failed {
				t.Fatalf("task %+v (known %v), want failed", info, ok)
			}
			reqs := h.srv.RequestsFor("MAIN")
			last := reqs[len(reqs)-1]
			if n := notesIn(last, id); n != 1 {
				t.Fatalf("%d notifications of the agent, want 1", n)
			}
			contains(t, lastTexts(last), "could not re-attach")
			contains(t, lastTexts(last), "remote.temporal")
			if got := x.attachedIDs(); len(got) != 0 {
				t.Fatalf("attached %v", got)
			}
			before := len(h.srv.RequestsFor("MAIN"))
			resume(rt2, "MAIN third")
			reqs = h.srv.RequestsFor("MAIN")
			if len(reqs) != before+1 || notesIn(reqs[before], id) != 1 {
				t.Fatalf("the second resume made %d requests, the agent's notifications: %d", len(reqs)-before, notesIn(reqs[len(reqs)-1], id))
			}
		})
	}
}

// A remote agent the dead launcher had admitted but never started — it
// waited in the spawn gate's queue when the launcher was killed — is
// started on resume from the spawn request kept when it was admitted
// (its prompt, description and call), once; the one that ran is
// re-attached. Each is notified once, and a second resume starts and
// reports nothing.
func TestResumeStartsARemoteAgentThatNeverStarted(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	x := newAttachExecutor(t)
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	x.w.Model.ScriptFunc("FAR-FIRST", func(*llmtest.Request) llmtest.Turn {
		<-release
		return llmtest.Text("FIRST-DONE")
	})
	x.w.Model.Script("FAR-QUEUED", llmtest.Text("QUEUED-DONE"))
	h.srv.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.ToolUses(
				llmtest.Call{Name: "Agent", Input: map[string]any{"description": "first", "prompt": "FAR-FIRST work"}},
				llmtest.Call{Name: "Agent", Input: map[string]any{"description": "queued", "prompt": "FAR-QUEUED work"}})
		}
		return llmtest.Text("main ok")
	})
	cfg := h.config()
	cfg.Remote = Remote{Executor: x, All: true, PickupWait: time.Hour}
	cfg.Limits = Limits{MaxRunning: 1, MaxTotal: 100}
	rt1 := newRuntime(t, cfg)
	if _, _, err := runAll(t, context.Background(), rt1, "MAIN go"); err != nil {
		t.Fatal(err)
	}
	first, queued := taskByDescription(t, rt1, "first"), taskByDescription(t, rt1, "queued")
	<-x.started
	if info, _ := rt1.Task(queued); info.Status != task.Pending {
		t.Fatalf("the second agent is %s, want pending behind the cap", info.Status)
	}
	x.crash(t, rt1)
	if n := len(x.requests()); n != 1 {
		t.Fatalf("%d agents started before the crash, want 1", n)
	}
	resume := func(rt *Runtime, prompt string) *Runtime {
		t.Helper()
		entries, err := transcript.ReadFile(rt.TranscriptPath())
		if err != nil {
			t.Fatal(err)
		}
		n := cfg
		n.SessionID, n.History = rt.SessionID(), transcript.Messages(entries)
		rt2 := newRuntime(t, n)
		if _, _, err := runAll(t, context.Background(), rt2, prompt); err != nil {
			t.Fatal(err)
		}
		return rt2
	}
	rt2 := resume(rt1, "MAIN again")
	once.Do(func() { close(release) })
	drainNotifications(t, rt2)
	reqs := x.requests()
	if len(reqs) != 2 || reqs[1].AgentID != queued || reqs[1].Prompt != "FAR-QUEUED work" || reqs[1].Description != "queued" || reqs[1].ToolUseID == "" {
		t.Fatalf("requests started: %+v", reqs)
	}
	for key, want := range map[string]int{"FAR-FIRST": 1, "FAR-QUEUED": 1} {
		if n := len(x.w.Model.RequestsFor(key)); n != want {
			t.Fatalf("%s reached the worker's model %d times, want %d", key, n, want)
		}
	}
	last := h.srv.RequestsFor("MAIN")[len(h.srv.RequestsFor("MAIN"))-1]
	for _, id := range []string{first, queued} {
		if n := notesIn(last, id); n != 1 {
			t.Fatalf("%d notifications of %s, want 1", n, id)
		}
		if info, _ := rt2.Task(id); info.Status != task.Completed {
			t.Fatalf("task %+v", info)
		}
	}
	contains(t, lastTexts(last), "QUEUED-DONE")
	contains(t, lastTexts(last), "FIRST-DONE")
	before := len(h.srv.RequestsFor("MAIN"))
	rt3 := resume(rt2, "MAIN third")
	if rt3.RunningTasks() != 0 || len(x.requests()) != 2 || len(h.srv.RequestsFor("MAIN")) != before+1 {
		t.Fatalf("the second resume: %d running, %d started, %d requests", rt3.RunningTasks(), len(x.requests()), len(h.srv.RequestsFor("MAIN"))-before)
	}
}
