package tui

import (
	"image/color"

	"charm.land/lipgloss/v2"
)

// styles are the UI's text styles for a dark or light terminal. Colour is
// never the only carrier of meaning: states are words, the selection is
// reversed, and finished agents are faint, so NO_COLOR (where the
// renderer drops every colour) loses nothing.
type styles struct {
	dark bool

	accent, dim, faint, bold lipgloss.Style
	user, toolName, errText  lipgloss.Style
	ok, warn, info           lipgloss.Style
	selected, title          lipgloss.Style
	modalBorder, panelBorder lipgloss.Style
	diffAdd, diffDel         lipgloss.Style
	state                    map[State]lipgloss.Style
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
	s := styles{
		dark:        dark,
		accent:      lipgloss.NewStyle().Foreground(accent),
		dim:         lipgloss.NewStyle().Foreground(grey),
		faint:       lipgloss.NewStyle().Faint(true),
		bold:        lipgloss.NewStyle().Bold(true),
		user:        lipgloss.NewStyle().Bold(true),
		toolName:    lipgloss.NewStyle().Bold(true),
		errText:     lipgloss.NewStyle().Foreground(red),
		ok:          lipgloss.NewStyle().Foreground(green),
		warn:        lipgloss.NewStyle().Foreground(yellow),
		info:        lipgloss.NewStyle().Foreground(blue),
		selected:    lipgloss.NewStyle().Reverse(true),
		title:       lipgloss.NewStyle().Bold(true).Foreground(accent),
		modalBorder: lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(yellow).Padding(0, 1),
		panelBorder: lipgloss.NewStyle().Border(lipgloss.NormalBorder(), false, false, false, true).BorderForeground(grey).PaddingLeft(1),
		diffAdd:     lipgloss.NewStyle().Foreground(green),
		diffDel:     lipgloss.NewStyle().Foreground(red),
	}
	s.state = map[State]lipgloss.Style{
		StateIdle:        s.dim,
		StatePending:     s.dim,
		StateRunning:     s.accent,
		StateWaiting:     s.warn.Bold(true),
		StateBackground:  s.info,
		StateCompleted:   s.ok.Faint(true),
		StateFailed:      s.errText.Faint(true),
		StateKilled:      s.dim.Faint(true),
		StateInterrupted: s.warn,
	}
	return s
}
