package tui

import (
	"context"
	"errors"
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
	tasks "github.com/cadre-dev/cadre/task"
)

// TestNotificationTurns: a turn of the user's that ends asks for a
// watcher; the watcher's turn shows as running, queues what the user
// types, and sends it when it ends; a watcher a prompt ended leaves the
// user's turn alone.
func TestNotificationTurns(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	m := testModel(t, 80, 24, rec)
	typeText(m, "start a background survey")
	press(m, "enter")
	f := &feeder{m: m, at: t0}
	f.ev(initEvent(), run.Event{Type: run.EventResult, Result: &run.Result{Subtype: "success"}})
	_, cmd := m.Update(eventsMsg{items: []runItem{{end: true, at: f.at}}})
	runCmds(t, m, cmd)
	if len(rec.watched) != 1 || rec.watched[0] != 1 || m.turn.running {
		t.Fatalf("the end of the user's turn started watchers %v (running %v)", rec.watched, m.turn.running)
	}
	// The watcher's stream: the notification turn opens with its init.
	f.watch(1, initEvent(), run.Event{Type: run.EventNotification, Notification: &tasks.Notification{TaskID: "a1", Status: tasks.Failed,
		AgentType: "Explore", Description: "survey", Summary: `Agent "survey" failed`}})
	if !m.turn.running || !m.turn.notifyTurn {
		t.Fatal("a notification turn did not show as running")
	}
	has(t, view(t, m), `notification: Explore a1 "survey" failed`, `Agent "survey" failed`, "esc to interrupt")
	typeText(m, "next question")
	press(m, "enter")
	if len(rec.started) != 1 {
		t.Fatalf("a prompt started during a notification turn: %v", rec.started)
	}
	f.watch(1, run.Event{Type: run.EventText, Text: "The survey failed."})
	_, cmd = m.Update(eventsMsg{items: []runItem{{end: true, notify: true, stream: 1, at: f.at}}})
	runCmds(t, m, cmd)
	if len(rec.started) != 2 || rec.started[1] != "next question" || !m.turn.running || m.turn.notifyTurn {
		t.Fatalf("the queued prompt did not follow the notification turn: %v", rec.started)
	}
	if len(rec.watched) != 1 {
		t.Fatal("a notification turn's end started another watcher")
	}
	// Items of a watcher the prompt ended: shown, but the user's turn runs on.
	_, cmd = m.Update(eventsMsg{items: []runItem{{ev: initEvent(), notify: true, stream: 1, at: f.at},
		{end: true, notify: true, stream: 1, interrupted: true, err: context.Canceled, at: f.at}, {watchEnd: true, notify: true, stream: 1, at: f.at}}})
	runCmds(t, m, cmd)
	if !m.turn.running || m.turn.notifyTurn {
		t.Fatal("a stale watcher's end ended the user's turn")
	}
	// A watcher that fails says so.
	m.Update(eventsMsg{items: []runItem{{watchEnd: true, notify: true, stream: 2, err: errors.New("background tasks: journal unreadable"), at: f.at}}})
	has(t, view(t, m), "journal unreadable")
}

// scriptedNotifier is a Notifier whose RunNotifications replays turns.
type scriptedNotifier struct {
	fakeRuntime
	mu    sync.Mutex
	turns [][]run.Event
	fail  error
	calls int
	// pendingOnly hides the turns from RunningTasks, as a runtime that
	// has not read its task journal yet does.
	pendingOnly bool
}

func (s *scriptedNotifier) RunNotifications(ctx context.Context) iter.Seq2[run.Event, error] {
	return func(yield func(run.Event, error) bool) {
		s.mu.Lock()
		s.calls++
		if s.fail != nil {
			s.mu.Unlock()
			yield(run.Event{}, s.fail)
			return
		}
		turn := s.turns[0]
		s.turns = s.turns[1:]
		s.mu.Unlock()
		for _, ev := range turn {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

func (s *scriptedNotifier) RunningTasks() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pendingOnly {
		return 0
	}
	return len(s.turns)
}

func (s *scriptedNotifier) PendingNotifications() bool { return s.fail != nil && s.calls == 0 }

func TestWatchNotifications(t *testing.T) {
	t.Parallel()
	q := newEventQueue()
	n := &scriptedNotifier{turns: [][]run.Event{
		{{Type: run.EventText, AgentID: "a1", Text: "child streams"}}, // events of a background agent, no turn
		{initEvent(), {Type: run.EventResult, Result: &run.Result{}}},
	}}
	watchNotifications(context.Background(), n, 7, false, q)
	items := q.take()
	var kinds []string
	for _, it := range items {
		if !it.notify || it.stream != 7 {
			t.Fatalf("item %+v is not the watcher's", it)
		}
		switch {
		case it.watchEnd:
			kinds = append(kinds, "watchEnd")
		case it.end:
			kinds = append(kinds, "end")
		default:
			kinds = append(kinds, string(it.ev.Type))
		}
	}
	if got := strings.Join(kinds, " "); got != "text init result end watchEnd" {
		t.Fatalf("the watcher queued %s", got)
	}
	// A RunNotifications that fails before a turn stops the watcher.
	bad := &scriptedNotifier{fail: errors.New("journal unreadable")}
	watchNotifications(context.Background(), bad, 8, false, q)
	items = q.take()
	if len(items) != 1 || !items[0].watchEnd || items[0].err == nil || bad.calls != 1 {
		t.Fatalf("a failing watcher queued %+v after %d calls", items, bad.calls)
	}
	// With nothing running or queued a watcher does not ask, unless a
	// saved session was just opened: then it asks once, and shows the turn
	// the runtime ran on what the earlier process left.
	idle := &scriptedNotifier{}
	watchNotifications(context.Background(), idle, 9, false, q)
	if items = q.take(); len(items) != 1 || !items[0].watchEnd || idle.calls != 0 {
		t.Fatalf("an idle watcher queued %+v after %d calls", items, idle.calls)
	}
	opened := &scriptedNotifier{turns: [][]run.Event{{initEvent(), {Type: run.EventResult, Result: &run.Result{}}}}}
	opened.pendingOnly = true
	watchNotifications(context.Background(), opened, 10, true, q)
	if items = q.take(); len(items) != 4 || !items[2].end || !items[3].watchEnd || opened.calls != 1 {
		t.Fatalf("a watcher of an opened session queued %+v after %d calls", items, opened.calls)
	}
}

// TestIdleNotificationsThroughTheRuntime: a real session whose main agent
// starts a background child and ends its turn; the watcher the model asks
// for runs the main agent on the child's notification, and the UI shows
// the notification and the answer.
func TestIdleNotificationsThroughTheRuntime(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	t.Cleanup(func() { srv.Check(t) })
	srv.Script("MAIN", llmtest.ToolUse("Agent", map[string]any{"description": "count files", "prompt": "BG: count the files",
		"subagent_type": "general-purpose", "run_in_background": true}),
		llmtest.Text("Counting in the background."), llmtest.Text("The count is in: 42 files."))
	// The child answers once the main agent's turn has ended, so its
	// notification can only reach the main agent between turns.
	release := make(chan struct{})
	var once sync.Once
	letGo := func() { once.Do(func() { close(release) }) }
	t.Cleanup(letGo) // before the server closes, should the test fail first
	srv.ScriptFunc("BG", func(*llmtest.Request) llmtest.Turn {
		<-release
		return llmtest.Text("42 files.")
	})
	rt := realRuntime(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := &app{ctx: ctx, queue: newEventQueue(), prompter: &prompter{}, rt: rt}
	defer func() {
		if err := a.shutdown(); err != nil {
			t.Error(err)
		}
	}()
	act := a.actions()
	act.nextEvents = nil // until takes the queue
	m := newModel(config{cwd: cwd, model: "claude-sonnet-4-5", dark: true, altScreen: true}, act)
	m.Update(tickMsg{at: time.Now()})
	typeText(m, "MAIN count the files")
	_, cmd := m.Update(keyMsg("enter"))
	runCmds(t, m, cmd) // starts the turn
	// Take the queue until the turn ends; its end asks for a watcher,
	// which run starts.
	until(t, m, a, func(it runItem) bool { return it.end && !it.notify })
	if m.turn.watchN != 1 {
		t.Fatalf("the turn's end started %d watchers", m.turn.watchN)
	}
	letGo()
	until(t, m, a, func(it runItem) bool { return it.watchEnd })
	if m.turn.running {
		t.Fatal("the notification turn is still running")
	}
	screen := view(t, m)
	has(t, screen, "Counting in the background.", `notification: general-purpose`, `"count files" completed`, "42 files.", "The count is in: 42 files.")
	// The runtime reports the notification delivered after the answer to
	// it streamed; the UI shows it before that answer.
	if strings.Index(screen, "notification: general-purpose") > strings.Index(screen, "The count is in") {
		t.Fatalf("the notification shows after the answer to it:\n%s", screen)
	}
	reqs := srv.RequestsFor("MAIN")
	if last := reqs[len(reqs)-1]; !strings.Contains(lastUserText(last), "<task-notification>") {
		t.Fatalf("the main agent's last request carries no notification: %q", lastUserText(last))
	}
}

// until feeds the queue's items to the model, running the commands its
// updates return, up to the first item done accepts.
func until(t *testing.T, m *Model, a *app, done func(runItem) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // bounds a failing test only
	defer cancel()
	for {
		msg, ok := a.queue.next(ctx)().(eventsMsg)
		if !ok {
			t.Fatal("the run never got there")
		}
		for i, it := range msg.items {
			_, cmd := m.Update(eventsMsg{items: []runItem{it}})
			runCmds(t, m, cmd)
			if done(it) {
				if rest := msg.items[i+1:]; len(rest) > 0 {
					t.Fatalf("items after the awaited one: %+v", rest)
				}
				return
			}
		}
	}
}

// lastUserText joins the text of the last message of req.
func lastUserText(req *llmtest.Request) string {
	var b strings.Builder
	for _, bl := range req.Messages[len(req.Messages)-1].Content {
		b.WriteString(bl.Text)
	}
	return b.String()
}

// realRuntime is a session of the library against srv, in a temporary
// directory, without transcripts; the caller closes it.
func realRuntime(t *testing.T, srv *llmtest.Server) *cadre.Runtime {
	t.Helper()
	return realRuntimeAt(t, srv, t.TempDir())
}

// realRuntimeAt is realRuntime working in dir.
func realRuntimeAt(t *testing.T, srv *llmtest.Server, dir string) *cadre.Runtime {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	model, err := anthropic.New(anthropic.Config{APIKey: "k", BaseURL: srv.URL(), HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := cadre.New(cadre.Config{Model: model, ModelID: "claude-sonnet-4-5", Cwd: dir, NoTranscript: true,
		Permissions: &cadre.Permissions{Mode: permission.ModeDefault}})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// TestEventsWhileNoStreamIsAttachedReachTheUI: a background child that
// works and ends while nothing streams the runtime's events (the user's
// turn is over and no watcher runs yet) is not lost to the UI: the
// runtime holds its events (tool call, progress, end) and the next
// stream — here the watcher's — gets them first, so the tree, the
// child's conversation and the notification show its work.
func TestEventsWhileNoStreamIsAttachedReachTheUI(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	t.Cleanup(func() { srv.Check(t) })
	srv.Script("MAIN", llmtest.ToolUse("Agent", map[string]any{"description": "read the notes", "prompt": "BG: read the notes",
		"subagent_type": "general-purpose", "run_in_background": true}),
		llmtest.Text("Reading in the background."), llmtest.Text("The notes say hello."))
	release := make(chan struct{})
	var once sync.Once
	letGo := func() { once.Do(func() { close(release) }) }
	t.Cleanup(letGo)
	dir := t.TempDir()
	rt := realRuntimeAt(t, srv, dir)
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv.ScriptFunc("BG", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			<-release
			return llmtest.ToolUse("Read", map[string]any{"file_path": notes})
		}
		return llmtest.Text("The notes say hello.")
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := &app{ctx: ctx, queue: newEventQueue(), prompter: &prompter{}, rt: rt}
	defer func() {
		if err := a.shutdown(); err != nil {
			t.Error(err)
		}
	}()
	act := a.actions()
	act.nextEvents = nil // until takes the queue
	var asked []int
	act.watch = func(stream int, _ bool) tea.Cmd { asked = append(asked, stream); return nil } // started by hand below
	m := newModel(config{cwd: cwd, model: "claude-sonnet-4-5", dark: true, altScreen: true}, act)
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	m.Update(tickMsg{at: time.Now()})
	typeText(m, "MAIN read the notes")
	_, cmd := m.Update(keyMsg("enter"))
	runCmds(t, m, cmd)
	until(t, m, a, func(it runItem) bool { return it.end && !it.notify })
	if len(asked) != 1 {
		t.Fatalf("the turn's end asked for watchers %v", asked)
	}
	// No stream is attached: the child runs to its end unseen.
	letGo()
	deadline := time.Now().Add(time.Minute) // bounds a failing test only
	for rt.RunningTasks() > 0 || !rt.PendingNotifications() {
		if time.Now().After(deadline) {
			t.Fatal("the child never ended")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if strings.Contains(view(t, m), "1 tool use") {
		t.Fatal("the screen shows the child's work before any stream carried it")
	}
	runCmds(t, m, a.watch(asked[0], false))
	until(t, m, a, func(it runItem) bool { return it.watchEnd })
	screen := view(t, m)
	has(t, screen, "Reading in the background.", `"read the notes" completed`, "The notes say hello.", "completed · 1 tool use")
	// The child's own conversation holds the call it made unseen.
	node := m.tree.Get(rt.Tasks()[0].ID)
	if node == nil || node.ToolUses != 1 || node.LastTool != "Read" {
		t.Fatalf("the tree's node of the child: %+v", node)
	}
	read := false
	for _, it := range m.pane.convos[node.ID].items {
		read = read || (it.name == "Read" && it.done && !it.isError && strings.Contains(it.result, "hello"))
	}
	if !read {
		t.Fatal("the child's conversation lacks its Read")
	}
}
