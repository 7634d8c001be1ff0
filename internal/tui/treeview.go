package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
)

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
	drawn := make(map[*Node]treeRow, fit)
	for i := start; i < len(rows) && i < start+fit; i++ {
		sel := m.focus == focusTree && i == m.treeSel
		lines = append(lines, m.treeRow(drawn, rows[i], inner, labelW, sel, side)...)
	}
	m.treeRows = drawn // the rows not on screen now are forgotten
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

// treeRow returns r's lines, from the last frame's when nothing they show
// changed; drawn collects this frame's rows.
func (m *Model) treeRow(drawn map[*Node]treeRow, r Row, width, labelW int, sel, side bool) []string {
	n := r.Node
	key := treeRowKey{id: n.ID, typ: n.Type, desc: n.Description, model: n.Model, lastTool: n.LastTool, guide: r.Guide,
		toolUses: n.ToolUses, tokens: n.Tokens, seconds: int64(n.Elapsed(m.now) / time.Second), state: m.tree.State(n),
		children: len(n.Children) > 0, sel: sel, side: side, dark: m.st.dark, width: width}
	if !side {
		key.labelW = labelW
	}
	if old, ok := m.treeRows[n]; ok && old.key == key {
		drawn[n] = old
		return old.lines
	}
	var lines []string
	if side {
		lines = m.treeRowWide(r, width, sel)
	} else {
		lines = []string{m.treeRowNarrow(r, width, labelW, sel)}
	}
	drawn[n] = treeRow{key: key, lines: lines}
	return lines
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
