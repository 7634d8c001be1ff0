package tui

import (
	"errors"
	"fmt"
	"time"

	tasks "github.com/cadre-dev/cadre/task"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
)

// runItem is one element of a run's stream as the event pump hands it to
// the model: an event, or the end of the run.
type runItem struct {
	ev  run.Event
	at  time.Time
	end bool
	// err ends the run in error; interrupted says the user cancelled it.
	err         error
	interrupted bool
	// notify marks the items of a watcher (RunNotifications between the
	// user's turns), stream naming which; watchEnd is the watcher's last.
	notify   bool
	stream   int
	watchEnd bool
}

// eventsMsg carries every run item that arrived since the last one: the
// pump never waits for the UI, and the UI takes what piled up at once.
type eventsMsg struct{ items []runItem }

// tickMsg moves the UI's clock (spinner, elapsed times, expiring hints).
type tickMsg struct{ at time.Time }

// modeMsg reports a change of the main agent's permission mode.
type modeMsg struct {
	mode permission.Mode
	err  error
}

// modelMsg reports the outcome of /model NAME: the model id the main
// agent's next turn uses.
type modelMsg struct {
	asked, model string
	err          error
}

// controlMsg reports the outcome of Ctrl+B or x.
type controlMsg struct {
	what    string // "background" or "stop"
	agentID string
	err     error
}

// textMsg carries a slash command's output (or its error).
type textMsg struct {
	title string
	text  string
	err   error
}

// actions are the effects the model asks for. Each returns the command
// that carries it out; the result comes back as a message. A nil action
// is not available (a test, or a runtime without that ability), and the
// UI says so instead of doing it.
type actions struct {
	// nextEvents waits for the next run items (eventsMsg).
	nextEvents func() tea.Cmd
	// start begins a turn with the prompt; interrupt cancels it.
	start     func(prompt string) tea.Cmd
	interrupt func() tea.Cmd
	// watch runs the main agent on background tasks' notifications until
	// none is running or a turn starts; its items carry stream. opened
	// says a saved session was just opened: the watcher then looks at
	// least once, so what its earlier process left (notifications not
	// delivered, tasks a crash interrupted) shows without a prompt.
	watch func(stream int, opened bool) tea.Cmd
	// setMode changes the main agent's permission mode (modeMsg).
	setMode func(permission.Mode) tea.Cmd
	// setModel changes the main agent's model (modelMsg).
	setModel func(name string) tea.Cmd
	// background and stop act on a sub-agent (controlMsg).
	background func(agentID string) tea.Cmd
	stop       func(agentID string) tea.Cmd
	// agents lists the agent definitions (textMsg).
	agents func() tea.Cmd
	// sessions lists the saved sessions of the project (sessionsMsg).
	sessions func() tea.Cmd
	// history reads a saved session's transcript (historyMsg).
	history func(s sessionInfo) tea.Cmd
	// resume opens a saved session to continue it; fresh starts a new
	// one (runtimeMsg).
	resume func(s sessionInfo) tea.Cmd
	fresh  func() tea.Cmd
}

// config is what the model knows about its session from the start.
type config struct {
	cwd       string
	model     string
	mode      permission.Mode
	rules     []permission.Rule
	sessionID string
	altScreen bool
	mouse     bool
	dark      bool
	// canResume is set when saved sessions can be continued.
	canResume bool
}

// Model is the terminal UI's Bubble Tea model. Update and View depend only
// on the messages received (the clock arrives in messages too) and never
// block: every effect is a command built from actions.
//
// Model composes the components the screen is made of, each with its own
// state and drawing: from the top, the conversation pane (pane.go,
// render.go), the agents panel below or beside it (treeview.go), the turn's
// spinner line with the prompts queued behind it (turn.go), and at the
// bottom either the editor (input.go), the permission dialog (prompt.go),
// the session picker (sessions.go) or the panel's stop confirmation, above
// the status bar (status.go). Model folds the run's events into the Tree
// and the conversations (events.go, notifications.go), routes each key to
// what is on top, runs the slash commands (slash.go) and lays the
// components out (view.go).
type Model struct {
	cfg config
	act actions
	st  styles

	width, height int
	now           time.Time

	// tree is the agent tree the run's events build; the panel and the
	// pane draw it.
	tree  *Tree
	pane  *convoPane
	panel *agentsPanel
	turn  *turn
	input *editor
	perm  *permissionDialog
	// picker is the /resume list while it is open.
	picker *sessionPicker
	bar    *statusBar
	// focus says whether the editor or the tree has the keyboard.
	focus focusArea

	// profile is the terminal's colour profile: what is printed to the
	// scrollback does not pass through the renderer, which would reduce
	// its colours to it (NO_COLOR included).
	profile colorprofile.Profile

	// clock reads the wall clock for what cannot wait for the next tick
	// (a first Ctrl+C after an idle spell, when no tick has moved now).
	clock    func() time.Time
	ticking  bool
	quitting bool
}

type focusArea int

const (
	focusInput focusArea = iota
	focusTree
)

// newModel builds the model; act may leave any action nil.
func newModel(cfg config, act actions) *Model {
	m := &Model{cfg: cfg, act: act, st: newStyles(cfg.dark), width: 80, height: 24, profile: colorprofile.TrueColor,
		tree: NewTree(), clock: time.Now}
	m.turn = &turn{st: &m.st}
	m.bar = &statusBar{st: &m.st, cfg: &m.cfg, mode: cfg.mode}
	if m.bar.mode == "" {
		m.bar.mode = permission.ModeDefault
	}
	m.tree.Main().Model = cfg.model
	m.input = newEditor(&m.st, m.width)
	m.perm = &permissionDialog{st: &m.st}
	m.panel = &agentsPanel{st: &m.st, tree: m.tree}
	m.pane = &convoPane{st: &m.st, cfg: &m.cfg, tree: m.tree, perm: m.perm}
	m.pane.reset()
	return m
}

// Init starts waiting for run events.
func (m *Model) Init() tea.Cmd {
	var cmds []tea.Cmd
	if m.act.nextEvents != nil {
		cmds = append(cmds, m.act.nextEvents())
	}
	// The clock only moves with messages; the first tick sets it.
	cmds = append(cmds, tea.RequestBackgroundColor, func() tea.Msg { return tickMsg{at: time.Now()} })
	return tea.Batch(cmds...)
}

// Update folds one message into the model.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmds []tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.input.setWidth(msg.Width)
	case tea.ColorProfileMsg:
		m.profile = msg.Profile
	case tea.BackgroundColorMsg:
		if dark := msg.IsDark(); dark != m.st.dark {
			m.st = newStyles(dark)
			m.input.restyle()
			m.pane.invalidate()
		}
	case eventsMsg:
		cmds = append(cmds, m.applyRun(msg.items)...)
		if m.act.nextEvents != nil {
			cmds = append(cmds, m.act.nextEvents())
		}
	case tickMsg:
		m.advance(msg.at)
		m.ticking = false
	case tea.KeyPressMsg:
		cmds = append(cmds, m.key(msg))
	case tea.PasteMsg:
		// The reason of a denial being typed takes it, or the editor.
		if !m.perm.paste(msg.Content) && m.focus == focusInput && m.picker == nil {
			m.input.paste(msg.Content)
		}
	case tea.MouseWheelMsg:
		m.pane.wheel(msg)
	case tea.MouseClickMsg:
		m.click(msg)
	case promptMsg:
		m.perm.add(msg, m.tree)
	case promptGoneMsg:
		if p := m.perm.drop(msg.id, m.tree); p != nil {
			m.bar.set("A permission prompt of %s was withdrawn: its call was cancelled.", p.label())
		}
	case modeMsg:
		m.bar.modeChanged(msg, m.turn.running)
	case modelMsg:
		m.modelChanged(msg)
	case controlMsg:
		if s := m.panel.controlled(msg, m.now); s != "" {
			m.bar.set("%s", s)
		}
	case textMsg:
		if msg.err != nil {
			m.pane.main().addError(fmt.Sprintf("%s: %v", msg.title, msg.err))
			break
		}
		m.pane.show("")
		m.pane.main().addInfo(msg.text)
	case sessionsMsg:
		if msg.err != nil {
			m.pane.main().addError(msg.err.Error())
		} else if p := newSessionPicker(msg.list, m.cfg.sessionID); p == nil {
			m.pane.main().addInfo("No other saved session of this project.")
		} else {
			m.picker = p
		}
	case historyMsg:
		m.pane.showHistory(msg)
	case runtimeMsg:
		cmds = append(cmds, m.runtimeChanged(msg))
	}
	cmds = append(cmds, m.pane.flushPrinted(m.width, m.profile, m.now), m.keepTicking())
	if m.quitting {
		cmds = append(cmds, tea.Quit)
	}
	return m, tea.Batch(cmds...)
}

// advance moves the clock forward (never back).
func (m *Model) advance(at time.Time) {
	if at.After(m.now) {
		m.now = at
	}
	m.bar.advance(m.now)
}

const (
	// quitWindow is how long a first Ctrl+C waits for the second.
	quitWindow = 2 * time.Second
	// statusTTL is how long a transient status stays.
	statusTTL = 6 * time.Second
	// tickEvery paces the spinner and the elapsed times.
	tickEvery = 100 * time.Millisecond
)

// keepTicking schedules the next tick while something on screen moves.
func (m *Model) keepTicking() tea.Cmd {
	if m.ticking || !(m.turn.running || m.perm.open() || m.bar.moving() || m.tree.Counts()[StateBackground] > 0) {
		return nil
	}
	m.ticking = true
	return tea.Tick(tickEvery, func(t time.Time) tea.Msg { return tickMsg{at: t} })
}

// controlled records the outcome of Ctrl+B or x in the tree; it returns
// what the status line says of it.
func (p *agentsPanel) controlled(msg controlMsg, now time.Time) string {
	if msg.err != nil {
		return fmt.Sprintf("Cannot %s %s: %v", msg.what, shortID(msg.agentID), msg.err)
	}
	switch msg.what {
	case "background":
		p.tree.SetStatus(msg.agentID, tasks.Backgrounded, now)
		return fmt.Sprintf("%s runs in the background now.", shortID(msg.agentID))
	case "stop":
		return fmt.Sprintf("Stopping %s.", shortID(msg.agentID))
	}
	return ""
}

// errNotAvailable explains a control the runtime does not offer yet.
var errNotAvailable = errors.New("not available yet")

// invalidate drops every cached render (the width or the style changed).
func (p *convoPane) invalidate() {
	for _, c := range p.convos {
		for _, it := range c.items {
			it.cache = renderCache{}
		}
	}
	p.md = markdown{}
}
