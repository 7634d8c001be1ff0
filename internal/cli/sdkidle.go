package cli

import (
	"context"

	"github.com/cadre-dev/cadre"
	"github.com/google/uuid"
)

// An SDK session between turns (S-7.3, S-13.2): background tasks go on
// after the turn that started them has written its result. While the
// session waits for the program's next message, their events stream, and
// a notification for the main agent runs it at once, as a turn of its own
// (init ... result), without waiting for a message. The session ends only
// when the input has ended and nothing runs.

// Session states of the system/session_state_changed message, as Claude
// Code names them. The Agent SDK reads them to know when a run has ended
// (a single-prompt query keeps its input open, for the callbacks of
// background agents, until the session is idle).
const (
	stateRunning = "running"
	stateIdle    = "idle"
)

// sessionStateJSON is the system/session_state_changed message. It is
// marked sdk_host_only: the SDK acts on it and does not show it to its
// user.
type sessionStateJSON struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	State     string `json:"state"`
	UUID      string `json:"uuid"`
	SessionID string `json:"session_id"`
	HostOnly  bool   `json:"sdk_host_only"`
}

// setState writes a session_state_changed message when the state changes:
// running from a turn's start until nothing runs any more (background
// tasks included), then idle. A session that has not run yet is not
// reported idle: the first change is to running, whenever the program's
// first message is read.
func (s *sdkSession) setState(state string) error {
	s.mu.Lock()
	if s.state == state || s.rt == nil || (s.state == "" && state == stateIdle) {
		s.mu.Unlock()
		return nil
	}
	s.state = state
	session := s.rt.SessionID()
	s.mu.Unlock()
	line, err := marshalLine(sessionStateJSON{Type: "system", Subtype: "session_state_changed", State: state,
		UUID: uuid.NewString(), SessionID: session, HostOnly: true})
	if err != nil {
		return err
	}
	return s.conn.WriteLine(line)
}

// kick wakes the loop: a message arrived (cancelIdle: the wait for
// background tasks ends, which runs no turn, so nothing is lost) or the
// input ended (the wait goes on: the session outlives its input while
// tasks run, and events sent between two waits would be missed).
func (s *sdkSession) kick(cancelIdle bool) {
	s.mu.Lock()
	if cancelIdle && s.idleCancel != nil {
		s.idleCancel()
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// idle streams the events of rt's background tasks until a notification
// waits for the main agent, no task runs, a message arrives or the input
// ends, or ctx ends.
func (s *sdkSession) idle(ctx context.Context, rt *cadre.Runtime) error {
	ictx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	if len(s.queue) > 0 || (s.inputEnd && s.serveErr != nil) {
		// A message came in since the loop looked.
		s.mu.Unlock()
		return nil
	}
	s.idleCancel = cancel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.idleCancel = nil
		s.mu.Unlock()
	}()
	s.mu.Lock()
	cfg := s.cfg
	s.mu.Unlock()
	tl := s.turnTally(rt, cfg)
	pr := newStreamPrinter(s.conn, tl, runInfoOf(s.p, cfg), s.o.includePartial)
	pr.hookEvents = s.o.includeHookEvents
	pr.session = rt.SessionID()
	var out printer = pr
	if s.o.debug != "" {
		out = &debugPrinter{next: pr, out: s.p.stderr, filter: s.o.debug}
	}
	for ev := range rt.Idle(ictx) {
		if err := out.event(ev); err != nil {
			return err
		}
	}
	return nil
}

// turnTally is the tally of one turn (or wait) of the session: its own
// numbers, the session's sub-agents.
func (s *sdkSession) turnTally(rt *cadre.Runtime, cfg cadre.Config) *tally {
	tl := newTally(nil, cfg.Prices)
	tl.shareTasks(s.tasks)
	tl.taskList = rt.Tasks
	return tl
}
