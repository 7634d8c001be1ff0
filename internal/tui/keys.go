package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/cadre-dev/cadre/permission"
)

// key handles a key press: what is on top (a prompt, a confirmation, the
// session picker) gets it first, then the UI's own keys, then the focused
// area.
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	s := k.String()
	switch s {
	case "ctrl+c":
		return m.ctrlC()
	case "ctrl+d":
		if m.input.Value() == "" && !m.perm.open() {
			m.quitting = true
			return m.interrupt()
		}
	}
	switch {
	case m.perm.open():
		info, expand := m.perm.key(k, m.tree)
		if info != "" {
			m.main().addInfo(info)
		}
		if expand {
			m.expanded = !m.expanded
		}
		return nil
	case m.confirmStop != "":
		return m.confirmKey(s)
	case m.picker != nil:
		return m.pickerKey(s)
	}
	switch s {
	case "shift+tab":
		return m.cycleMode()
	case "ctrl+o":
		m.expanded = !m.expanded
		return nil
	case "ctrl+b":
		return m.toBackground()
	case "pgup":
		m.scrollBy(m.convoHeight() - 2)
		return nil
	case "pgdown":
		m.scrollBy(-(m.convoHeight() - 2))
		return nil
	case "esc":
		return m.escape()
	case "tab":
		if m.focus == focusInput && strings.HasPrefix(m.input.Value(), "/") {
			if msg := m.input.complete(); msg != "" {
				m.setStatus("%s", msg)
			}
			return nil
		}
		m.toggleFocus()
		return nil
	}
	if m.focus == focusTree {
		return m.treeKey(s)
	}
	if s == "enter" {
		return m.submit()
	}
	return m.input.key(k)
}

// submit sends the editor's text: a slash command, or a prompt.
func (m *Model) submit() tea.Cmd {
	text, ok := m.input.take()
	if !ok {
		return nil
	}
	if strings.HasPrefix(text, "/") {
		return m.slash(text)
	}
	return m.send(text)
}

// paste gives pasted text to what has the keyboard: the reason of a
// denial being typed, or the editor.
func (m *Model) paste(text string) {
	if m.perm.paste(text) || m.focus != focusInput || m.picker != nil {
		return
	}
	m.input.paste(text)
}

// ctrlC interrupts a running turn, clears the input, or, pressed twice,
// quits.
func (m *Model) ctrlC() tea.Cmd {
	// Ticks run only while something moves: after an idle spell now is
	// stale, and the window must count from this press, not from the last
	// tick (the next tick would otherwise end it at once).
	m.advance(m.clock())
	if !m.quitAt.IsZero() && m.now.Sub(m.quitAt) <= quitWindow {
		m.quitting = true
		return m.interrupt()
	}
	m.quitAt = m.now
	if m.input.Value() != "" {
		m.input.Reset()
		m.input.layout()
	}
	return m.interrupt()
}

// escape closes what is open, in order: an agent's (or a saved
// session's) view, the tree's focus; then it interrupts the turn.
func (m *Model) escape() tea.Cmd {
	switch {
	case m.view != "":
		m.view, m.scroll = "", 0
	case m.focus == focusTree:
		m.toggleFocus()
	case m.running:
		m.setStatus("Interrupting…")
		return m.interrupt()
	}
	return nil
}

func (m *Model) toggleFocus() {
	if m.focus == focusTree {
		m.focus = focusInput
		m.input.focus()
		return
	}
	m.focus = focusTree
	m.input.blur()
	m.clampSel()
}

// treeKey handles a key while the agent tree has the focus.
func (m *Model) treeKey(s string) tea.Cmd {
	rows := m.tree.Rows()
	switch s {
	case "up", "k":
		m.treeSel = max(m.treeSel-1, 0)
	case "down", "j":
		m.treeSel = min(m.treeSel+1, len(rows)-1)
	case "home", "g":
		m.treeSel = 0
	case "end", "G":
		m.treeSel = len(rows) - 1
	case "enter", "space":
		m.clampSel()
		m.view, m.scroll = rows[m.treeSel].Node.ID, 0
	case "c":
		if n := m.tree.ClearFinished(); n > 0 {
			m.setStatus("Cleared %d finished agents.", n)
			if m.view != "" && m.tree.Get(m.view) == nil && !strings.HasPrefix(m.view, viewSession) {
				m.view = ""
			}
		}
		m.clampSel()
	case "x":
		return m.askStop()
	case "i", "/":
		m.toggleFocus()
		if s == "/" {
			m.input.setValue("/")
		}
	}
	return nil
}

func (m *Model) clampSel() {
	n := len(m.tree.Rows())
	m.treeSel = max(0, min(m.treeSel, n-1))
}

// selected is the agent selected in the tree, or nil.
func (m *Model) selected() *Node {
	rows := m.tree.Rows()
	if m.treeSel < 0 || m.treeSel >= len(rows) {
		return nil
	}
	return rows[m.treeSel].Node
}

// toBackground moves the selected running foreground child to the
// background, or the only one when none is selected (S-7.4).
func (m *Model) toBackground() tea.Cmd {
	var target *Node
	if n := m.selected(); m.focus == focusTree && n != nil && n.ID != "" {
		target = n
	} else {
		var fg []*Node
		for _, r := range m.tree.Rows() {
			if n := r.Node; n.ID != "" && n.state == StateRunning && !n.Background {
				fg = append(fg, n)
			}
		}
		switch len(fg) {
		case 0:
			m.setStatus("No sub-agent runs in the foreground.")
			return nil
		case 1:
			target = fg[0]
		default:
			m.setStatus("%d sub-agents run in the foreground: select one in the tree (tab) and press ctrl+b.", len(fg))
			return nil
		}
	}
	if target.state != StateRunning || target.Background {
		m.setStatus("%s %s is %s, not running in the foreground.", target.Type, shortID(target.ID), m.tree.State(target))
		return nil
	}
	if m.act.background == nil {
		m.setStatus("ctrl+b: moving an agent to the background is %v (the runtime needs Background, issue 11).", errNotAvailable)
		return nil
	}
	return m.act.background(target.ID)
}

// askStop asks to confirm stopping the selected agent.
func (m *Model) askStop() tea.Cmd {
	n := m.selected()
	if n == nil || n.ID == "" {
		m.setStatus("Select a sub-agent to stop; Esc interrupts the main agent.")
		return nil
	}
	if !n.state.Live() {
		m.setStatus("%s %s has already ended (%s).", n.Type, shortID(n.ID), n.state)
		return nil
	}
	if m.act.stop == nil {
		m.setStatus("x: stopping an agent is %v (the runtime needs Stop, issue 11).", errNotAvailable)
		return nil
	}
	m.confirmStop = n.ID
	return nil
}

func (m *Model) confirmKey(s string) tea.Cmd {
	id := m.confirmStop
	m.confirmStop = ""
	if s == "y" || s == "enter" {
		return m.act.stop(id)
	}
	m.setStatus("Not stopped.")
	return nil
}

// modeCycle is the order Shift+Tab walks the main agent's modes in; a
// session started in another mode (bypassPermissions, dontAsk) keeps it
// in the cycle.
func (m *Model) modeCycle() []permission.Mode {
	cycle := []permission.Mode{permission.ModeDefault, permission.ModeAcceptEdits, permission.ModePlan}
	start := m.cfg.mode
	if start != "" {
		found := false
		for _, c := range cycle {
			found = found || c == start
		}
		if !found {
			cycle = append(cycle, start)
		}
	}
	return cycle
}

func (m *Model) cycleMode() tea.Cmd {
	cycle := m.modeCycle()
	next := cycle[0]
	for i, c := range cycle {
		if c == m.mode {
			next = cycle[(i+1)%len(cycle)]
		}
	}
	if m.act.setMode == nil {
		m.setStatus("Changing the permission mode is %v.", errNotAvailable)
		return nil
	}
	return m.act.setMode(next)
}

func (m *Model) scrollBy(n int) {
	m.scroll = max(0, m.scroll+n)
}

func (m *Model) wheel(msg tea.MouseWheelMsg) {
	switch msg.Mouse().Button {
	case tea.MouseWheelUp:
		m.scrollBy(3)
	case tea.MouseWheelDown:
		m.scrollBy(-3)
	}
}

// click selects an agent in the tree panel.
func (m *Model) click(msg tea.MouseClickMsg) {
	mouse := msg.Mouse()
	if row, ok := m.treeRowAt(mouse.X, mouse.Y); ok {
		if m.focus != focusTree {
			m.toggleFocus()
		}
		if m.treeSel == row {
			m.view, m.scroll = m.tree.Rows()[row].Node.ID, 0
		}
		m.treeSel = row
	}
}
