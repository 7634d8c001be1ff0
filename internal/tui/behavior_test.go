package tui

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
)

// runCmds executes cmd and every command it batches, feeding the messages
// they return back into the model, except ticks and waits (which would
// block or loop). It returns the messages it saw.
func runCmds(t *testing.T, m *Model, cmd tea.Cmd) []tea.Msg {
	t.Helper()
	var seen []tea.Msg
	var do func(c tea.Cmd, depth int)
	do = func(c tea.Cmd, depth int) {
		if c == nil || depth > 5 {
			return
		}
		msg := c()
		switch msg := msg.(type) {
		case tea.BatchMsg:
			for _, c := range msg {
				do(c, depth+1)
			}
			return
		case nil, tickMsg:
			return
		}
		seen = append(seen, msg)
		if _, ok := msg.(tea.QuitMsg); ok {
			return
		}
		_, next := m.Update(msg)
		do(next, depth+1)
	}
	do(cmd, 0)
	return seen
}

func view(t *testing.T, m *Model) string { return screen(t, m) }

func has(t *testing.T, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Fatalf("the screen lacks %q:\n%s", sub, s)
		}
	}
}

func TestSendQueueAndInterrupt(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	m := testModel(t, 80, 24, rec)
	typeText(m, "first")
	press(m, "enter")
	if len(rec.started) != 1 || rec.started[0] != "first" || !m.turn.running {
		t.Fatalf("enter did not start a turn: %v", rec.started)
	}
	// A prompt sent while the turn runs waits for it.
	typeText(m, "second")
	press(m, "enter")
	has(t, view(t, m), "queued: second")
	if len(rec.started) != 1 {
		t.Fatal("a prompt started while a turn ran")
	}
	press(m, "esc")
	if rec.interrupted != 1 {
		t.Fatal("esc did not interrupt the running turn")
	}
	f := &feeder{m: m, at: t0}
	f.ev(initEvent(), run.Event{Type: run.EventText, Text: "partial"})
	_, cmd := m.Update(eventsMsg{items: []runItem{{end: true, interrupted: true, err: errors.New("context canceled"), at: f.at}}})
	runCmds(t, m, cmd)
	// After an interrupt what was queued comes back to the editor.
	if len(rec.started) != 1 || strings.TrimSpace(m.input.Value()) != "second" {
		t.Fatalf("after the interrupt: started %v, input %q", rec.started, m.input.Value())
	}
	has(t, view(t, m), "partial", "Interrupted.")
	// A turn that ends normally sends the next queued prompt.
	press(m, "enter")
	typeText(m, "third")
	press(m, "enter")
	_, cmd = m.Update(eventsMsg{items: []runItem{{end: true, at: f.at}}})
	runCmds(t, m, cmd)
	if len(rec.started) != 3 || rec.started[2] != "third" {
		t.Fatalf("the queued prompt did not follow: %v", rec.started)
	}
	has(t, view(t, m), "› second", "› third")
}

func TestQuitKeys(t *testing.T) {
	t.Parallel()
	m := testModel(t, 80, 24, nil)
	typeText(m, "draft")
	press(m, "ctrl+c")
	if m.input.Value() != "" || m.quitting {
		t.Fatal("the first ctrl+c should clear the input, not quit")
	}
	has(t, view(t, m), "Press Ctrl+C again to exit")
	// After the window the hint expires and one press is not enough.
	m.Update(tickMsg{at: t0.Add(3 * time.Second)})
	press(m, "ctrl+c")
	if m.quitting {
		t.Fatal("ctrl+c quit after the window had passed")
	}
	_, cmd := m.Update(keyMsg("ctrl+c"))
	if !m.quitting || !hasQuit(cmd) {
		t.Fatal("ctrl+c twice did not quit")
	}

	m2 := testModel(t, 80, 24, nil)
	typeText(m2, "x")
	press(m2, "ctrl+d")
	if m2.quitting {
		t.Fatal("ctrl+d quit with text in the input")
	}
	press(m2, "backspace")
	_, cmd = m2.Update(keyMsg("ctrl+d"))
	if !m2.quitting || !hasQuit(cmd) {
		t.Fatal("ctrl+d on an empty input did not quit")
	}
}

func hasQuit(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	switch msg := cmd().(type) {
	case tea.QuitMsg:
		return true
	case tea.BatchMsg:
		for _, c := range msg {
			if hasQuit(c) {
				return true
			}
		}
	}
	return false
}

func TestHistoryPasteAndNewline(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	m := testModel(t, 80, 24, rec)
	for _, p := range []string{"one", "two"} {
		typeText(m, p)
		press(m, "enter")
		m.Update(eventsMsg{items: []runItem{{end: true, at: t0}}})
	}
	press(m, "up")
	if m.input.Value() != "two" {
		t.Fatalf("up gave %q", m.input.Value())
	}
	press(m, "up")
	if m.input.Value() != "one" {
		t.Fatalf("up twice gave %q", m.input.Value())
	}
	press(m, "down", "down")
	if m.input.Value() != "" {
		t.Fatalf("down back to the draft gave %q", m.input.Value())
	}
	// ctrl+j and a trailing backslash make new lines; enter sends.
	typeText(m, "a")
	press(m, "ctrl+j")
	typeText(m, "b\\")
	press(m, "enter")
	typeText(m, "c")
	if m.input.Value() != "a\nb\nc" {
		t.Fatalf("multi-line input %q", m.input.Value())
	}
	m.input.Reset()
	// A big paste is a placeholder until sent.
	big := strings.Repeat("line\n", 40)
	m.Update(tea.PasteMsg{Content: big})
	if !strings.HasPrefix(m.input.Value(), "[Pasted text #1 +40 lines]") {
		t.Fatalf("big paste shows %q", m.input.Value())
	}
	typeText(m, " explain")
	press(m, "enter")
	if got := rec.started[len(rec.started)-1]; got != strings.TrimSpace(big+" explain") {
		t.Fatalf("the paste was not expanded: %q", got)
	}
	m.Update(eventsMsg{items: []runItem{{end: true, at: t0}}})
	m.Update(tea.PasteMsg{Content: "small paste"})
	if m.input.Value() != "small paste" {
		t.Fatalf("small paste gives %q", m.input.Value())
	}
}

// promptFor opens a prompt of agent (""/main or an id) for a Bash call.
func promptFor(m *Model, id int, agentID, command string) chan permission.Reply {
	reply := make(chan permission.Reply, 1)
	typ := "main"
	if agentID != "" {
		typ = "Explore"
	}
	in := call("c", "Bash", map[string]any{"command": command}).Input
	m.Update(promptMsg{id: id, reply: reply, prompt: permission.Prompt{
		Request:   permission.Request{Tool: "Bash", Input: in, AgentID: agentID, AgentType: typ},
		Decision:  permission.Decision{Behavior: permission.Ask, Reason: "it writes"},
		Suggested: permission.Rule{Behavior: permission.Allow, Tool: "Bash", Content: "make:*"}, HasSuggestion: true,
	}})
	return reply
}

func TestPermissionPromptAnswers(t *testing.T) {
	t.Parallel()
	m := testModel(t, 100, 30, nil)
	once := promptFor(m, 1, "", "make build")
	always := promptFor(m, 2, "a1", "make test")
	deny := promptFor(m, 3, "a2", "make clean")
	gone := promptFor(m, 4, "", "make gone")
	s := view(t, m)
	has(t, s, "Permission needed · main", "1 of 4", "make build", "Also waiting: Bash from Explore a1", "Bash from Explore a2")
	typeText(m, "1")
	if r := <-once; r.Choice != permission.ChoiceAllowOnce {
		t.Fatalf("1 gave %+v", r)
	}
	has(t, view(t, m), "Permission needed · Explore a1", "make test", "always allow Bash(make:*) this session (this agent)")
	press(m, "down", "enter")
	if r := <-always; r.Choice != permission.ChoiceAllowSession {
		t.Fatalf("the second option gave %+v", r)
	}
	// The third asks for a reason, which the model reads.
	press(m, "3")
	typeText(m, "use the Makefile target")
	press(m, "enter")
	r := <-deny
	if r.Choice != permission.ChoiceDeny || !strings.Contains(r.Message, "use the Makefile target") {
		t.Fatalf("deny with reason gave %+v", r)
	}
	// A prompt whose call went away leaves the queue.
	m.Update(promptGoneMsg{id: 4})
	if len(m.perm.prompts) != 0 || len(gone) != 0 {
		t.Fatalf("%d prompts left", len(m.perm.prompts))
	}
	m.slash("/permissions")
	has(t, view(t, m), "Added allow rule Bash(make:*)", "this session, Explore a1")

	// Esc denies without a reason.
	esc := promptFor(m, 5, "", "make x")
	press(m, "esc")
	if r := <-esc; r.Choice != permission.ChoiceDeny || r.Message == "" {
		t.Fatalf("esc gave %+v", r)
	}
}

func TestPromptsMarkTheTreeAndTheCall(t *testing.T) {
	t.Parallel()
	m := testModel(t, 80, 24, nil)
	typeText(m, "go")
	press(m, "enter")
	f := &feeder{m: m, at: t0}
	c := call("toolu_1", "Bash", map[string]any{"command": "make"})
	f.ev(initEvent(), run.Event{Type: run.EventToolStart, Call: c})
	reply := make(chan permission.Reply, 1)
	m.Update(promptMsg{id: 1, reply: reply, prompt: permission.Prompt{Request: permission.Request{Tool: "Bash", Input: c.Input, ToolUseID: "toolu_1"}}})
	if m.tree.State(m.tree.Main()) != StateWaiting {
		t.Fatal("main is not waiting while its prompt is open")
	}
	has(t, view(t, m), "Waiting for permission…", "Waiting for your answer…")
	// Cancelling the turn withdraws its prompts (the prompter says so).
	m.Update(eventsMsg{items: []runItem{{end: true, interrupted: true, err: errors.New("canceled"), at: f.at}}})
	m.Update(promptGoneMsg{id: 1})
	if len(m.perm.prompts) != 0 || m.tree.State(m.tree.Main()) != StateInterrupted {
		t.Fatalf("after the turn: %d prompts, main %s", len(m.perm.prompts), m.tree.State(m.tree.Main()))
	}
}

func TestModeCycle(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	m := testModel(t, 80, 24, rec)
	for _, want := range []permission.Mode{permission.ModeAcceptEdits, permission.ModePlan, permission.ModeDefault} {
		_, cmd := m.Update(keyMsg("shift+tab"))
		runCmds(t, m, cmd)
		if m.bar.mode != want {
			t.Fatalf("shift+tab gave %s, want %s", m.bar.mode, want)
		}
	}
	m.Update(modeMsg{mode: permission.ModePlan})
	has(t, view(t, m), "⏸ plan mode")
	m.Update(modeMsg{mode: permission.ModeBypassPermissions, err: errors.New("bypass is disabled")})
	has(t, view(t, m), "⏸ plan mode", "Cannot switch to bypassPermissions")
	if strings.Join(modes(rec.modes), " ") != "acceptEdits plan default" {
		t.Fatalf("modes asked: %v", rec.modes)
	}
	// A session started in bypass keeps it in the cycle.
	m.cfg.mode = permission.ModeBypassPermissions
	if got := joinModes(m.bar.modeCycle()); got != "default → acceptEdits → plan → bypassPermissions" {
		t.Fatalf("cycle %s", got)
	}
	// Without the action, the UI says so.
	m.act.setMode = nil
	press(m, "shift+tab")
	has(t, view(t, m), "not available yet")
}

func modes(ms []permission.Mode) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = string(m)
	}
	return out
}

// treeModel is a model with a running turn and two running children.
func treeModel(t *testing.T, rec *recorder) (*Model, *feeder) {
	m := testModel(t, 80, 24, rec)
	typeText(m, "go")
	press(m, "enter")
	f := &feeder{m: m, at: t0}
	f.ev(initEvent(), *agentCall("c1", "Explore", "look", "child-1 prompt"), task("a1", "Explore", "look", "main", "c1", 1, "haiku"),
		*agentCall("c2", "Plan", "plan", "child-2 prompt"), task("a2", "Plan", "plan", "main", "c2", 1, "sonnet"))
	return m, f
}

func TestBackgroundAndStop(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	m, f := treeModel(t, rec)
	// Without the runtime's control, both keys say so.
	press(m, "tab", "down")
	press(m, "ctrl+b")
	has(t, view(t, m), "not available yet")
	press(m, "x")
	has(t, view(t, m), "not available yet")

	m.act.background = func(id string) tea.Cmd {
		rec.background = append(rec.background, id)
		return func() tea.Msg { return controlMsg{what: "background", agentID: id} }
	}
	m.act.stop = func(id string) tea.Cmd {
		rec.stopped = append(rec.stopped, id)
		return func() tea.Msg { return controlMsg{what: "stop", agentID: id} }
	}
	// With two in the foreground and the focus on the prompt, ctrl+b asks
	// which.
	press(m, "tab")
	press(m, "ctrl+b")
	has(t, view(t, m), "2 sub-agents run in the foreground")
	// The selected one goes.
	press(m, "tab")
	_, cmd := m.Update(keyMsg("ctrl+b"))
	runCmds(t, m, cmd)
	if len(rec.background) != 1 || rec.background[0] != "a1" || m.tree.State(m.tree.Get("a1")) != StateBackground {
		t.Fatalf("ctrl+b on a1: %v, state %s", rec.background, m.tree.State(m.tree.Get("a1")))
	}
	// Now only a2 runs in the foreground: ctrl+b from the prompt takes it.
	press(m, "tab")
	_, cmd = m.Update(keyMsg("ctrl+b"))
	runCmds(t, m, cmd)
	if len(rec.background) != 2 || rec.background[1] != "a2" {
		t.Fatalf("ctrl+b with one foreground agent: %v", rec.background)
	}
	// x asks first; n keeps it, y stops it.
	press(m, "tab", "down", "down", "x")
	has(t, view(t, m), "Stop Plan a2 and every agent and shell it started?")
	press(m, "n")
	if len(rec.stopped) != 0 {
		t.Fatal("n stopped the agent")
	}
	press(m, "x")
	_, cmd = m.Update(keyMsg("y"))
	runCmds(t, m, cmd)
	if len(rec.stopped) != 1 || rec.stopped[0] != "a2" {
		t.Fatalf("y did not stop a2: %v", rec.stopped)
	}
	_ = f
}

func TestAgentViewAndClear(t *testing.T) {
	t.Parallel()
	m, f := treeModel(t, nil)
	g := call("g1", "Glob", map[string]any{"pattern": "**/*.go"})
	f.ev(run.Event{Type: run.EventToolStart, AgentID: "a1", Call: g},
		run.Event{Type: run.EventToolEnd, AgentID: "a1", Call: g, ToolResult: &run.ToolResult{Text: "a.go\nb.go\nc.go"}})
	press(m, "tab", "down", "enter")
	s := view(t, m)
	has(t, s, "Explore a1 · haiku · running · read-only", "› child-1 prompt", "Glob(**/*.go)", "a.go (+2 lines, ctrl+o to expand)")
	press(m, "ctrl+o")
	has(t, view(t, m), "b.go", "c.go")
	// It grows as the agent goes on.
	f.ev(run.Event{Type: run.EventText, AgentID: "a1", Text: "found three files"})
	has(t, view(t, m), "found three files")
	press(m, "esc")
	if m.pane.view != "" {
		t.Fatal("esc did not leave the agent's view")
	}
	f.ev(run.Event{Type: run.EventTaskCompleted, AgentID: "a1", Subagent: &run.SubagentResult{AgentID: "a1", Status: "completed"}})
	press(m, "c")
	if m.tree.Get("a1") != nil || m.tree.Get("a2") == nil {
		t.Fatal("c did not clear exactly the finished agent")
	}
	has(t, view(t, m), "Cleared 1 finished agents.")
}

func TestSlashCommands(t *testing.T) {
	t.Parallel()
	m := testModel(t, 100, 30, nil)
	m.cfg.rules = []permission.Rule{
		{Behavior: permission.Deny, Tool: "Bash", Content: "rm:*", Source: "/home/dev/.config/cadre/settings.json"},
		{Behavior: permission.Allow, Tool: "Read", Source: "--allowedTools"},
	}
	slash := func(s string) string {
		typeText(m, s)
		_, cmd := m.Update(keyMsg("enter"))
		runCmds(t, m, cmd)
		return view(t, m)
	}
	has(t, slash("/help"), "shift+tab", "/resume", "ctrl+b")
	has(t, slash("/permissions"), "Mode: default", "deny", "Bash(rm:*)", "settings.json", "Read", "--allowedTools")
	has(t, slash("/model"), "Main agent: claude-sonnet-4-5", "/model NAME switches")
	has(t, slash("/model opus"), "cannot be switched here")
	var asked []string
	m.act.setModel = func(name string) tea.Cmd {
		asked = append(asked, name)
		return func() tea.Msg {
			if name == "bad model" {
				return modelMsg{asked: name, err: errors.New("a model id has no spaces")}
			}
			return modelMsg{asked: name, model: "claude-opus-4-1"}
		}
	}
	has(t, slash("/model opus"), "Main agent: claude-opus-4-1 from the next turn.")
	has(t, slash("/model bad model"), "/model bad model: a model id has no spaces")
	if len(asked) != 2 || asked[0] != "opus" || m.cfg.model != "claude-opus-4-1" || m.tree.Main().Model != "claude-opus-4-1" {
		t.Fatalf("/model asked %v; the session's model is %s", asked, m.cfg.model)
	}
	has(t, slash("/model"), "Main agent: claude-opus-4-1")
	has(t, slash("/agnets"), "Unknown command /agnets. Did you mean /agents?")
	has(t, slash("/agents"), "cannot be listed")
	m.act.agents = func() tea.Cmd {
		return func() tea.Msg { return textMsg{title: "/agents", text: "NAME  SOURCE\nExplore  builtin"} }
	}
	has(t, slash("/agents"), "Explore  builtin")
	// Tab completes a command from its start.
	typeText(m, "/pe")
	press(m, "tab")
	if m.input.Value() != "/permissions " {
		t.Fatalf("tab completed to %q", m.input.Value())
	}
	m.input.Reset()
	// /clear without a runtime action forgets the conversation.
	slash("/clear")
	if len(m.pane.main().items) != 0 {
		t.Fatalf("/clear left %d items", len(m.pane.main().items))
	}
	_, cmd := m.Update(keyMsg("/"))
	_ = cmd
	has(t, view(t, m), "/agents", "/resume", "tab completes")
}

func TestResizeKeepsEveryLineInside(t *testing.T) {
	t.Parallel()
	for _, sz := range []struct{ w, h int }{{80, 24}, {60, 20}, {100, 30}, {119, 40}, {120, 40}, {200, 60}, {30, 10}} {
		for _, sc := range scenarios {
			m := testModel(t, 80, 24, nil)
			sc.build(t, m)
			m.Update(tea.WindowSizeMsg{Width: sz.w, Height: sz.h})
			screen(t, m) // fails on a line wider than the terminal or a wrong height
		}
	}
}

func TestInlineModePrintsFinishedItems(t *testing.T) {
	t.Parallel()
	m := testModel(t, 80, 24, nil)
	m.cfg.altScreen = false
	typeText(m, "hello")
	_, cmd := m.Update(keyMsg("enter"))
	if printed := printedText(cmd); !strings.Contains(printed, "› hello") {
		t.Fatalf("the prompt was not printed to the scrollback: %q", printed)
	}
	f := &feeder{m: m, at: t0}
	f.ev(initEvent(), run.Event{Type: run.EventText, Text: "streaming"})
	// The answer streams in the live area, not the scrollback.
	has(t, view(t, m), "streaming")
	_, cmd = m.Update(eventsMsg{items: []runItem{{ev: run.Event{Type: run.EventAssistant, Message: assistant("streaming done")}, at: f.at}}})
	if printed := printedText(cmd); !strings.Contains(printed, "streaming done") {
		t.Fatalf("the finished answer was not printed: %q", printed)
	}
	if strings.Contains(view(t, m), "streaming done") {
		t.Fatal("a printed item is drawn again")
	}
}

// printedText is what the commands print above the UI.
func printedText(cmd tea.Cmd) string {
	if cmd == nil {
		return ""
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		var out []string
		for _, c := range b {
			out = append(out, printedText(c))
		}
		return strings.Join(out, "")
	}
	// tea.Println's message is unexported; its text shows in its %v.
	if s := ansi.Strip(stringOf(msg)); strings.Contains(s, "messageBody") {
		return s
	}
	return ""
}

func stringOf(msg tea.Msg) string { return fmt.Sprintf("%+v", msg) }

// TestQuitKeysAfterIdle: after an idle spell no tick has moved the clock;
// the first Ctrl+C reads the wall clock, so the tick that follows it does
// not end the window, and a second press within it quits.
func TestQuitKeysAfterIdle(t *testing.T) {
	t.Parallel()
	m := testModel(t, 80, 24, nil)
	wall := t0.Add(10 * time.Minute) // idle: the last tick was at t0
	m.clock = func() time.Time { return wall }
	press(m, "ctrl+c")
	m.Update(tickMsg{at: wall.Add(tickEvery)})
	has(t, view(t, m), "Press Ctrl+C again to exit")
	m.clock = func() time.Time { return wall.Add(time.Second) }
	_, cmd := m.Update(keyMsg("ctrl+c"))
	if !m.quitting || !hasQuit(cmd) {
		t.Fatal("ctrl+c twice within the window did not quit after an idle spell")
	}
}
