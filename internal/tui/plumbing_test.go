package tui

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm/anthropic"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/transcript"
)

func TestPrompterBridge(t *testing.T) {
	t.Parallel()
	msgs := make(chan tea.Msg, 4)
	done := make(chan struct{})
	b := &prompter{send: func(m tea.Msg) { msgs <- m }, done: done}

	// Answered: the reply comes back to the agent.
	got := make(chan permission.Reply, 1)
	go func() {
		r, err := b.Prompt(context.Background(), permission.Prompt{Request: permission.Request{Tool: "Bash"}})
		if err != nil {
			t.Error(err)
		}
		got <- r
	}()
	pm := (<-msgs).(promptMsg)
	pm.reply <- permission.Reply{Choice: permission.ChoiceAllowOnce}
	if r := <-got; r.Choice != permission.ChoiceAllowOnce {
		t.Fatalf("reply %+v", r)
	}

	// Cancelled: the UI is told to drop it, the agent gets ctx's error.
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := b.Prompt(ctx, permission.Prompt{})
		errc <- err
	}()
	pm = (<-msgs).(promptMsg)
	cancel()
	if gone := (<-msgs).(promptGoneMsg); gone.id != pm.id {
		t.Fatalf("withdrew %d, asked %d", gone.id, pm.id)
	}
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled prompt: %v", err)
	}

	// The UI closed: pending and later prompts deny.
	go func() {
		r, err := b.Prompt(context.Background(), permission.Prompt{})
		if r.Choice != permission.ChoiceDeny || !errors.Is(err, errUIClosed) {
			t.Errorf("prompt pending at close: %+v %v", r, err)
		}
		errc <- err
	}()
	<-msgs
	close(done)
	<-errc
	if r, err := b.Prompt(context.Background(), permission.Prompt{}); r.Choice != permission.ChoiceDeny || err == nil {
		t.Fatalf("prompt after close: %+v %v", r, err)
	}
}

func TestEventQueueCoalesces(t *testing.T) {
	t.Parallel()
	q := newEventQueue()
	for i := range 5 {
		q.push(runItem{ev: run.Event{Type: run.EventText, Text: fmt.Sprint(i)}})
	}
	msg := q.next(context.Background())().(eventsMsg)
	if len(msg.items) != 5 || msg.items[4].ev.Text != "4" {
		t.Fatalf("took %d items", len(msg.items))
	}
	// Nothing queued: next waits until a push, or until ctx ends.
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan tea.Msg, 1)
	go func() { res <- q.next(ctx)() }()
	q.push(runItem{end: true})
	if m := (<-res).(eventsMsg); len(m.items) != 1 || !m.items[0].end {
		t.Fatalf("after a push: %+v", m)
	}
	go func() { res <- q.next(ctx)() }()
	cancel()
	if m := <-res; m != nil {
		t.Fatalf("a cancelled wait returned %v", m)
	}
}

// fakeRuntime streams fixed events, or panics.
type fakeRuntime struct {
	evs   []run.Event
	panic bool
}

func (f *fakeRuntime) Run(ctx context.Context, prompt string) iter.Seq2[run.Event, error] {
	return func(yield func(run.Event, error) bool) {
		if f.panic {
			panic("boom")
		}
		for _, e := range f.evs {
			if !yield(e, nil) {
				return
			}
		}
	}
}

func (f *fakeRuntime) SessionID() string { return "s" }

func TestPumpEndsEveryRun(t *testing.T) {
	t.Parallel()
	q := newEventQueue()
	pump(context.Background(), &fakeRuntime{evs: []run.Event{initEvent(), {Type: run.EventResult, Result: &run.Result{}}}}, "p", q)
	items := q.take()
	if len(items) != 3 || !items[2].end || items[2].err != nil {
		t.Fatalf("items %+v", items)
	}
	pump(context.Background(), &fakeRuntime{panic: true}, "p", q)
	items = q.take()
	if len(items) != 1 || !items[0].end || items[0].err == nil || !strings.Contains(items[0].err.Error(), "boom") {
		t.Fatalf("a crashing run gave %+v", items)
	}
}

// TestSessionsFromRealTranscripts lists the sessions a real runtime wrote
// and rebuilds one's conversation.
func TestSessionsFromRealTranscripts(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	t.Cleanup(func() { srv.Check(t) })
	srv.Script("older", llmtest.ToolUse("Read", map[string]any{"file_path": "/etc/hostname"}), llmtest.Text("It is a host."))
	srv.Script("newer", llmtest.Text("Second."))
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	model, err := anthropic.New(anthropic.Config{APIKey: "k", BaseURL: srv.URL(), HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	dir, state := t.TempDir(), t.TempDir()
	var ids []string
	for _, prompt := range []string{"older: what host is this?", "newer: and now?"} {
		rt, err := cadre.New(cadre.Config{Model: model, ModelID: "claude-sonnet-4-5", Cwd: dir, StateDir: state})
		if err != nil {
			t.Fatal(err)
		}
		for _, err := range rt.Run(context.Background(), prompt) {
			if err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, rt.SessionID())
		// Distinct modification times, oldest first.
		old := time.Now().Add(time.Duration(len(ids)-3) * time.Hour)
		if err := os.Chtimes(rt.TranscriptPath(), old, old); err != nil {
			t.Fatal(err)
		}
	}
	// A file that is not a session is skipped.
	if err := os.WriteFile(filepath.Join(filepath.Dir(filepath.Dir(filepath.Join(state, "projects", "x", "y"))), "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	list, err := listSessions(state, dir, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != ids[1] || list[1].ID != ids[0] {
		t.Fatalf("sessions %+v, want newest first %v", list, ids)
	}
	if list[1].FirstPrompt != "older: what host is this?" {
		t.Fatalf("first prompt %q", list[1].FirstPrompt)
	}
	h := readHistory(list[1])
	if h.err != nil {
		t.Fatal(h.err)
	}
	m := testModel(t, 80, 24, nil)
	m.Update(h)
	has(t, view(t, m), "saved session", "› older: what host is this?", "Read(/etc/hostname)", "It is a host.")
	if none, err := listSessions(t.TempDir(), dir, 10); err != nil || len(none) != 0 {
		t.Fatalf("an empty state dir lists %v, %v", none, err)
	}
}

func TestPickerOpensReadOnlyOrResumes(t *testing.T) {
	t.Parallel()
	m := testModel(t, 80, 24, nil)
	var mu sync.Mutex
	var opened []string
	m.act.history = func(s sessionInfo) tea.Cmd {
		mu.Lock()
		opened = append(opened, "history "+s.ID)
		mu.Unlock()
		return nil
	}
	list := []sessionInfo{{ID: "s-new", FirstPrompt: "fix the tests", Modified: t0}, {ID: "s-old", FirstPrompt: "write docs", Modified: t0.Add(-time.Hour)}}
	m.Update(sessionsMsg{list: list})
	has(t, view(t, m), "Resume a session of this project", "fix the tests", "write docs", "opens read-only")
	press(m, "down", "enter")
	if len(opened) != 1 || opened[0] != "history s-old" || m.picker != nil {
		t.Fatalf("picked %v", opened)
	}
	m.cfg.canResume = true
	m.act.resume = func(s sessionInfo) tea.Cmd {
		opened = append(opened, "resume "+s.ID)
		return nil
	}
	m.Update(sessionsMsg{list: list})
	press(m, "enter")
	if opened[1] != "resume s-new" {
		t.Fatalf("picked %v", opened)
	}
	// The current session is not offered.
	m.cfg.sessionID = "s-new"
	m.Update(sessionsMsg{list: list[:1]})
	if m.picker != nil {
		t.Fatal("the picker offered only the current session")
	}
}

func TestMouse(t *testing.T) {
	t.Parallel()
	m, _ := treeModel(t, nil)
	m.cfg.mouse = true
	for range 30 {
		m.pane.main().addInfo("filler line")
	}
	m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	if m.pane.scroll != 3 {
		t.Fatalf("wheel up scrolled to %d", m.pane.scroll)
	}
	m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	if m.pane.scroll != 0 {
		t.Fatalf("wheel down scrolled to %d", m.pane.scroll)
	}
	// Clicking a tree row selects it; clicking it again opens it.
	lines := strings.Split(screen(t, m), "\n")
	y := -1
	for i, l := range lines {
		if strings.Contains(l, "Plan a2") {
			y = i
		}
	}
	m.Update(tea.MouseClickMsg{Button: tea.MouseLeft, X: 5, Y: y})
	if m.focus != focusTree || m.panel.selected() == nil || m.panel.selected().ID != "a2" {
		t.Fatalf("click selected %+v", m.panel.selected())
	}
	m.Update(tea.MouseClickMsg{Button: tea.MouseLeft, X: 5, Y: y})
	if m.pane.view != "a2" {
		t.Fatalf("second click opened %q", m.pane.view)
	}
	if v := m.View(); v.MouseMode != tea.MouseModeCellMotion {
		t.Fatal("--mouse does not turn mouse reporting on")
	}
}

// controlRuntime is a fake runtime with every optional ability.
type controlRuntime struct {
	fakeRuntime
	mu    sync.Mutex
	mode  permission.Mode
	model string
	bg    []string
	stop  []string
}

func (c *controlRuntime) SetPermissionMode(m permission.Mode) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m == permission.ModeBypassPermissions {
		return errors.New("bypass is disabled")
	}
	c.mode = m
	return nil
}

func (c *controlRuntime) SetModel(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if name == "" {
		return errors.New("no model")
	}
	c.model = "id-of-" + name
	return nil
}

func (c *controlRuntime) Model() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.model
}

func (c *controlRuntime) Background(_ context.Context, id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bg = append(c.bg, id)
	return nil
}

func (c *controlRuntime) Stop(_ context.Context, id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stop = append(c.stop, id)
	return nil
}

func TestAppActions(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rt := &controlRuntime{fakeRuntime: fakeRuntime{evs: []run.Event{initEvent()}}}
	opened := 0
	a := &app{ctx: ctx, queue: newEventQueue(), prompter: &prompter{}, rt: rt, opts: Options{
		New: func(permission.Prompter) (Runtime, error) { opened++; return &fakeRuntime{}, nil },
	}}
	act := a.actions()
	if act.background == nil || act.stop == nil || act.resume != nil || act.sessions != nil || act.agents != nil {
		t.Fatal("the actions do not follow the runtime's abilities and the options")
	}
	if msg := act.setMode(permission.ModePlan)().(modeMsg); msg.err != nil || rt.mode != permission.ModePlan {
		t.Fatalf("setMode: %+v, mode %s", msg, rt.mode)
	}
	if msg := act.setMode(permission.ModeBypassPermissions)().(modeMsg); msg.err == nil {
		t.Fatal("a refused mode reported no error")
	}
	if msg := act.setModel("opus")().(modelMsg); msg.err != nil || msg.model != "id-of-opus" {
		t.Fatalf("setModel: %+v", msg)
	}
	if msg := act.setModel("")().(modelMsg); msg.err == nil {
		t.Fatal("a refused model reported no error")
	}
	if msg := act.background("a1")().(controlMsg); msg.err != nil || rt.bg[0] != "a1" {
		t.Fatalf("background: %+v", msg)
	}
	if msg := act.stop("a2")().(controlMsg); msg.err != nil || rt.stop[0] != "a2" {
		t.Fatalf("stop: %+v", msg)
	}
	// A turn: the pump fills the queue and ends the run.
	act.start("go")()
	a.shutdown()
	items := a.queue.take()
	if len(items) != 2 || items[0].ev.Type != run.EventInit || !items[1].end {
		t.Fatalf("the turn queued %+v", items)
	}
	// After shutdown no turn starts.
	act.start("again")()
	if items := a.queue.take(); len(items) != 0 {
		t.Fatalf("a turn started after shutdown: %+v", items)
	}
	if msg := act.fresh()().(runtimeMsg); msg.err != nil || opened != 1 || a.runtime() == Runtime(rt) {
		t.Fatalf("fresh: %+v", msg)
	}
	// A runtime without the abilities leaves those actions out.
	a2 := &app{ctx: ctx, queue: newEventQueue(), rt: &fakeRuntime{}}
	if act := a2.actions(); act.background != nil || act.stop != nil {
		t.Fatal("a runtime without TaskControl got background and stop")
	}
	if msg := a2.actions().setMode(permission.ModePlan)().(modeMsg); !errors.Is(msg.err, errNotAvailable) {
		t.Fatalf("setMode without ModeSetter: %v", msg.err)
	}
	if msg := a2.actions().setModel("opus")().(modelMsg); !errors.Is(msg.err, errNotAvailable) {
		t.Fatalf("setModel without ModelSetter: %v", msg.err)
	}
}

func TestOpenAtStart(t *testing.T) {
	t.Parallel()
	state, dir := t.TempDir(), "/home/dev/shop"
	path := transcript.SessionPath(state, dir, "s-1")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	line := `{"type":"user","sessionId":"s-1","timestamp":"2026-05-04T10:00:00Z","message":{"role":"user","content":[{"type":"text","text":"saved prompt"}]}}` + "\n"
	if err := os.WriteFile(path, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	a := &app{ctx: context.Background(), opts: Options{StateDir: state, Cwd: dir}, prompter: &prompter{}}
	h, ok := a.openAtStart("s-1").(historyMsg)
	if !ok || h.err != nil || len(h.entries) != 1 {
		t.Fatalf("without Resume the session opens read-only: %+v", h)
	}
	var resumed string
	a.opts.Resume = func(id string, _ permission.Prompter) (Runtime, error) { resumed = id; return &fakeRuntime{}, nil }
	rm, ok := a.openAtStart("s-1").(runtimeMsg)
	if !ok || rm.err != nil || resumed != "s-1" || rm.resumed == nil || len(rm.resumed.entries) != 1 {
		t.Fatalf("with Resume: %+v", rm)
	}
	m := testModel(t, 80, 24, nil)
	m.Update(rm)
	has(t, view(t, m), "saved prompt", "Resumed session s")
	// New already made that session's runtime (cadre --resume): no other
	// is opened, the conversation is shown.
	resumed = ""
	a.rt = &namedRuntime{id: "s-1"}
	rm, ok = a.openAtStart("s-1").(runtimeMsg)
	if !ok || rm.err != nil || resumed != "" || rm.sessionID != "s-1" || rm.resumed == nil || len(rm.resumed.entries) != 1 || a.runtime().SessionID() != "s-1" {
		t.Fatalf("the first runtime is the session: %+v, Resume called for %q", rm, resumed)
	}
}

// namedRuntime is a fake runtime of the session id.
type namedRuntime struct {
	fakeRuntime
	id string
}

func (n *namedRuntime) SessionID() string { return n.id }
