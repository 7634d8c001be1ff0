package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

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
			return m.turn.interrupt(m.act.interrupt)
		}
	}
	switch {
	case m.perm.open():
		info, expand := m.perm.key(k, m.tree)
		if info != "" {
			m.pane.main().addInfo(info)
		}
		if expand {
			m.pane.expanded = !m.pane.expanded
		}
		return nil
	case m.panel.confirmStop != "":
		if id := m.panel.confirmKey(s); id != "" {
			return m.act.stop(id)
		}
		m.bar.set("Not stopped.")
		return nil
	case m.picker != nil:
		return m.pickerKey(s)
	}
	switch s {
	case "shift+tab":
		if m.act.setMode == nil {
			m.bar.set("Changing the permission mode is %v.", errNotAvailable)
			return nil
		}
		return m.act.setMode(m.bar.nextMode())
	case "ctrl+o":
		m.pane.expanded = !m.pane.expanded
		return nil
	case "ctrl+b":
		// The selected running foreground child goes to the background,
		// or the only one when none is selected (S-7.4).
		target, why := m.panel.foreground(m.focus == focusTree)
		switch {
		case target == nil:
			m.bar.set("%s", why)
		case m.act.background == nil:
			m.bar.set("ctrl+b: moving an agent to the background is %v (the runtime needs Background, issue 11).", errNotAvailable)
		default:
			return m.act.background(target.ID)
		}
		return nil
	case "pgup", "pgdown":
		// A page is the conversation's height on the last layout, less two.
		page := max(m.height-lipgloss.Height(m.bottom())-narrowTreeRows(m.height)-1, 3) - 2
		if s == "pgdown" {
			page = -page
		}
		m.pane.scrollBy(page)
		return nil
	case "esc":
		return m.escape()
	case "tab":
		if m.focus == focusInput && strings.HasPrefix(m.input.Value(), "/") {
			if msg := m.input.complete(); msg != "" {
				m.bar.set("%s", msg)
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

// ctrlC interrupts a running turn, clears the input, or, pressed twice,
// quits.
func (m *Model) ctrlC() tea.Cmd {
	// Ticks run only while something moves: after an idle spell now is
	// stale, and the window must count from this press, not from the last
	// tick (the next tick would otherwise end it at once).
	m.advance(m.clock())
	if m.bar.secondCtrlC() {
		m.quitting = true
		return m.turn.interrupt(m.act.interrupt)
	}
	if m.input.Value() != "" {
		m.input.Reset()
		m.input.layout()
	}
	return m.turn.interrupt(m.act.interrupt)
}

// escape closes what is open, in order: an agent's (or a saved
// session's) view, the tree's focus; then it interrupts the turn.
func (m *Model) escape() tea.Cmd {
	switch {
	case m.pane.view != "":
		m.pane.show("")
	case m.focus == focusTree:
		m.toggleFocus()
	case m.turn.running:
		m.bar.set("Interrupting…")
		return m.turn.interrupt(m.act.interrupt)
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
	m.panel.clampSel()
}

// treeKey handles a key while the agent tree has the focus.
func (m *Model) treeKey(s string) tea.Cmd {
	if m.panel.move(s) {
		return nil
	}
	switch s {
	case "enter", "space":
		m.panel.clampSel()
		m.pane.show(m.panel.selected().ID)
	case "c":
		if n := m.tree.ClearFinished(); n > 0 {
			m.bar.set("Cleared %d finished agents.", n)
			if m.pane.view != "" && m.tree.Get(m.pane.view) == nil && !strings.HasPrefix(m.pane.view, viewSession) {
				m.pane.view = ""
			}
		}
		m.panel.clampSel()
	case "x":
		if why := m.panel.askStop(m.act.stop != nil); why != "" {
			m.bar.set("%s", why)
		}
	case "i", "/":
		m.toggleFocus()
		if s == "/" {
			m.input.setValue("/")
		}
	}
	return nil
}

// modeCycle is the order Shift+Tab walks the main agent's modes in; a
// session started in another mode (bypassPermissions, dontAsk) keeps it
// in the cycle.
func (b *statusBar) modeCycle() []permission.Mode {
	cycle := []permission.Mode{permission.ModeDefault, permission.ModeAcceptEdits, permission.ModePlan}
	start := b.cfg.mode
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

// nextMode is the mode Shift+Tab switches to.
func (b *statusBar) nextMode() permission.Mode {
	cycle := b.modeCycle()
	next := cycle[0]
	for i, c := range cycle {
		if c == b.mode {
			next = cycle[(i+1)%len(cycle)]
		}
	}
	return next
}

// wheel scrolls the conversation with the mouse wheel.
func (p *convoPane) wheel(msg tea.MouseWheelMsg) {
	switch msg.Mouse().Button {
	case tea.MouseWheelUp:
		p.scrollBy(3)
	case tea.MouseWheelDown:
		p.scrollBy(-3)
	}
}

// click selects an agent in the tree panel.
func (m *Model) click(msg tea.MouseClickMsg) {
	mouse := msg.Mouse()
	side, panelW := sidePanel(m.width)
	if !m.panel.shown(side, m.focus == focusTree) {
		return
	}
	top := 0
	if !side {
		top = m.height - lipgloss.Height(m.bottom()) - min(narrowTreeRows(m.height), len(m.tree.Rows()))
	}
	if row, ok := m.panel.rowAt(mouse.X, mouse.Y, side, m.width-panelW, top); ok {
		if m.focus != focusTree {
			m.toggleFocus()
		}
		if m.panel.sel == row {
			m.pane.show(m.tree.Rows()[row].Node.ID)
		}
		m.panel.sel = row
	}
}
