package tui

import (
	"context"
	"fmt"
	"slices"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/cadre-dev/cadre/run"
	tasks "github.com/cadre-dev/cadre/task"
)

// Between the user's turns the main agent still hears from its background
// tasks (S-7.3): a watcher, owned by the app, runs
// Runtime.RunNotifications while tasks run or notifications wait. Each
// batch becomes a turn of the main agent that the UI shows like one of the
// user's (spinner, prompts queue behind it, Esc interrupts it). A prompt
// of the user's ends the watcher first, since a Run must not overlap
// RunNotifications; notifications a cancelled turn took go back to the
// runtime's queue and reach the model with the user's turn.

// watch starts the watcher of stream; it does nothing for a runtime that
// is not a Notifier.
func (a *app) watch(stream int, opened bool) tea.Cmd {
	return func() tea.Msg {
		a.mu.Lock()
		defer a.mu.Unlock()
		n, ok := a.rt.(Notifier)
		if a.closed || !ok {
			return nil
		}
		a.stopWatchLocked()
		ctx, cancel := context.WithCancel(a.ctx)
		done := make(chan struct{})
		a.cancelWatch, a.watchDone = cancel, done
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			defer close(done)
			defer cancel()
			watchNotifications(ctx, n, stream, opened, a.queue)
		}()
		return nil
	}
}

// stopWatchLocked ends the watcher and waits for it; a.mu is held (the
// watcher never takes it).
func (a *app) stopWatchLocked() {
	if a.cancelWatch == nil {
		return
	}
	a.cancelWatch()
	<-a.watchDone
	a.cancelWatch, a.watchDone = nil, nil
}

// watchNotifications runs n's notification turns into q until no task
// runs and nothing is queued, or ctx ends. Every turn it streams ends with
// an end item; the watcher's last item is a watchEnd. With opened (a
// saved session was just opened) it asks n at least once, since only
// then does the runtime read what an earlier process left undelivered.
func watchNotifications(ctx context.Context, n Notifier, stream int, opened bool, q *eventQueue) {
	var failed error
	defer func() {
		if r := recover(); r != nil {
			failed = fmt.Errorf("the notification turn crashed: %v", r)
		}
		q.push(runItem{watchEnd: true, notify: true, stream: stream, err: failed, at: time.Now()})
	}()
	for first := opened; ctx.Err() == nil && (first || n.RunningTasks() > 0 || n.PendingNotifications()); first = false {
		turn := false
		var last error
		for ev, err := range n.RunNotifications(ctx) {
			if err != nil {
				last = err
				continue
			}
			turn = turn || ev.Type == run.EventInit
			q.push(runItem{ev: ev, at: time.Now(), notify: true, stream: stream})
		}
		if turn {
			q.push(runItem{end: true, err: last, interrupted: ctx.Err() != nil && last != nil, notify: true, stream: stream, at: time.Now()})
			if last != nil {
				// A failed turn gave its notifications back: another would
				// fail the same way. The next turn of the user's takes them.
				return
			}
		}
		if last != nil && !turn && ctx.Err() == nil {
			// It failed before a turn: going round again would fail again.
			failed = fmt.Errorf("background tasks: %w", last)
			return
		}
	}
}

// startWatch asks for a watcher once a turn of the user's has ended, or
// a saved session was opened (opened).
// watch is the runtime's way to start one (nil when it has none).
func (t *turn) startWatch(watch func(stream int, opened bool) tea.Cmd, opened bool) tea.Cmd {
	if watch == nil {
		return nil
	}
	t.watchN++
	return watch(t.watchN, opened)
}

// notifyItem folds a watcher's item into the model: its first event opens
// a notification turn, its end closes it. Items of a watcher a prompt of
// the user's ended are shown, but leave the turn alone.
func (m *Model) notifyItem(it runItem) tea.Cmd {
	switch {
	case it.watchEnd:
		if it.err != nil {
			m.pane.main().addError(it.err.Error())
		}
		return nil
	case it.end:
		if m.turn.running && m.turn.notifyTurn && m.turn.stream == it.stream {
			return m.endRun(it)
		}
		// A stale turn's open calls end with it.
		m.pane.main().closeOpen("Interrupted by the prompt that followed.")
		return nil
	}
	if it.ev.Type == run.EventInit && !m.turn.running {
		m.turn.running, m.turn.notifyTurn, m.turn.stream = true, true, it.stream
		m.turn.begin(it.at)
	}
	m.applyEvent(it.ev, it.at)
	return nil
}

// noteOf is the UI's account of a delivered notification: the runtime's,
// with the tool uses, tokens and run time the tree counted.
func noteOf(n *tasks.Notification, tree *Tree, now time.Time) Notification {
	out := Notification{TaskID: n.TaskID, ToolUseID: n.ToolUseID, AgentType: n.AgentType, Description: n.Description,
		Status: n.Status, Summary: n.Summary, OutputFile: n.OutputFile}
	if node := tree.Get(n.TaskID); node != nil {
		out.ToolUses = node.ToolUses
		out.Usage.OutputTokens = node.Tokens // shown as a total only
		out.Duration = node.Elapsed(now)
		if out.AgentType == "" {
			out.AgentType = node.Type
		}
		if out.Description == "" {
			out.Description = node.Description
		}
		out.Result = node.Report
	}
	return out
}

// notificationEvent shows a notification the runtime delivered: in the
// main conversation for the main agent, in the agent's own otherwise;
// running says a turn of the main agent runs.
func (p *convoPane) notificationEvent(ev run.Event, at, now time.Time, running bool) {
	if ev.Notification == nil {
		return
	}
	note := noteOf(ev.Notification, p.tree, now)
	p.tree.SetStatus(note.TaskID, note.Status, at)
	c, it := p.convoOf(ev.AgentID), &item{kind: itemNotification, note: &note, done: true}
	if ev.AgentID == "" && running && p.noteAt >= c.printed && p.noteAt <= len(c.items) {
		// The runtime reports notifications delivered once the request
		// that carried them was answered, after the answer streamed: show
		// them before that answer, in the order delivered.
		c.items = slices.Insert(c.items, p.noteAt, it)
		p.noteAt++
		return
	}
	c.add(it)
}
