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
)

// The smallest terminal the layout is made for, and the width from which
// the agent tree moves beside the conversation.
const (
	minWidth    = 80
	minHeight   = 24
	sideMinimum = 140
)

// layout sizes the input to the terminal.
func (m *Model) layout() {
	m.input.SetWidth(max(m.width-4, 10))
}

// sidePanel reports whether the tree is drawn beside the conversation,
// and its width.
func (m *Model) sidePanel() (bool, int) {
	if m.width < sideMinimum {
		return false, 0
	}
	return true, max(56, min(m.width*2/5, 80))
}

// showTree reports whether the tree panel is on screen: always beside a
// wide conversation, below a narrow one once there are sub-agents.
func (m *Model) showTree() bool {
	side, _ := m.sidePanel()
	return side || m.tree.Len() > 1 || m.focus == focusTree
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
	if c := m.cursor(content); c != nil {
		v.Cursor = c
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
	side, panelW := m.sidePanel()
	convoW := m.width
	if side {
		convoW = m.width - panelW
	}
	var tree string
	if !side && m.showTree() {
		tree = strings.Join(m.treeLines(m.width, m.narrowTreeRows(), false), "\n")
	}
	th := 0
	if tree != "" {
		th = lipgloss.Height(tree)
	}
	ch := m.height - bh - th
	if !m.cfg.altScreen {
		ch = min(ch, m.liveHeight(convoW))
	}
	ch = max(ch, 1)
	conv := m.convoView(convoW, ch)
	top := strings.Join(conv, "\n")
	if side {
		left := padLines(conv, convoW, ch)
		right := m.sidePanelLines(panelW, ch)
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

// convoHeight is the conversation's height on the last layout, for
// paging.
func (m *Model) convoHeight() int {
	return max(m.height-lipgloss.Height(m.bottom())-m.narrowTreeRows()-1, 3)
}

// narrowTreeRows is how many agents the tree below the conversation
// shows at most.
func (m *Model) narrowTreeRows() int {
	return max(3, (m.height-12)/2)
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

// sidePanelLines is the tree beside the conversation: a rule on its left
// and the tree, height lines.
func (m *Model) sidePanelLines(width, height int) []string {
	rule := m.st.dim.Render("│") + " "
	lines := m.treeLines(width-2, height, true)
	for len(lines) < height {
		lines = append(lines, "")
	}
	for i, l := range lines[:height] {
		lines[i] = rule + l
	}
	return lines[:height]
}

// viewed is the conversation on screen.
func (m *Model) viewed() *convo {
	if c := m.convos[m.view]; c != nil {
		return c
	}
	return m.main()
}

// liveHeight is the height the conversation needs in inline mode: the
// items not yet written to the scrollback.
func (m *Model) liveHeight(width int) int {
	c := m.viewed()
	from := c.printed
	if m.view != "" {
		from = 0
	}
	h := 0
	for _, it := range c.items[from:] {
		h += len(m.renderItem(it, width)) + 1
	}
	if m.view != "" {
		h++
	}
	return h
}

// convoView renders the bottom of the conversation on screen that fits
// height, scrolled up by m.scroll lines.
func (m *Model) convoView(width, height int) []string {
	c := m.viewed()
	var header string
	if m.view != "" {
		header = m.viewHeader(width)
		height--
	}
	from := 0
	if !m.cfg.altScreen && m.view == "" {
		from = c.printed
	}
	need := height + m.scroll
	var lines []string
	for i := len(c.items) - 1; i >= from && len(lines) < need; i-- {
		block := m.renderItem(c.items[i], width)
		lines = append(append(append([]string(nil), block...), ""), lines...)
	}
	if len(lines) > 0 {
		lines = lines[:len(lines)-1]
	}
	maxScroll := max(len(lines)-height, 0)
	if m.scroll > maxScroll && len(lines) < need {
		m.scroll = maxScroll
	}
	end := len(lines) - m.scroll
	start := max(end-height, 0)
	out := lines[start:max(end, start)]
	if m.cfg.altScreen {
		for len(out) < height {
			out = append([]string{""}, out...)
		}
	}
	if header != "" {
		out = append([]string{header}, out...)
	}
	return out
}

func (m *Model) viewHeader(width int) string {
	st := m.st
	what := ""
	if s, ok := m.sessions[m.view]; ok {
		what = "saved session " + shortID(s.ID) + " · read-only · esc returns"
	} else if n := m.tree.Get(m.view); n != nil {
		what = fmt.Sprintf("%s %s · %s · %s · read-only · esc returns", n.Type, n.ID, orText(n.Model, "?"), m.tree.State(n))
	}
	return st.title.Render(clip("── "+what+" ", width))
}

// bottom renders what is under the conversation: queued prompts, the
// spinner, the input (or the prompt, the picker, a confirmation) and the
// status line.
func (m *Model) bottom() string {
	var parts []string
	for i, q := range m.queued {
		if i == 2 {
			parts = append(parts, m.st.dim.Render(fmt.Sprintf("  … and %d more queued", len(m.queued)-2)))
			break
		}
		parts = append(parts, m.st.dim.Render(clip("  ⏎ queued: "+oneLine(q), m.width)))
	}
	if line := m.spinnerLine(); line != "" {
		parts = append(parts, line)
	}
	if m.status != "" && m.quitAt.IsZero() {
		for _, l := range wrapLines(m.status, m.width-2) {
			parts = append(parts, "  "+m.st.warn.Render(l))
		}
	}
	switch {
	case len(m.prompts) > 0:
		parts = append(parts, m.promptView(m.width, max(m.height-22, 4)))
	case m.picker != nil:
		parts = append(parts, m.pickerView(m.width, max(m.height-10, 5)))
	case m.confirmStop != "":
		parts = append(parts, m.confirmView())
	default:
		parts = append(parts, m.inputView())
		if hint := m.slashHint(); hint != "" {
			parts = append(parts, hint)
		}
	}
	parts = append(parts, m.statusLine())
	return strings.Join(parts, "\n")
}

var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

func (m *Model) spinnerLine() string {
	if !m.running {
		return ""
	}
	st := m.st
	el := time.Duration(0)
	if !m.runStart.IsZero() && m.now.After(m.runStart) {
		el = m.now.Sub(m.runStart)
	}
	frame := spinnerFrames[int(el/tickEvery)%len(spinnerFrames)]
	what := "Working…"
	if len(m.prompts) > 0 {
		what = "Waiting for your answer…"
	}
	detail := fmt.Sprintf(" (%s · ↓ %s tokens · esc to interrupt)", formatElapsed(el), formatTokens(m.turnTokens()))
	return clip(st.accent.Render(frame+" "+what)+st.dim.Render(detail), m.width)
}

func (m *Model) inputView() string {
	key := inputKey{value: m.input.Value(), width: m.width, focus: m.focus == focusInput, line: m.input.Line(),
		col: m.input.Column(), height: m.input.Height(), dark: m.st.dark}
	if m.inputCache.text != "" && m.inputCache.key == key {
		return m.inputCache.text
	}
	edge := m.st.inputEdge
	if m.focus != focusInput {
		edge = m.st.faint
	}
	text := box(edge, strings.Split(m.input.View(), "\n"), m.width)
	m.inputCache.key, m.inputCache.text = key, text
	return text
}

// inputView's render is kept while the editor is unchanged.
type inputKey struct {
	value                    string
	width, line, col, height int
	focus, dark              bool
}

type inputRender struct {
	key  inputKey
	text string
}

// cursor places the terminal's cursor in the input.
func (m *Model) cursor(content string) *tea.Cursor {
	if m.focus != focusInput || len(m.prompts) > 0 || m.picker != nil || m.confirmStop != "" {
		return nil
	}
	c := m.input.Cursor()
	if c == nil {
		return nil
	}
	// The input box sits above the status line (and the slash hint);
	// its text starts after the border and the padding.
	below := 2 // bottom border and the status line
	if m.slashHint() != "" {
		below++
	}
	top := lipgloss.Height(content) - below - m.input.Height()
	c.Position.X += 2
	c.Position.Y += top
	return c
}

func (m *Model) slashHint() string {
	v := m.input.Value()
	if !strings.HasPrefix(v, "/") || strings.ContainsAny(v, " \n") {
		return ""
	}
	matches := slashMatches(v)
	switch len(matches) {
	case 0:
		return m.st.dim.Render("  no such command · /help lists them")
	case 1:
		return clip("  "+matches[0].name+" "+m.st.dim.Render(matches[0].help), m.width)
	}
	var names []string
	for _, c := range matches {
		names = append(names, c.name)
	}
	return clip("  "+strings.Join(names, "  ")+m.st.dim.Render("  · tab completes"), m.width)
}

func (m *Model) confirmView() string {
	n := m.tree.Get(m.confirmStop)
	what := m.confirmStop
	if n != nil {
		what = n.Type + " " + n.ID
	}
	text := fmt.Sprintf("Stop %s and every agent and shell it started? y stops · any other key keeps it", what)
	return box(m.st.modalEdge, []string{text}, m.width)
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

// statusLine shows the mode, a hint or the last status, the model and
// the session's tokens.
func (m *Model) statusLine() string {
	st := m.st
	left := st.accent.Render(modeLabel(m.mode)) + st.dim.Render(" (shift+tab)")
	var middle string
	switch {
	case !m.quitAt.IsZero():
		middle = st.warn.Render("Press Ctrl+C again to exit")
	case m.width < minWidth || m.height < minHeight:
		middle = st.warn.Render(fmt.Sprintf("terminal %d×%d is below %d×%d", m.width, m.height, minWidth, minHeight))
	case m.focus == focusTree:
		middle = st.dim.Render("⏎ open · x stop · c clear · ^B bg · tab")
		if side, _ := m.sidePanel(); side {
			middle = st.dim.Render("tab back to the prompt")
		}
	case m.view != "":
		middle = st.dim.Render("esc returns to the conversation")
	default:
		middle = st.dim.Render("tab agents · /help")
	}
	right := st.dim.Render(formatTokens(m.tokens) + " tokens")
	if side, _ := m.sidePanel(); side {
		right = st.dim.Render(orText(m.cfg.model, "?")) + " · " + right
	}
	room := m.width - cellWidth(left) - cellWidth(right) - 3
	if room < 10 {
		return clip(left+"  "+middle, m.width)
	}
	return padBetween(left+"  "+clip(middle, room), right, m.width)
}

// treeView is a rendered tree kept while nothing it shows changes.
type treeView struct {
	key   treeKey
	lines []string
}

type treeKey struct {
	version, sel, width, height int
	side, focus                 bool
	second                      int64 // elapsed times show whole seconds
	dark                        bool
}

// treeLines renders the agent tree in width×height: one line an agent
// below the conversation (height is a maximum), two beside it.
func (m *Model) treeLines(width, height int, side bool) []string {
	key := treeKey{version: m.tree.Version(), sel: m.treeSel, width: width, height: height, side: side,
		focus: m.focus == focusTree, second: m.now.Unix(), dark: m.st.dark}
	if m.treeCache.lines != nil && m.treeCache.key == key {
		return append([]string(nil), m.treeCache.lines...)
	}
	lines := m.renderTree(width, height, side)
	m.treeCache = treeView{key: key, lines: lines}
	return append([]string(nil), lines...)
}

func (m *Model) renderTree(width, height int, side bool) []string {
	st := m.st
	rows := m.tree.Rows()
	inner := width
	title := st.title.Render("Agents") + st.dim.Render(m.treeCounts())
	if m.focus == focusTree && side {
		title = padBetween(title, st.dim.Render("enter open · x stop · c clear · ctrl+b background"), inner)
	}
	lines := []string{clip(title, inner)}
	per := 1
	if side {
		per = 2
	}
	fit := max((height-1)/per, 1)
	if !side {
		fit = min(height, len(rows))
	}
	start := 0
	if m.treeSel >= fit {
		start = m.treeSel - fit + 1
	}
	if start+fit > len(rows) {
		start = max(len(rows)-fit, 0)
	}
	labelW := 0
	for i := start; i < len(rows) && i < start+fit; i++ {
		labelW = max(labelW, cellWidth(rows[i].Guide+nodeLabel(rows[i].Node))+2)
	}
	labelW = min(labelW, max(inner*2/5, 20))
	for i := start; i < len(rows) && i < start+fit; i++ {
		sel := m.focus == focusTree && i == m.treeSel
		if side {
			lines = append(lines, m.treeRowWide(rows[i], inner, sel)...)
		} else {
			lines = append(lines, m.treeRowNarrow(rows[i], inner, labelW, sel))
		}
	}
	if hidden := len(rows) - fit; hidden > 0 {
		lines[0] = clip(title+st.dim.Render(fmt.Sprintf(" · %d–%d of %d", start+1, min(start+fit, len(rows)), len(rows))), inner)
	}
	return lines
}

func (m *Model) treeCounts() string {
	c := m.tree.Counts()
	var parts []string
	for _, s := range []State{StatePending, StateRunning, StateWaiting, StateBackground, StateCompleted, StateFailed, StateKilled} {
		if c[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c[s], s))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " · " + strings.Join(parts, " · ")
}

// selMark marks the selected row, so the selection shows without colour.
func selMark(st styles, sel bool) string {
	if sel {
		return st.accent.Render("›") + " "
	}
	return "  "
}

// nodeLabel is "main" or "TYPE ID" for the tree.
func nodeLabel(n *Node) string {
	if n.ID == "" {
		return "main"
	}
	return n.Type + " " + shortID(n.ID)
}

// nodeStats are the figures of an agent: tool uses, tokens, elapsed.
func (m *Model) nodeStats(n *Node) string {
	return fmt.Sprintf("%s · %s tok · %s", plural(n.ToolUses, "tool"), formatTokens(n.Tokens), formatElapsed(n.Elapsed(m.now)))
}

func (m *Model) treeRowNarrow(r Row, width, labelW int, sel bool) string {
	st := m.st
	n := r.Node
	state := m.tree.State(n)
	label := selMark(st, sel) + r.Guide + nodeLabel(n)
	label = clip(label, labelW)
	if pad := labelW - cellWidth(label); pad > 0 {
		label += strings.Repeat(" ", pad)
	}
	if sel {
		label = st.selected.Render(label)
	}
	stateText := st.state[state].Render(fmt.Sprintf("%-11s", state))
	tail := n.Description
	if state.Live() && n.LastTool != "" {
		tail = n.LastTool + " · " + n.Description
	}
	if n.ID == "" {
		tail = n.LastTool
	}
	line := label + " " + stateText + " " + m.nodeStats(n) + "  " + strings.TrimSuffix(tail, " · ")
	line = clip(line, width)
	if state.Finished() {
		line = st.faint.Render(line)
	}
	return line
}

func (m *Model) treeRowWide(r Row, width int, sel bool) []string {
	st := m.st
	n := r.Node
	state := m.tree.State(n)
	label := r.Guide + nodeLabel(n)
	if sel {
		label = st.selected.Render(label)
	}
	label = selMark(st, sel) + label
	stateText := st.state[state].Render(state.String())
	desc := ""
	if n.Description != "" {
		desc = "  " + st.dim.Render(n.Description)
	}
	room := width - cellWidth(stateText) - 1
	first := padBetween(clip(label+desc, room), stateText, width)
	cont := "  " + continuation(r.Guide)
	if n.ID != "" || len(n.Children) > 0 {
		if len(n.Children) > 0 {
			cont += "│  "
		} else {
			cont += "   "
		}
	}
	detail := []string{}
	if n.Model != "" {
		detail = append(detail, n.Model)
	}
	detail = append(detail, m.nodeStats(n))
	if n.LastTool != "" {
		detail = append(detail, "last "+n.LastTool)
	}
	second := clip(cont+st.dim.Render(strings.Join(detail, " · ")), width)
	if state.Finished() {
		first, second = st.faint.Render(first), st.faint.Render(second)
	}
	return []string{first, second}
}

// continuation turns a row's guide into the guide of the line below it.
func continuation(guide string) string {
	if strings.HasSuffix(guide, "├─ ") {
		return strings.TrimSuffix(guide, "├─ ") + "│  "
	}
	if strings.HasSuffix(guide, "└─ ") {
		return strings.TrimSuffix(guide, "└─ ") + "   "
	}
	return guide
}

// treeRowAt maps a screen position to a tree row (mouse selection).
func (m *Model) treeRowAt(x, y int) (int, bool) {
	if !m.showTree() {
		return 0, false
	}
	side, panelW := m.sidePanel()
	rows := len(m.tree.Rows())
	if side {
		if x < m.width-panelW {
			return 0, false
		}
		i := (y - 1) / 2
		if y < 1 || i >= rows {
			return 0, false
		}
		return i, true
	}
	top := m.height - lipgloss.Height(m.bottom()) - min(m.narrowTreeRows(), rows)
	i := y - top
	if i < 0 || i >= rows {
		return 0, false
	}
	return i, true
}

// flushPrinted writes finished items of the main conversation to the
// terminal's scrollback (inline mode), in order.
func (m *Model) flushPrinted() tea.Cmd {
	if m.cfg.altScreen {
		return nil
	}
	c := m.main()
	var out []string
	for c.printed < len(c.items) {
		it := c.items[c.printed]
		if !it.done || it == c.streaming {
			break
		}
		out = append(out, strings.Join(m.renderItem(it, m.width), "\n"), "")
		c.printed++
	}
	if len(out) == 0 {
		return nil
	}
	var b strings.Builder
	w := &colorprofile.Writer{Forward: &b, Profile: m.profile}
	_, _ = w.WriteString(strings.Join(out, "\n"))
	return tea.Println(b.String())
}
