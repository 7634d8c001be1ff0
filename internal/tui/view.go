package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/tool"
)

// The smallest terminal the layout is made for, and the width from which
// the agent tree moves beside the conversation.
const (
	minWidth    = 80
	minHeight   = 24
	sideMinimum = 140
)

// sidePanel reports whether the tree is drawn beside the conversation,
// and its width.
func sidePanel(width int) (bool, int) {
	if width < sideMinimum {
		return false, 0
	}
	return true, max(56, min(width*2/5, 80))
}

// shown reports whether the tree panel is on screen: always beside a
// wide conversation, below a narrow one once there are sub-agents.
func (p *agentsPanel) shown(side, focused bool) bool {
	return side || p.tree.Len() > 1 || focused || len(p.tree.Tasks()) > 0
}

// View renders the screen.
func (m *Model) View() tea.View {
	content := m.render()
	v := tea.NewView(content)
	v.AltScreen = m.cfg.altScreen
	if m.cfg.mouse {
		v.MouseMode = tea.MouseModeCellMotion
	}
	v.WindowTitle = "cadre"
	// The terminal's cursor is in the editor, when nothing covers it.
	if m.focus == focusInput && !m.perm.open() && m.picker == nil && m.panel.confirmStop == "" {
		if c := m.input.cursor(content); c != nil {
			v.Cursor = c
		}
	}
	return v
}

// render draws the whole screen as text; View adds the terminal settings.
func (m *Model) render() string {
	if m.width < 20 || m.height < 8 {
		return strings.Join(padLines([]string{"cadre needs a larger terminal"}, m.width, m.height), "\n")
	}
	bottom := m.bottom()
	bh := lipgloss.Height(bottom)
	side, panelW := sidePanel(m.width)
	convoW := m.width
	if side {
		convoW = m.width - panelW
	}
	var tree string
	if !side && m.panel.shown(side, m.focus == focusTree) {
		tree = strings.Join(m.panel.lines(m.width, narrowTreeRows(m.height), false, m.focus == focusTree, m.now), "\n")
	}
	th := 0
	if tree != "" {
		th = lipgloss.Height(tree)
	}
	ch := m.height - bh - th
	if !m.cfg.altScreen {
		ch = min(ch, m.pane.liveHeight(convoW, m.now))
	}
	ch = max(ch, 1)
	conv := m.pane.convoView(convoW, ch, m.now)
	top := strings.Join(conv, "\n")
	if side {
		left := padLines(conv, convoW, ch)
		right := m.panel.sideLines(panelW, ch, m.focus == focusTree, m.now)
		for i := range left {
			left[i] += right[i]
		}
		top = strings.Join(left, "\n")
	}
	parts := []string{top}
	if tree != "" {
		parts = append(parts, tree)
	}
	parts = append(parts, bottom)
	out := strings.Join(parts, "\n")
	if m.cfg.altScreen {
		// Below the size the layout is made for, the top gives way.
		if lines := strings.Split(out, "\n"); len(lines) > m.height {
			out = strings.Join(lines[len(lines)-m.height:], "\n")
		}
	}
	return out
}

// narrowTreeRows is how many agents the tree below the conversation
// shows at most.
func narrowTreeRows(height int) int {
	return max(3, (height-12)/2)
}

// padLines makes lines exactly w cells wide and h lines high (the last h
// when there are more), in a new slice.
func padLines(lines []string, w, h int) []string {
	if len(lines) > h {
		lines = lines[len(lines)-h:]
	}
	out := make([]string, h)
	copy(out, lines)
	for i, l := range out {
		cw := cellWidth(l)
		if cw > w {
			l = ansi.TruncateWc(l, w, "…")
			cw = w
		}
		if cw < w {
			l += strings.Repeat(" ", w-cw)
		}
		out[i] = l
	}
	return out
}

// viewed is the conversation on screen.
func (p *convoPane) viewed() *convo {
	if c := p.convos[p.view]; c != nil {
		return c
	}
	return p.main()
}

// liveHeight is the height the conversation needs in inline mode: the
// items not yet written to the scrollback.
func (p *convoPane) liveHeight(width int, now time.Time) int {
	c := p.viewed()
	from := c.printed
	if p.view != "" {
		from = 0
	}
	h := 0
	for _, it := range c.items[from:] {
		h += len(p.renderItem(it, width, now)) + 1
	}
	if p.view != "" {
		h++
	}
	return h
}

// convoView renders the bottom of the conversation on screen that fits
// height, scrolled up by m.pane.scroll lines.
func (p *convoPane) convoView(width, height int, now time.Time) []string {
	c := p.viewed()
	var header string
	if p.view != "" {
		header = p.viewHeader(width)
		height--
	}
	from := 0
	if !p.cfg.altScreen && p.view == "" {
		from = c.printed
	}
	need := height + p.scroll
	var lines []string
	for i := len(c.items) - 1; i >= from && len(lines) < need; i-- {
		block := p.renderItem(c.items[i], width, now)
		lines = append(append(append([]string(nil), block...), ""), lines...)
	}
	if len(lines) > 0 {
		lines = lines[:len(lines)-1]
	}
	maxScroll := max(len(lines)-height, 0)
	if p.scroll > maxScroll && len(lines) < need {
		p.scroll = maxScroll
	}
	end := len(lines) - p.scroll
	start := max(end-height, 0)
	out := lines[start:max(end, start)]
	if p.cfg.altScreen {
		for len(out) < height {
			out = append([]string{""}, out...)
		}
	}
	if header != "" {
		out = append([]string{header}, out...)
	}
	return out
}

// viewHeader names the agent or saved session whose conversation is on
// screen instead of the main one.
func (p *convoPane) viewHeader(width int) string {
	st := p.st
	what := ""
	if s, ok := p.sessions[p.view]; ok {
		what = "saved session " + shortID(s.ID) + " · read-only · esc returns"
	} else if n := p.tree.Get(p.view); n != nil {
		what = fmt.Sprintf("%s %s · %s · %s · read-only · esc returns", n.Type, n.ID, orText(n.Model, "?"), p.tree.State(n))
	}
	return st.title.Render(clip("── "+what+" ", width))
}

// bottom renders what is under the conversation: queued prompts, the
// spinner, the input (or the prompt, the picker, a confirmation) and the
// status line.
func (m *Model) bottom() string {
	var parts []string
	parts = append(parts, m.turn.queuedLines(m.width)...)
	if line := m.turn.spinnerLine(m.now, m.width, m.pane.main().todos, m.perm.open()); line != "" {
		parts = append(parts, line)
	}
	if m.bar.text != "" && m.bar.quitAt.IsZero() {
		for _, l := range wrapLines(m.bar.text, m.width-2) {
			parts = append(parts, "  "+m.st.warn.Render(l))
		}
	}
	switch {
	case m.perm.open():
		parts = append(parts, m.perm.view(m.width, max(m.height-22, 4), m.cfg.cwd, m.pane.expanded))
	case m.picker != nil:
		parts = append(parts, m.picker.view(&m.st, m.width, max(m.height-10, 5), m.cfg.canResume))
	case m.panel.confirmStop != "":
		parts = append(parts, m.panel.confirmView(m.width))
	default:
		parts = append(parts, m.input.view(m.focus == focusInput))
		if hint := m.input.hint(); hint != "" {
			parts = append(parts, hint)
		}
	}
	side, _ := sidePanel(m.width)
	parts = append(parts, m.bar.view(m.width, m.height, m.focus == focusTree, m.pane.view != "", side, m.turn.tokens))
	return strings.Join(parts, "\n")
}

// spinnerFrames are the spinner's frames, one a tick.
const spinnerFrames = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

// spinnerLine shows the turn while it runs: what the agent does (the
// todo in progress, or waiting for the user's answer), how long, and its
// output tokens.
func (t *turn) spinnerLine(now time.Time, width int, todos []tool.Todo, waiting bool) string {
	if !t.running {
		return ""
	}
	st := t.st
	el := time.Duration(0)
	if !t.runStart.IsZero() && now.After(t.runStart) {
		el = now.Sub(t.runStart)
	}
	frames := []rune(spinnerFrames)
	frame := string(frames[int(el/tickEvery)%len(frames)])
	what := "Working…"
	doing, progress := todoProgress(todos) // todos.go
	if doing != "" {
		what = doing + "…"
	}
	if waiting {
		what = "Waiting for your answer…"
	}
	if progress != "" {
		progress += " · "
	}
	detail := fmt.Sprintf(" (%s · %s↓ %s tokens · esc to interrupt)", formatElapsed(el), progress, formatTokens(t.turnTokens()))
	return clip(st.accent.Render(frame+" "+what)+st.dim.Render(detail), width)
}

func modeLabel(mode permission.Mode) string {
	switch mode {
	case permission.ModeAcceptEdits:
		return "⏵⏵ accept edits"
	case permission.ModePlan:
		return "⏸ plan mode"
	case permission.ModeBypassPermissions:
		return "⚠ bypass permissions"
	case permission.ModeDontAsk:
		return "dontAsk mode"
	}
	return "default mode"
}

// view shows the mode, a hint or the Ctrl+C window, the model and the
// session's tokens on a terminal width×height; treeFocus says the tree
// has the keyboard, viewing that an agent's or a saved session's
// conversation is on screen, side that the tree is beside it.
func (b *statusBar) view(width, height int, treeFocus, viewing, side bool, tokens int64) string {
	st := b.st
	left := st.accent.Render(modeLabel(b.mode)) + st.dim.Render(" (shift+tab)")
	var middle string
	switch {
	case !b.quitAt.IsZero():
		middle = st.warn.Render("Press Ctrl+C again to exit")
	case width < minWidth || height < minHeight:
		middle = st.warn.Render(fmt.Sprintf("terminal %d×%d is below %d×%d", width, height, minWidth, minHeight))
	case treeFocus:
		middle = st.dim.Render("⏎ open · x stop · c clear · ^B bg · tab")
		if side {
			middle = st.dim.Render("tab back to the prompt")
		}
	case viewing:
		middle = st.dim.Render("esc returns to the conversation")
	default:
		middle = st.dim.Render("tab agents · /help")
	}
	right := st.dim.Render(formatTokens(tokens) + " tokens")
	if side {
		right = st.dim.Render(orText(b.cfg.model, "?")) + " · " + right
	}
	room := width - cellWidth(left) - cellWidth(right) - 3
	if room < 10 {
		return clip(left+"  "+middle, width)
	}
	return padBetween(left+"  "+clip(middle, room), right, width)
}

// flushPrinted writes finished items of the main conversation to the
// terminal's scrollback (inline mode), in order.
func (p *convoPane) flushPrinted(width int, profile colorprofile.Profile, now time.Time) tea.Cmd {
	if p.cfg.altScreen {
		return nil
	}
	c := p.main()
	var out []string
	for c.printed < len(c.items) {
		it := c.items[c.printed]
		if !it.done || it == c.streaming {
			break
		}
		out = append(out, strings.Join(p.renderItem(it, width, now), "\n"), "")
		c.printed++
	}
	if len(out) == 0 {
		return nil
	}
	var b strings.Builder
	w := &colorprofile.Writer{Forward: &b, Profile: profile}
	_, _ = w.WriteString(strings.Join(out, "\n"))
	return tea.Println(b.String())
}
