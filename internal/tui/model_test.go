package tui

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
)

var update = flag.Bool("update", false, "rewrite the golden views")

// t0 is the test clock's start.
var t0 = time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)

const cwd = "/home/dev/shop"

// recorder records the actions the model asks for.
type recorder struct {
	started     []string
	interrupted int
	modes       []permission.Mode
	background  []string
	stopped     []string
	watched     []int
}

func (r *recorder) actions() actions {
	return actions{
		start:     func(p string) tea.Cmd { r.started = append(r.started, p); return nil },
		interrupt: func() tea.Cmd { r.interrupted++; return nil },
		watch:     func(stream int, _ bool) tea.Cmd { r.watched = append(r.watched, stream); return nil },
		setMode: func(m permission.Mode) tea.Cmd {
			r.modes = append(r.modes, m)
			return func() tea.Msg { return modeMsg{mode: m} }
		},
	}
}

// testModel is a model at w×h on the test clock, with the alternate
// screen, that has sent prompt.
func testModel(t *testing.T, w, h int, rec *recorder) *Model {
	t.Helper()
	if rec == nil {
		rec = &recorder{}
	}
	m := newModel(config{cwd: cwd, model: "claude-sonnet-4-5", mode: permission.ModeDefault, sessionID: "5f0c2a51-0d6e-4a57-9d59-2f1d8e3b7c10",
		altScreen: true, dark: true}, rec.actions())
	// The clock moves only with the test's ticks.
	m.clock = func() time.Time { return time.Time{} }
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	m.Update(tickMsg{at: t0})
	return m
}

// feed applies events to the model, each a second after the last.
type feeder struct {
	m  *Model
	at time.Time
}

func (f *feeder) ev(evs ...run.Event) {
	var items []runItem
	for _, e := range evs {
		f.at = f.at.Add(time.Second)
		items = append(items, runItem{ev: e, at: f.at})
	}
	f.m.Update(eventsMsg{items: items})
}

// end ends the user's turn.
func (f *feeder) end() {
	f.at = f.at.Add(time.Second)
	f.m.Update(eventsMsg{items: []runItem{{end: true, at: f.at}}})
}

// watch applies events of the watcher numbered stream.
func (f *feeder) watch(stream int, evs ...run.Event) {
	var items []runItem
	for _, e := range evs {
		f.at = f.at.Add(time.Second)
		items = append(items, runItem{ev: e, at: f.at, notify: true, stream: stream})
	}
	f.m.Update(eventsMsg{items: items})
}

// watchTurnEnd ends the notification turn of the watcher stream.
func (f *feeder) watchTurnEnd(stream int) {
	f.at = f.at.Add(time.Second)
	f.m.Update(eventsMsg{items: []runItem{{end: true, notify: true, stream: stream, at: f.at}}})
}

func (f *feeder) tick(d time.Duration) {
	f.at = f.at.Add(d)
	f.m.Update(tickMsg{at: f.at})
}

func typeText(m *Model, s string) {
	for _, r := range s {
		m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func press(m *Model, keys ...string) {
	for _, k := range keys {
		m.Update(keyMsg(k))
	}
}

// keyMsg builds a key press from its name.
func keyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "pgup":
		return tea.KeyPressMsg{Code: tea.KeyPgUp}
	case "ctrl+c", "ctrl+d", "ctrl+b", "ctrl+o", "ctrl+j":
		return tea.KeyPressMsg{Code: rune(k[len(k)-1]), Mod: tea.ModCtrl}
	}
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}

func call(id, name string, input any) *llm.Block {
	b, _ := json.Marshal(input)
	return &llm.Block{Type: llm.BlockToolUse, ID: id, Name: name, Input: b}
}

func assistant(text string, calls ...*llm.Block) *llm.Message {
	m := &llm.Message{Role: llm.RoleAssistant}
	if text != "" {
		m.Content = append(m.Content, llm.TextBlock(text))
	}
	for _, c := range calls {
		m.Content = append(m.Content, *c)
	}
	return m
}

func usage(in, out int64) llm.Usage { return llm.Usage{InputTokens: in, OutputTokens: out} }

// screen is the model's view as plain text, trailing blanks trimmed.
func screen(t *testing.T, m *Model) string {
	t.Helper()
	view := m.View()
	lines := strings.Split(ansi.Strip(view.Content), "\n")
	for i, l := range lines {
		if w := ansi.StringWidth(l); w > m.width {
			t.Errorf("line %d is %d cells wide, more than %d: %q", i+1, w, m.width, l)
		}
		lines[i] = strings.TrimRight(l, " ")
	}
	if m.cfg.altScreen && len(lines) != m.height {
		t.Errorf("view has %d lines, want the terminal's %d", len(lines), m.height)
	}
	return strings.Join(lines, "\n") + "\n"
}

// golden compares the view with testdata/NAME.golden (-update rewrites
// it).
func golden(t *testing.T, name string, m *Model) {
	t.Helper()
	got := screen(t, m)
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("view %s differs from its golden file:\n--- got\n%s--- want\n%s", name, got, want)
	}
}

var sizes = []struct{ w, h int }{{80, 24}, {160, 48}}

func sizeName(w, h int) string { return fmt.Sprintf("%dx%d", w, h) }
