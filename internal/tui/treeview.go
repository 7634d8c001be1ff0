package tui

import (
	"fmt"
	"strings"
	"time"
)

// agentsPanel is the agent tree on screen, below a narrow conversation or
// beside a wide one: one row an agent with its state and figures, the
// selection the tree keys move, and the confirmation before x stops an
// agent. It draws the Tree the run's events build.
type agentsPanel struct {
	st   *styles
	tree *Tree
	sel  int
	// confirmStop is the agent x asks to stop, until y or another key.
	confirmStop string

	// Renders kept between frames.
	cache treeView
	rows  map[*Node]treeRow // the rows of the tree last drawn
}

// clampSel keeps the selection on a row.
func (p *agentsPanel) clampSel() {
	n := len(p.tree.Rows())
	p.sel = max(0, min(p.sel, n-1))
}

// selected is the agent selected in the tree, or nil.
func (p *agentsPanel) selected() *Node {
	rows := p.tree.Rows()
	if p.sel < 0 || p.sel >= len(rows) {
		return nil
	}
	return rows[p.sel].Node
}

// move moves the selection for a tree key; it reports whether s was one.
func (p *agentsPanel) move(s string) bool {
	rows := p.tree.Rows()
	switch s {
	case "up", "k":
		p.sel = max(p.sel-1, 0)
	case "down", "j":
		p.sel = min(p.sel+1, len(rows)-1)
	case "home", "g":
		p.sel = 0
	case "end", "G":
		p.sel = len(rows) - 1
	default:
		return false
	}
	return true
}

// foreground is the sub-agent Ctrl+B moves to the background: the
// selected one when the tree has the focus, else the only one running in
// the foreground. When there is none it says why instead.
func (p *agentsPanel) foreground(focused bool) (*Node, string) {
	target := p.selected()
	if !focused || target == nil || target.ID == "" {
		var fg []*Node
		for _, r := range p.tree.Rows() {
			if n := r.Node; n.ID != "" && n.state == StateRunning && !n.Background {
				fg = append(fg, n)
			}
		}
		switch len(fg) {
		case 0:
			return nil, "No sub-agent runs in the foreground."
		case 1:
			target = fg[0]
		default:
			return nil, fmt.Sprintf("%d sub-agents run in the foreground: select one in the tree (tab) and press ctrl+b.", len(fg))
		}
	}
	if target.state != StateRunning || target.Background {
		return nil, fmt.Sprintf("%s %s is %s, not running in the foreground.", target.Type, shortID(target.ID), p.tree.State(target))
	}
	return target, ""
}

// askStop asks to confirm stopping the selected agent; when it cannot,
// it says why. canStop says the runtime can stop agents.
func (p *agentsPanel) askStop(canStop bool) string {
	n := p.selected()
	if n == nil || n.ID == "" {
		return "Select a sub-agent to stop; Esc interrupts the main agent."
	}
	if !n.state.Live() {
		return fmt.Sprintf("%s %s has already ended (%s).", n.Type, shortID(n.ID), n.state)
	}
	if !canStop {
		return fmt.Sprintf("x: stopping an agent is %v (the runtime needs Stop, issue 11).", errNotAvailable)
	}
	p.confirmStop = n.ID
	return ""
}

// confirmKey answers the confirmation: it returns the agent to stop, ""
// when the key keeps it.
func (p *agentsPanel) confirmKey(s string) string {
	id := p.confirmStop
	p.confirmStop = ""
	if s == "y" || s == "enter" {
		return id
	}
	return ""
}

// confirmView asks whether to stop the agent x chose.
func (p *agentsPanel) confirmView(width int) string {
	n := p.tree.Get(p.confirmStop)
	what := p.confirmStop
	if n != nil {
		what = n.Type + " " + n.ID
	}
	text := fmt.Sprintf("Stop %s and every agent and shell it started? y stops · any other key keeps it", what)
	return box(p.st.modalEdge, []string{text}, width)
}

// sideLines is the tree beside the conversation: a rule on its left and
// the tree, height lines.
func (p *agentsPanel) sideLines(width, height int, focused bool, now time.Time) []string {
	rule := p.st.dim.Render("│") + " "
	lines := p.lines(width-2, height, true, focused, now)
	for len(lines) < height {
		lines = append(lines, "")
	}
	for i, l := range lines[:height] {
		lines[i] = rule + l
	}
	return lines[:height]
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

// lines renders the agent tree in width×height: one line an agent
// below the conversation (height is a maximum), two beside it; focused
// says the tree has the keyboard.
func (p *agentsPanel) lines(width, height int, side, focused bool, now time.Time) []string {
	key := treeKey{version: p.tree.Version(), sel: p.sel, width: width, height: height, side: side,
		focus: focused, second: now.Unix(), dark: p.st.dark}
	if p.cache.lines != nil && p.cache.key == key {
		return append([]string(nil), p.cache.lines...)
	}
	lines := p.render(width, height, side, focused, now)
	p.cache = treeView{key: key, lines: lines}
	return append([]string(nil), lines...)
}

// render draws the tree afresh (lines keeps the last one).
func (p *agentsPanel) render(width, height int, side, focused bool, now time.Time) []string {
	st := p.st
	rows := p.tree.Rows()
	inner := width
	per := 1
	if side {
		per = 2
	}
	// The tasks get what the agents leave, and at least half.
	tasks := p.taskLines(inner, max(height-len(rows)*per-1, height/2, 2)) // teamtasks.go
	height = max(height-len(tasks), 1)
	title := st.title.Render("Agents") + st.dim.Render(p.counts())
	if focused && side {
		title = padBetween(title, st.dim.Render("enter open · x stop · c clear · ctrl+b background"), inner)
	}
	lines := []string{clip(title, inner)}
	fit := max((height-1)/per, 1)
	if !side {
		fit = min(height, len(rows))
	}
	start := 0
	if p.sel >= fit {
		start = p.sel - fit + 1
	}
	if start+fit > len(rows) {
		start = max(len(rows)-fit, 0)
	}
	labelW := 0
	for i := start; i < len(rows) && i < start+fit; i++ {
		labelW = max(labelW, cellWidth(rows[i].Guide+nodeLabel(rows[i].Node))+2)
	}
	labelW = min(labelW, max(inner*2/5, 20))
	drawn := make(map[*Node]treeRow, fit)
	for i := start; i < len(rows) && i < start+fit; i++ {
		sel := focused && i == p.sel
		lines = append(lines, p.row(drawn, rows[i], inner, labelW, sel, side, now)...)
	}
	p.rows = drawn // the rows not on screen now are forgotten
	if hidden := len(rows) - fit; hidden > 0 {
		lines[0] = clip(title+st.dim.Render(fmt.Sprintf(" · %d–%d of %d", start+1, min(start+fit, len(rows)), len(rows))), inner)
	}
	return append(lines, tasks...)
}

// counts says how many agents are in each state, for the title.
func (p *agentsPanel) counts() string {
	c := p.tree.Counts()
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
func nodeStats(n *Node, now time.Time) string {
	return fmt.Sprintf("%s · %s tok · %s", plural(n.ToolUses, "tool"), formatTokens(n.Tokens), formatElapsed(n.Elapsed(now)))
}

// treeRow is one agent's rendered row, with everything it shows: it is
// drawn again only when that changes. At fan-out 50 an event changes one
// row of 51, and formatting the others again was most of a frame's CPU.
type treeRow struct {
	key   treeRowKey
	lines []string
}

type treeRowKey struct {
	id, typ, desc, model, lastTool, guide string
	toolUses                              int
	tokens                                int64
	seconds                               int64 // the elapsed time shows whole seconds
	state                                 State
	children, sel, side, dark             bool
	width, labelW                         int
}

// row returns r's lines, from the last frame's when nothing they show
// changed; drawn collects this frame's rows.
func (p *agentsPanel) row(drawn map[*Node]treeRow, r Row, width, labelW int, sel, side bool, now time.Time) []string {
	n := r.Node
	key := treeRowKey{id: n.ID, typ: n.Type, desc: n.Description, model: n.Model, lastTool: n.LastTool, guide: r.Guide,
		toolUses: n.ToolUses, tokens: n.Tokens, seconds: int64(n.Elapsed(now) / time.Second), state: p.tree.State(n),
		children: len(n.Children) > 0, sel: sel, side: side, dark: p.st.dark, width: width}
	if !side {
		key.labelW = labelW
	}
	if old, ok := p.rows[n]; ok && old.key == key {
		drawn[n] = old
		return old.lines
	}
	var lines []string
	if side {
		lines = p.rowWide(r, width, sel, now)
	} else {
		lines = []string{p.rowNarrow(r, width, labelW, sel, now)}
	}
	drawn[n] = treeRow{key: key, lines: lines}
	return lines
}

// rowNarrow is an agent's one line in the tree below the conversation.
func (p *agentsPanel) rowNarrow(r Row, width, labelW int, sel bool, now time.Time) string {
	st := p.st
	n := r.Node
	state := p.tree.State(n)
	label := selMark(*st, sel) + r.Guide + nodeLabel(n)
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
	line := label + " " + stateText + " " + nodeStats(n, now) + "  " + strings.TrimSuffix(tail, " · ")
	line = clip(line, width)
	if state.Finished() {
		line = st.faint.Render(line)
	}
	return line
}

// rowWide is an agent's two lines in the tree beside the conversation.
func (p *agentsPanel) rowWide(r Row, width int, sel bool, now time.Time) []string {
	st := p.st
	n := r.Node
	state := p.tree.State(n)
	label := r.Guide + nodeLabel(n)
	if sel {
		label = st.selected.Render(label)
	}
	label = selMark(*st, sel) + label
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
	detail = append(detail, nodeStats(n, now))
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

// rowAt maps a screen position to a tree row (mouse selection): in the
// tree beside the conversation (side) from column panelX, or in the one
// below it from line top.
func (p *agentsPanel) rowAt(x, y int, side bool, panelX, top int) (int, bool) {
	rows := len(p.tree.Rows())
	if side {
		if x < panelX {
			return 0, false
		}
		i := (y - 1) / 2
		if y < 1 || i >= rows {
			return 0, false
		}
		return i, true
	}
	i := y - top
	if i < 0 || i >= rows {
		return 0, false
	}
	return i, true
}
