package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/cadre-dev/cadre/run"
)

// applyRun folds run items into the tree and the conversations.
func (m *Model) applyRun(items []runItem) []tea.Cmd {
	var cmds []tea.Cmd
	for _, it := range items {
		m.advance(it.at)
		if it.notify {
			cmds = append(cmds, m.notifyItem(it))
			continue
		}
		if it.end {
			cmds = append(cmds, m.endRun(it))
			continue
		}
		m.applyEvent(it.ev, it.at)
	}
	return cmds
}

func (m *Model) applyEvent(ev run.Event, at time.Time) {
	m.tree.Apply(ev, at)
	m.perm.nameTeammates(m.tree)
	switch ev.Type {
	case run.EventInit:
		m.turn.runStart = at
		if ev.AgentID == "" {
			m.pane.noteAt = len(m.pane.main().items)
		}
		if ev.Init != nil {
			m.cfg.sessionID = ev.Init.SessionID
			if ev.Init.Model != "" {
				m.cfg.model = ev.Init.Model
			}
		}
		return
	case run.EventTaskStarted, run.EventTaskPending:
		m.pane.taskStarted(ev)
		return
	case run.EventTaskCompleted:
		m.pane.taskEnded(ev)
		return
	case run.EventNotification:
		m.pane.notificationEvent(ev, at, m.now, m.turn.running)
		return
	case run.EventResult:
		if r := ev.Result; r != nil {
			// A failed run's error follows its result and is shown then.
			if r.IsError && r.Subtype != run.ErrorDuringExecution {
				m.pane.main().addError(resultProblem(r))
			}
		}
		return
	}
	m.turn.count(ev)
	m.pane.convoOf(ev.AgentID).apply(ev)
	switch ev.Type {
	case run.EventAssistant, run.EventToolStart, run.EventToolEnd:
		if ev.AgentID == "" {
			// What the main agent's next request brings comes after.
			m.pane.noteAt = len(m.pane.main().items)
		}
	}
}

func resultProblem(r *run.Result) string {
	switch r.Subtype {
	case run.ErrorMaxTurns:
		return fmt.Sprintf("The turn stopped at its limit of %d model requests.", r.NumTurns)
	}
	return "The turn ended in error (" + string(r.Subtype) + ")."
}

// taskStarted opens a sub-agent's conversation with the prompt its
// parent's Agent call gave it.
func (p *convoPane) taskStarted(ev run.Event) {
	info := ev.Task
	if info == nil || p.convos[info.AgentID] != nil {
		return
	}
	c := p.convoOf(info.AgentID)
	parent := info.Parent
	if parent == "main" {
		parent = ""
	}
	if pc := p.convos[parent]; pc != nil {
		if p := agentPrompt(pc.tool(info.ToolUseID)); p != "" {
			c.addUser(p)
		}
	}
}

// taskEnded closes a sub-agent's conversation with how it ended.
func (p *convoPane) taskEnded(ev run.Event) {
	res := ev.Subagent
	if res == nil {
		return
	}
	c := p.convoOf(res.AgentID)
	c.closeOpen("The agent ended before this call finished.")
	line := fmt.Sprintf("Agent %s: %s · %s tokens · %s", res.Status, plural(res.ToolUses, "tool use"), formatTokens(res.Usage.Total()), formatElapsed(res.Duration))
	if res.Error != "" {
		c.addError(res.Error)
	}
	c.addInfo(line)
}

// endRun closes a turn: open calls end, the tree settles, a queued prompt
// goes next.
func (m *Model) endRun(it runItem) tea.Cmd {
	userTurn := !m.turn.notifyTurn
	m.turn.running, m.turn.notifyTurn = false, false
	why := ""
	switch {
	case it.interrupted:
		why = "Interrupted by the user."
	case it.err != nil:
		why = it.err.Error()
	}
	for id, c := range m.pane.convos {
		if n := m.tree.Get(id); id == "" || (n != nil && (n.state == StateRunning || n.state == StatePending) && !m.tree.underBackground(n)) {
			c.closeOpen(orText(why, "The turn ended before this call finished."))
		}
	}
	m.tree.EndTurn(it.interrupted, errText(it), it.at)
	switch {
	case it.interrupted:
		m.pane.main().addInfo("Interrupted. What should the agent do instead?")
	case it.err != nil:
		m.pane.main().addError(it.err.Error())
	}
	// Prompts of the turn's agents are withdrawn by the prompter as their
	// calls are cancelled (promptGoneMsg); a background agent's stay.
	if it.interrupted && len(m.turn.queued) > 0 {
		// The user stopped the turn: what they queued behind it goes back
		// to the editor rather than out.
		m.input.setValue(strings.Join(append(m.turn.queued, m.input.Value()), "\n"))
		m.turn.queued = nil
		m.input.layout()
	}
	if len(m.turn.queued) > 0 {
		next := m.turn.queued[0]
		m.turn.queued = m.turn.queued[1:]
		return m.send(next)
	}
	if userTurn {
		// Background tasks of the session report back while it is idle;
		// a notification turn's watcher goes on by itself.
		return m.turn.startWatch(m.act.watch, false)
	}
	return nil
}

func errText(it runItem) string {
	if it.interrupted || it.err == nil {
		return ""
	}
	return it.err.Error()
}

func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// send starts a turn with text, or queues it behind the running one.
func (m *Model) send(text string) tea.Cmd {
	if m.turn.running {
		m.turn.queued = append(m.turn.queued, text)
		return nil
	}
	if m.act.start == nil {
		m.bar.set("No runtime to send the prompt to.")
		return nil
	}
	m.pane.show("")
	m.pane.main().addUser(text)
	m.turn.begin(m.now)
	return m.act.start(text)
}

// interrupt cancels the running turn; the transcript keeps what was said.
// act is the runtime's way to interrupt (nil when it has none).
func (t *turn) interrupt(act func() tea.Cmd) tea.Cmd {
	if !t.running || act == nil {
		return nil
	}
	return act()
}

// turnTokens sums up a turn for the spinner: output tokens so far, with
// the streamed text estimated at 4 bytes a token.
func (t *turn) turnTokens() int64 { return t.runOutput + int64(t.streamed/4) }
