package tui

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// maxInputRows bounds the input box's height; longer input scrolls.
const maxInputRows = 8

// editor is the prompt editor at the bottom of the screen: the text being
// typed, the earlier prompts ↑ and ↓ walk through, large pastes kept out
// of the way as placeholders, and the slash-command hint and completion.
type editor struct {
	st    *styles
	ta    textarea.Model
	width int // the terminal's

	history []string
	histPos int
	draft   string
	pastes  map[int]string
	pasteN  int

	cache inputRender
}

// newEditor makes the prompt editor: multi-line, Enter sends, Alt+Enter,
// Shift+Enter or Ctrl+J insert a newline, and the terminal's own cursor.
func newEditor(st *styles, width int) *editor {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.Prompt = ""
	ta.Placeholder = "Ask anything, or type / for commands"
	ta.CharLimit = 0
	ta.DynamicHeight = true
	ta.MinHeight = 1
	ta.MaxHeight = maxInputRows
	ta.MaxContentHeight = 100_000
	ta.SetVirtualCursor(false)
	km := textarea.DefaultKeyMap()
	km.InsertNewline = key.NewBinding(key.WithKeys("shift+enter", "alt+enter", "ctrl+j"))
	// Ctrl+B, Ctrl+D and Ctrl+T belong to the UI.
	km.CharacterBackward = key.NewBinding(key.WithKeys("left"))
	km.DeleteCharacterForward = key.NewBinding(key.WithKeys("delete"))
	km.TransposeCharacterBackward = key.NewBinding()
	ta.KeyMap = km
	ta.SetStyles(inputStyles(*st))
	ta.Focus()
	e := &editor{st: st, ta: ta, pastes: map[int]string{}}
	e.setWidth(width)
	return e
}

func inputStyles(st styles) textarea.Styles {
	s := textarea.DefaultStyles(st.dark)
	s.Focused.CursorLine = lipgloss.NewStyle()
	s.Focused.Placeholder = lipgloss.NewStyle().Foreground(st.grey)
	s.Blurred.Placeholder = lipgloss.NewStyle().Foreground(st.grey)
	return s
}

// Value is the text in the editor.
func (e *editor) Value() string { return e.ta.Value() }

// Reset empties the editor.
func (e *editor) Reset() { e.ta.Reset() }

// setValue replaces the editor's text.
func (e *editor) setValue(s string) { e.ta.SetValue(s) }

// setWidth sizes the editor to a terminal width cells wide.
func (e *editor) setWidth(width int) {
	e.width = width
	e.layout()
}

// layout sizes the editor's text area to the terminal.
func (e *editor) layout() { e.ta.SetWidth(max(e.width-4, 10)) }

// restyle follows a change of the styles (the terminal's background).
func (e *editor) restyle() { e.ta.SetStyles(inputStyles(*e.st)) }

// focus gives the editor the keyboard.
func (e *editor) focus() { e.ta.Focus() }

// blur takes the keyboard away from the editor.
func (e *editor) blur() { e.ta.Blur() }

// Pastes this large are kept out of the editor and shown as one
// placeholder, expanded when the prompt is sent.
const (
	bigPasteBytes = 2000
	bigPasteLines = 12
)

var pasteRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[Pasted text #(\d+)(?: \+\d+ lines)?\]`) })

// paste inserts pasted text: as it is when small, as a placeholder when
// large.
func (e *editor) paste(text string) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	if len(text) < bigPasteBytes && lineCount(text) < bigPasteLines {
		e.ta.InsertString(text)
		e.layout()
		return
	}
	e.pasteN++
	e.pastes[e.pasteN] = text
	e.ta.InsertString(fmt.Sprintf("[Pasted text #%d +%d lines]", e.pasteN, lineCount(text)))
	e.layout()
}

// expandPastes puts the pasted texts back in place of their placeholders.
func (e *editor) expandPastes(s string) string {
	return pasteRef().ReplaceAllStringFunc(s, func(ref string) string {
		n, _ := strconv.Atoi(pasteRef().FindStringSubmatch(ref)[1])
		if text, ok := e.pastes[n]; ok {
			return text
		}
		return ref
	})
}

// take empties the editor for Enter and returns its text, pastes
// expanded; ok is false when there is nothing to send (an empty prompt,
// or a trailing backslash, which continues the prompt on a new line).
func (e *editor) take() (text string, ok bool) {
	raw := e.ta.Value()
	if strings.HasSuffix(raw, "\\") {
		// A trailing backslash continues the prompt on a new line.
		e.ta.SetValue(strings.TrimSuffix(raw, "\\") + "\n")
		e.layout()
		return "", false
	}
	text = strings.TrimSpace(e.expandPastes(raw))
	if text == "" {
		return "", false
	}
	if len(e.history) == 0 || e.history[len(e.history)-1] != raw {
		e.history = append(e.history, raw)
	}
	e.histPos, e.draft = len(e.history), ""
	e.ta.Reset()
	e.pastes, e.pasteN = map[int]string{}, 0
	e.layout()
	return text, true
}

// key handles a key other than Enter while the editor has the focus: ↑
// and ↓ walk the history from the first and last line, the rest edits.
func (e *editor) key(k tea.KeyPressMsg) tea.Cmd {
	switch k.String() {
	case "up":
		if e.historyStep(-1) {
			return nil
		}
	case "down":
		if e.historyStep(1) {
			return nil
		}
	}
	var cmd tea.Cmd
	e.ta, cmd = e.ta.Update(k)
	e.layout()
	return cmd
}

// historyStep moves through earlier prompts: -1 older, +1 newer. It
// returns false when there is nowhere to go, so the key moves the cursor.
func (e *editor) historyStep(dir int) bool {
	if dir < 0 && (e.ta.Line() > 0 || e.histPos == 0) {
		return false
	}
	if dir > 0 && (e.ta.Line() < e.ta.LineCount()-1 || e.histPos >= len(e.history)) {
		return false
	}
	if e.histPos == len(e.history) {
		e.draft = e.ta.Value()
	}
	e.histPos += dir
	if e.histPos >= len(e.history) {
		e.histPos = len(e.history)
		e.ta.SetValue(e.draft)
	} else {
		e.ta.SetValue(e.history[e.histPos])
	}
	if dir < 0 {
		e.ta.MoveToBegin()
	}
	e.layout()
	return true
}

// view draws the editor in its box across the terminal; focused says it
// has the keyboard.
func (e *editor) view(focused bool) string {
	key := inputKey{value: e.ta.Value(), width: e.width, focus: focused, line: e.ta.Line(),
		col: e.ta.Column(), height: e.ta.Height(), dark: e.st.dark}
	if e.cache.text != "" && e.cache.key == key {
		return e.cache.text
	}
	edge := e.st.inputEdge
	if !focused {
		edge = e.st.faint
	}
	text := box(edge, strings.Split(e.ta.View(), "\n"), e.width)
	e.cache.key, e.cache.text = key, text
	return text
}

// The editor's render is kept while it is unchanged.
type inputKey struct {
	value                    string
	width, line, col, height int
	focus, dark              bool
}

type inputRender struct {
	key  inputKey
	text string
}

// cursor places the terminal's cursor in the editor, drawn at the bottom
// of content.
func (e *editor) cursor(content string) *tea.Cursor {
	c := e.ta.Cursor()
	if c == nil {
		return nil
	}
	// The input box sits above the status line (and the slash hint);
	// its text starts after the border and the padding.
	below := 2 // bottom border and the status line
	if e.hint() != "" {
		below++
	}
	top := lipgloss.Height(content) - below - e.ta.Height()
	c.Position.X += 2
	c.Position.Y += top
	return c
}

// hint is the line under the editor while a slash command is typed: the
// commands it may be, or that none is.
func (e *editor) hint() string {
	v := e.ta.Value()
	if !strings.HasPrefix(v, "/") || strings.ContainsAny(v, " \n") {
		return ""
	}
	matches := slashMatches(v)
	switch len(matches) {
	case 0:
		return e.st.dim.Render("  no such command · /help lists them")
	case 1:
		return clip("  "+matches[0].name+" "+e.st.dim.Render(matches[0].help), e.width)
	}
	var names []string
	for _, c := range matches {
		names = append(names, c.name)
	}
	return clip("  "+strings.Join(names, "  ")+e.st.dim.Render("  · tab completes"), e.width)
}

// complete completes a slash command from its prefix; when it cannot,
// it returns what to say instead.
func (e *editor) complete() string {
	matches := slashMatches(e.ta.Value())
	switch len(matches) {
	case 0:
		return fmt.Sprintf("No command starts with %s.", e.ta.Value())
	case 1:
		e.ta.SetValue(matches[0].name + " ")
		return ""
	default:
		var names []string
		for _, c := range matches {
			names = append(names, c.name)
		}
		return fmt.Sprint(strings.Join(names, " "))
	}
}
