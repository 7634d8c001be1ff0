package tui

import (
	"fmt"
	"strings"
	"time"

	xansi "github.com/charmbracelet/x/ansi"

	"github.com/cadre-dev/cadre/tool"
)

// wrapLines wraps plain text to width, keeping its own line breaks.
func wrapLines(text string, width int) []string {
	if width < 1 {
		width = 1
	}
	return strings.Split(xansi.WrapWc(text, width, ""), "\n")
}

// clipLines cuts each line of text to width.
func clipLines(text string, width int) []string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = clip(l, width)
	}
	return lines
}

// indent prefixes the first line with first and the others with rest.
func indent(lines []string, first, rest string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		p := rest
		if i == 0 {
			p = first
		}
		out[i] = p + l
	}
	return out
}

// renderItem renders one item at width, from its cache when nothing it
// depends on changed.
func (p *convoPane) renderItem(it *item, width int, now time.Time) []string {
	extra := ""
	if it.kind == itemTool && (it.name == tool.Agent || it.name == tool.Task) {
		extra = p.agentCallStatus(it, now)
	}
	if it.kind == itemTool && !it.done && p.perm.waiting(it.callID) {
		extra += "\x00waiting"
	}
	if it.kind == itemAssistant && !it.done {
		// The streamed answer changes with every delta; its render is cached
		// on the version like any other.
		extra = ""
	}
	c := &it.cache
	if c.lines != nil && c.ver == it.ver && c.width == width && c.expanded == p.expanded && c.extra == extra {
		return c.lines
	}
	lines := p.renderItemFresh(it, width, extra)
	*c = renderCache{ver: it.ver, width: width, expanded: p.expanded, extra: extra, lines: lines}
	return lines
}

// renderItemFresh renders an item whose cached lines are stale.
func (p *convoPane) renderItemFresh(it *item, width int, extra string) []string {
	st := p.st
	inner := max(width-2, 10)
	switch it.kind {
	case itemUser:
		lines := wrapLines(strings.TrimRight(it.text, "\n"), inner)
		for i := range lines {
			lines[i] = st.user.Render(lines[i])
		}
		return indent(lines, st.accent.Render("›")+" ", "  ")
	case itemAssistant:
		lines := p.md.render(it.text, inner, st)
		if len(lines) == 0 {
			lines = []string{""}
		}
		return indent(lines, "● ", "  ")
	case itemThinking:
		if !p.expanded {
			return []string{st.dim.Render("✻ Thinking…")}
		}
		lines := wrapLines(strings.TrimSpace(it.text), inner)
		for i := range lines {
			lines[i] = st.thinking.Render(lines[i])
		}
		return indent(lines, st.dim.Render("✻ "), "  ")
	case itemTool:
		return p.renderTool(it, width, extra)
	case itemError:
		lines := wrapLines(it.text, inner)
		for i := range lines {
			lines[i] = st.errText.Render(lines[i])
		}
		return indent(lines, st.errText.Render("✗")+" ", "  ")
	case itemInfo:
		var lines []string
		if it.plain && strings.Contains(it.text, "\t") {
			lines = clipLines(strings.ReplaceAll(it.text, "\t", " "), inner)
		} else {
			lines = wrapLines(it.text, inner)
		}
		for i := range lines {
			lines[i] = st.dim.Render(lines[i])
		}
		return indent(lines, "  ", "  ")
	case itemNotification:
		return p.renderNotification(it, inner)
	}
	return nil
}

// renderTool renders a call: a headline with its summary, and its result
// collapsed to one line (all of it when expanded).
func (p *convoPane) renderTool(it *item, width int, extra string) []string {
	st := p.st
	inner := max(width-2, 10)
	bullet := st.accent.Render("●")
	switch {
	case it.done && it.denied:
		bullet = st.warn.Render("●")
	case it.done && it.isError:
		bullet = st.errText.Render("●")
	case it.done:
		bullet = st.ok.Render("●")
	}
	name, arg := it.summary, ""
	if i := strings.IndexByte(it.summary, '('); i > 0 {
		name, arg = it.summary[:i], it.summary[i:]
	}
	head := clip(st.toolName.Render(name)+arg, inner)
	lines := []string{bullet + " " + head}
	result := p.toolResultLines(it, inner-3, extra)
	return append(lines, indent(result, "  ⎿  ", "     ")...)
}

// toolResultLines renders a call's result: its state while it runs,
// then its first line, or all of it when expanded.
func (p *convoPane) toolResultLines(it *item, width int, extra string) []string {
	st := p.st
	isAgent := it.name == tool.Agent || it.name == tool.Task
	if !it.done {
		switch {
		case strings.HasSuffix(extra, "\x00waiting"):
			return []string{st.warn.Render("Waiting for permission…")}
		case isAgent && extra != "":
			return []string{clip(st.dim.Render(extra), width)}
		}
		return []string{st.dim.Render("Running…")}
	}
	text := strings.TrimRight(it.result, "\n")
	style := st.dim
	switch {
	case it.denied:
		style = st.warn
	case it.isError:
		style = st.errText
	}
	if it.todos != nil && !it.isError {
		return todoLines(p.st, it.todos, width)
	}
	if isAgent && !it.isError && extra != "" {
		// The child's framed report is in its own view; the call shows
		// how it went.
		return []string{clip(st.dim.Render(extra), width)}
	}
	if p.expanded {
		lines := wrapLines(text, width)
		for i := range lines {
			lines[i] = style.Render(lines[i])
		}
		return lines
	}
	first := firstLine(text)
	if first == "" {
		first = "(no output)"
	}
	first = strings.TrimSuffix(first, " …")
	more := ""
	if n := lineCount(text); n > 1 {
		more = st.dim.Render(fmt.Sprintf(" (+%d lines, ctrl+o to expand)", n-1))
	}
	return []string{clip(style.Render(first)+more, width)}
}

// agentCallStatus is the one-line state of the child an Agent call
// started, for the call's result line.
func (p *convoPane) agentCallStatus(it *item, now time.Time) string {
	n := p.tree.ByToolUse(it.callID)
	if n == nil {
		return ""
	}
	parts := []string{n.Type + " " + shortID(n.ID), p.tree.State(n).String()}
	parts = append(parts, plural(n.ToolUses, "tool use"), formatTokens(n.Tokens)+" tokens", formatElapsed(n.Elapsed(now)))
	if n.state.Live() && n.LastTool != "" {
		parts = append(parts, n.LastTool)
	}
	return strings.Join(parts, " · ")
}
