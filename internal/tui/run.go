package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/transcript"
)

// Runtime is the session the UI drives; *cadre.Runtime is one. The UI
// uses nothing else of it, so anything the UI does an embedder can do.
type Runtime interface {
	Run(ctx context.Context, prompt string) iter.Seq2[run.Event, error]
	SessionID() string
}

// ModeSetter is a Runtime whose main agent's permission mode can change
// between turns (Shift+Tab); *cadre.Runtime is one.
type ModeSetter interface {
	SetPermissionMode(mode permission.Mode) error
}

// ModelSetter is a Runtime whose main agent's model can change between
// turns (/model); *cadre.Runtime is one.
type ModelSetter interface {
	SetModel(model string) error
	Model() string
}

// TaskControl is a Runtime that can move a running foreground sub-agent
// to the background and stop a task with its descendants and shells
// (S-7.4): Ctrl+B and x in the tree. *cadre.Runtime is one (a sub-agent's
// task id is its agent id); with a Runtime that is not, both keys say they
// are not available.
type TaskControl interface {
	Background(ctx context.Context, agentID string) error
	Stop(ctx context.Context, taskID string) error
}

// Notifier is a Runtime whose background tasks report back while the
// main agent is idle (S-7.3): between turns the UI runs the main agent on
// each batch of notifications, streaming the background agents' events
// meanwhile. *cadre.Runtime is one.
type Notifier interface {
	RunNotifications(ctx context.Context) iter.Seq2[run.Event, error]
	RunningTasks() int
	PendingNotifications() bool
}

// Options configure the terminal UI.
type Options struct {
	// New makes the runtime of a new session, with the prompter through
	// which its permission prompts reach the UI (required). /clear calls
	// it again.
	New func(p permission.Prompter) (Runtime, error)
	// Resume makes the runtime of a saved session, its conversation
	// loaded, to continue it. Nil when sessions cannot be continued:
	// /resume then shows the saved session read-only.
	Resume func(sessionID string, p permission.Prompter) (Runtime, error)
	// ResumeID opens the UI on that saved session (cadre --resume,
	// --continue): when New's first runtime is that session (its
	// conversation loaded), the UI shows its conversation; otherwise
	// Resume opens it.
	ResumeID string
	// Cwd is the project directory; Model the main agent's model id;
	// Mode its starting permission mode; Rules the rules in force, for
	// /permissions.
	Cwd   string
	Model string
	Mode  permission.Mode
	Rules []permission.Rule
	// StateDir holds the session transcripts /resume lists; "" when
	// transcripts are off.
	StateDir string
	// Agents loads the agent definitions for /agents.
	Agents func(ctx context.Context) (*agentdef.Set, error)
	// AltScreen draws the UI on the terminal's alternate screen; without
	// it, finished conversation stays in the terminal's scrollback.
	AltScreen bool
	// Mouse turns on mouse reporting (wheel scrolling, clicks in the
	// tree); off, the terminal's own selection works.
	Mouse bool
	// Input and Output are the terminal; nil means stdin and stdout.
	Input  io.Reader
	Output io.Writer
	// Environ is the environment the terminal's abilities are read from
	// (TERM, NO_COLOR, COLORTERM); nil means the process's.
	Environ []string
}

// Run shows the UI until the user leaves it. The terminal is restored on
// every exit path, a panic included.
func Run(ctx context.Context, o Options) (err error) {
	if o.New == nil {
		return errors.New("tui: Options.New is required")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	closed := make(chan struct{})
	pr := &prompter{done: closed, send: func(tea.Msg) {}}
	a := &app{ctx: ctx, opts: o, queue: newEventQueue(), prompter: pr}
	defer func() { err = errors.Join(err, a.shutdown()) }()
	rt, err := o.New(pr)
	if err != nil {
		return err
	}
	a.rt = rt
	cfg := config{cwd: o.Cwd, model: o.Model, mode: o.Mode, rules: o.Rules, sessionID: rt.SessionID(),
		altScreen: o.AltScreen, mouse: o.Mouse, dark: true, canResume: o.Resume != nil}
	m := newModel(cfg, a.actions())
	opts := []tea.ProgramOption{tea.WithContext(ctx)}
	if o.Input != nil {
		opts = append(opts, tea.WithInput(o.Input))
	}
	if o.Output != nil {
		opts = append(opts, tea.WithOutput(o.Output))
	}
	if o.Environ != nil {
		opts = append(opts, tea.WithEnvironment(o.Environ))
	}
	p := tea.NewProgram(m, opts...)
	pr.mu.Lock()
	pr.send = p.Send
	pr.mu.Unlock()
	defer func() {
		// A panic in the UI's own goroutine: put the terminal back before
		// it goes on up.
		if r := recover(); r != nil {
			p.Kill()
			panic(r)
		}
	}()
	if o.ResumeID != "" {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			p.Send(a.openAtStart(o.ResumeID))
		}()
	}
	_, err = p.Run()
	close(closed)
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// app carries out the model's actions: it owns the goroutine that pumps a
// run's events into the queue, and the runtime of the session.
type app struct {
	ctx      context.Context
	opts     Options
	queue    *eventQueue
	prompter *prompter

	mu        sync.Mutex
	rt        Runtime
	retired   []Runtime // runtimes /clear or /resume replaced; closed at shutdown
	cancelRun context.CancelFunc
	closed    bool
	wg        sync.WaitGroup
	// The watcher runs the main agent on notifications between turns
	// (notifications.go); stopWatchLocked ends it before anything else
	// runs.
	cancelWatch context.CancelFunc
	watchDone   chan struct{}
}

func (a *app) actions() actions {
	act := actions{
		nextEvents: func() tea.Cmd { return a.queue.next(a.ctx) },
		start:      a.start,
		interrupt: func() tea.Cmd {
			return func() tea.Msg { a.interrupt(); return nil }
		},
		watch: a.watch,
		setMode: func(mode permission.Mode) tea.Cmd {
			return func() tea.Msg {
				ms, ok := a.runtime().(ModeSetter)
				if !ok {
					return modeMsg{mode: mode, err: errNotAvailable}
				}
				return modeMsg{mode: mode, err: ms.SetPermissionMode(mode)}
			}
		},
		setModel: func(name string) tea.Cmd {
			return func() tea.Msg {
				ms, ok := a.runtime().(ModelSetter)
				if !ok {
					return modelMsg{asked: name, err: errNotAvailable}
				}
				if err := ms.SetModel(name); err != nil {
					return modelMsg{asked: name, err: err}
				}
				return modelMsg{asked: name, model: ms.Model()}
			}
		},
		fresh: func() tea.Cmd {
			return func() tea.Msg {
				rt, err := a.opts.New(a.prompter)
				return a.open(rt, err, nil)
			}
		},
	}
	if _, ok := a.runtime().(TaskControl); ok {
		act.background = func(id string) tea.Cmd {
			return func() tea.Msg {
				err := a.runtime().(TaskControl).Background(a.ctx, id)
				return controlMsg{what: "background", agentID: id, err: err}
			}
		}
		act.stop = func(id string) tea.Cmd {
			return func() tea.Msg {
				err := a.runtime().(TaskControl).Stop(a.ctx, id)
				return controlMsg{what: "stop", agentID: id, err: err}
			}
		}
	}
	if a.opts.Agents != nil {
		act.agents = func() tea.Cmd {
			return func() tea.Msg {
				set, err := a.opts.Agents(a.ctx)
				if err != nil {
					return textMsg{title: "/agents", err: err}
				}
				return textMsg{title: "/agents", text: agentsTable(set)}
			}
		}
	}
	if a.opts.StateDir != "" {
		act.sessions = func() tea.Cmd {
			return func() tea.Msg {
				list, err := listSessions(a.opts.StateDir, a.opts.Cwd, 50)
				return sessionsMsg{list: list, err: err}
			}
		}
		act.history = func(s sessionInfo) tea.Cmd {
			return func() tea.Msg { return readHistory(s) }
		}
	}
	if a.opts.Resume != nil {
		act.resume = func(s sessionInfo) tea.Cmd {
			return func() tea.Msg {
				h := readHistory(s)
				rt, err := a.opts.Resume(s.ID, a.prompter)
				return a.open(rt, err, &h)
			}
		}
	}
	return act
}

func readHistory(s sessionInfo) historyMsg {
	entries, err := transcript.ReadFile(s.Path)
	return historyMsg{session: s, entries: entries, err: err}
}

// openAtStart opens the session named on the command line.
func (a *app) openAtStart(id string) tea.Msg {
	s := sessionInfo{ID: id, Path: transcript.SessionPath(a.opts.StateDir, a.opts.Cwd, id)}
	if rt := a.runtime(); rt != nil && rt.SessionID() == id {
		// New made the session's runtime with its conversation loaded
		// (the CLI's --resume): show the conversation.
		h := readHistory(s)
		return runtimeMsg{sessionID: id, resumed: &h}
	}
	if a.opts.Resume != nil {
		h := readHistory(s)
		rt, err := a.opts.Resume(id, a.prompter)
		return a.open(rt, err, &h)
	}
	return readHistory(s)
}

// open makes rt the session's runtime.
func (a *app) open(rt Runtime, err error, h *historyMsg) tea.Msg {
	if err != nil {
		return runtimeMsg{err: fmt.Errorf("open session: %w", err)}
	}
	a.mu.Lock()
	a.stopWatchLocked() // the watcher belongs to the runtime being replaced
	if a.rt != nil && a.rt != rt {
		// Closed at shutdown, once no turn of it can still be running.
		a.retired = append(a.retired, a.rt)
	}
	a.rt = rt
	a.mu.Unlock()
	return runtimeMsg{sessionID: rt.SessionID(), resumed: h}
}

func (a *app) runtime() Runtime {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.rt
}

// start begins a turn: one goroutine, owned by the app, drains the run
// into the queue and ends with it.
func (a *app) start(prompt string) tea.Cmd {
	return func() tea.Msg {
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.closed {
			return nil
		}
		// Run must not overlap RunNotifications: the watcher ends first.
		a.stopWatchLocked()
		ctx, cancel := context.WithCancel(a.ctx)
		a.cancelRun = cancel
		rt := a.rt
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			defer cancel()
			pump(ctx, rt, prompt, a.queue)
		}()
		return nil
	}
}

func (a *app) interrupt() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cancelRun != nil {
		a.cancelRun()
	}
	// A turn answering notifications is the watcher's: Esc ends it, and
	// the watcher with it until the next turn of the user's ends.
	if a.cancelWatch != nil {
		a.cancelWatch()
	}
}

// shutdown cancels the running turn, waits for its pump to end, and
// closes every runtime the UI opened (their background tasks, MCP servers
// and SessionEnd hooks end with them).
func (a *app) shutdown() error {
	a.mu.Lock()
	a.closed = true
	if a.cancelRun != nil {
		a.cancelRun()
	}
	if a.cancelWatch != nil {
		a.cancelWatch()
	}
	a.mu.Unlock()
	a.wg.Wait()
	a.mu.Lock()
	defer a.mu.Unlock()
	var errs []error
	for _, rt := range append(a.retired, a.rt) {
		if c, ok := rt.(interface{ Close() error }); ok {
			if err := c.Close(); err != nil {
				errs = append(errs, fmt.Errorf("close session %s: %w", rt.SessionID(), err))
			}
		}
	}
	a.retired, a.rt = nil, nil
	return errors.Join(errs...)
}

// pump reads one run to its end into q. It never waits for the UI.
func pump(ctx context.Context, rt Runtime, prompt string, q *eventQueue) {
	var last error
	defer func() {
		if r := recover(); r != nil {
			last = fmt.Errorf("the run crashed: %v", r)
		}
		q.push(runItem{end: true, err: last, interrupted: ctx.Err() != nil && last != nil, at: time.Now()})
	}()
	for ev, err := range rt.Run(ctx, prompt) {
		if err != nil {
			last = err
			continue
		}
		q.push(runItem{ev: ev, at: time.Now()})
	}
}

// eventQueue hands run items from the pump to the model: pushing never
// blocks, and the model takes everything that piled up in one message.
type eventQueue struct {
	mu    sync.Mutex
	items []runItem
	ready chan struct{}
}

func newEventQueue() *eventQueue { return &eventQueue{ready: make(chan struct{}, 1)} }

func (q *eventQueue) push(it runItem) {
	q.mu.Lock()
	q.items = append(q.items, it)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// take returns every item queued, oldest first.
func (q *eventQueue) take() []runItem {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.items
	q.items = nil
	return out
}

// next is the command that waits for items (or for ctx to end).
func (q *eventQueue) next(ctx context.Context) tea.Cmd {
	return func() tea.Msg {
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-q.ready:
			}
			if items := q.take(); len(items) > 0 {
				return eventsMsg{items: items}
			}
		}
	}
}

// The library's runtime drives Ctrl+B and x, /model, and the turns on
// notifications between the user's.
var (
	_ TaskControl = (*cadre.Runtime)(nil)
	_ ModelSetter = (*cadre.Runtime)(nil)
	_ Notifier    = (*cadre.Runtime)(nil)
)
