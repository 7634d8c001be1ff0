package tui

import (
	"image/color"
	"strings"

	"charm.land/lipgloss/v2"
)

// ink is a text style reduced to the escape codes around its text:
// rendering the tree and the status line on every frame with lipgloss
// would measure every string again, and a fan-out of 50 redraws them
// hundreds of times a second.
type ink struct{ pre, post string }

func inkOf(s lipgloss.Style) ink {
	r := s.Render("\x00")
	i := strings.IndexByte(r, 0)
	if i < 0 {
		return ink{}
	}
	return ink{pre: r[:i], post: r[i+1:]}
}

// Render styles s, each line on its own.
func (k ink) Render(s string) string {
	if s == "" || k.pre == "" {
		return s
	}
	if !strings.Contains(s, "\n") {
		return k.pre + s + k.post
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = k.pre + l + k.post
		}
	}
	return strings.Join(lines, "\n")
}

// styles are the UI's text styles for a dark or light terminal. Colour is
// never the only carrier of meaning: states are words, the selection is
// marked, and finished agents are faint, so NO_COLOR (where the renderer
// drops every colour) loses nothing.
type styles struct {
	dark bool
	grey color.Color

	accent, dim, faint, bold ink
	user, toolName, errText  ink
	ok, warn, info           ink
	selected, title          ink
	thinking                 ink
	diffAdd, diffDel         ink
	modalEdge, inputEdge     ink
	state                    map[State]ink
}

func newStyles(dark bool) styles {
	ld := lipgloss.LightDark(dark)
	c := func(light, dark string) color.Color { return ld(lipgloss.Color(light), lipgloss.Color(dark)) }
	accent := c("93", "141")
	grey := c("244", "245")
	red := c("160", "203")
	green := c("28", "114")
	yellow := c("130", "214")
	blue := c("25", "75")
	fg := func(col color.Color) lipgloss.Style { return lipgloss.NewStyle().Foreground(col) }
	s := styles{
		dark:      dark,
		grey:      grey,
		accent:    inkOf(fg(accent)),
		dim:       inkOf(fg(grey)),
		faint:     inkOf(lipgloss.NewStyle().Faint(true)),
		bold:      inkOf(lipgloss.NewStyle().Bold(true)),
		user:      inkOf(lipgloss.NewStyle().Bold(true)),
		toolName:  inkOf(lipgloss.NewStyle().Bold(true)),
		errText:   inkOf(fg(red)),
		ok:        inkOf(fg(green)),
		warn:      inkOf(fg(yellow)),
		info:      inkOf(fg(blue)),
		selected:  inkOf(lipgloss.NewStyle().Reverse(true)),
		title:     inkOf(fg(accent).Bold(true)),
		thinking:  inkOf(fg(grey).Italic(true)),
		diffAdd:   inkOf(fg(green)),
		diffDel:   inkOf(fg(red)),
		modalEdge: inkOf(fg(yellow)),
		inputEdge: inkOf(fg(grey)),
	}
	s.state = map[State]ink{
		StateIdle:        s.dim,
		StatePending:     s.dim,
		StateRunning:     s.accent,
		StateWaiting:     inkOf(fg(yellow).Bold(true)),
		StateBackground:  s.info,
		StateCompleted:   inkOf(fg(green).Faint(true)),
		StateFailed:      inkOf(fg(red).Faint(true)),
		StateKilled:      inkOf(fg(grey).Faint(true)),
		StateInterrupted: s.warn,
		StateBudget:      s.warn,
	}
	return s
}

// box draws lines in a rounded frame width cells wide, with one cell of
// padding inside; lines longer than the inside are cut.
func box(edge ink, lines []string, width int) string {
	inner := max(width-4, 1)
	var b strings.Builder
	b.WriteString(edge.Render("╭" + strings.Repeat("─", width-2) + "╮"))
	side := edge.Render("│")
	for _, l := range lines {
		l = clip(l, inner)
		b.WriteString("\n" + side + " " + l + strings.Repeat(" ", max(inner-cellWidth(l), 0)) + " " + side)
	}
	b.WriteString("\n" + edge.Render("╰"+strings.Repeat("─", width-2)+"╯"))
	return b.String()
}
