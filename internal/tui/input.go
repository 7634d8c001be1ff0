package tui

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// maxInputRows bounds the input box's height; longer input scrolls.
const maxInputRows = 8

// newInput makes the prompt editor: multi-line, Enter sends, Alt+Enter,
// Shift+Enter or Ctrl+J insert a newline, and the terminal's own cursor.
func newInput(st styles) textarea.Model {
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
	ta.SetStyles(inputStyles(st))
	ta.Focus()
	return ta
}

func inputStyles(st styles) textarea.Styles {
	s := textarea.DefaultStyles(st.dark)
	s.Focused.CursorLine = lipgloss.NewStyle()
	s.Focused.Placeholder = lipgloss.NewStyle().Foreground(st.grey)
	s.Blurred.Placeholder = lipgloss.NewStyle().Foreground(st.grey)
	return s
}

// Pastes this large are kept out of the editor and shown as one
// placeholder, expanded when the prompt is sent.
const (
	bigPasteBytes = 2000
	bigPasteLines = 12
)

var pasteRef = regexp.MustCompile(`\[Pasted text #(\d+)(?: \+\d+ lines)?\]`)

// paste inserts pasted text: as it is when small, as a placeholder when
// large.
func (m *Model) paste(text string) tea.Cmd {
	if len(m.prompts) > 0 && m.modal.reasoning {
		m.modal.reason += oneLine(text)
		return nil
	}
	if m.focus != focusInput || m.picker != nil {
		return nil
	}
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	if len(text) < bigPasteBytes && lineCount(text) < bigPasteLines {
		m.input.InsertString(text)
		m.layout()
		return nil
	}
	m.pasteN++
	m.pastes[m.pasteN] = text
	m.input.InsertString(fmt.Sprintf("[Pasted text #%d +%d lines]", m.pasteN, lineCount(text)))
	m.layout()
	return nil
}

// expandPastes puts the pasted texts back in place of their placeholders.
func (m *Model) expandPastes(s string) string {
	return pasteRef.ReplaceAllStringFunc(s, func(ref string) string {
		n, _ := strconv.Atoi(pasteRef.FindStringSubmatch(ref)[1])
		if text, ok := m.pastes[n]; ok {
			return text
		}
		return ref
	})
}

// submit sends the editor's text: a slash command, or a prompt.
func (m *Model) submit() tea.Cmd {
	raw := m.input.Value()
	if strings.HasSuffix(raw, "\\") {
		// A trailing backslash continues the prompt on a new line.
		m.input.SetValue(strings.TrimSuffix(raw, "\\") + "\n")
		m.layout()
		return nil
	}
	text := strings.TrimSpace(m.expandPastes(raw))
	if text == "" {
		return nil
	}
	if len(m.history) == 0 || m.history[len(m.history)-1] != raw {
		m.history = append(m.history, raw)
	}
	m.histPos, m.draft = len(m.history), ""
	m.input.Reset()
	m.pastes, m.pasteN = map[int]string{}, 0
	m.layout()
	if strings.HasPrefix(text, "/") {
		return m.slash(text)
	}
	return m.send(text)
}

// historyStep moves through earlier prompts: -1 older, +1 newer. It
// returns false when there is nowhere to go, so the key moves the cursor.
func (m *Model) historyStep(dir int) bool {
	if dir < 0 && (m.input.Line() > 0 || m.histPos == 0) {
		return false
	}
	if dir > 0 && (m.input.Line() < m.input.LineCount()-1 || m.histPos >= len(m.history)) {
		return false
	}
	if m.histPos == len(m.history) {
		m.draft = m.input.Value()
	}
	m.histPos += dir
	if m.histPos >= len(m.history) {
		m.histPos = len(m.history)
		m.input.SetValue(m.draft)
	} else {
		m.input.SetValue(m.history[m.histPos])
	}
	if dir < 0 {
		m.input.MoveToBegin()
	}
	m.layout()
	return true
}
