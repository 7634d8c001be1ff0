package tui

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/transcript"
)

// sessionInfo is a saved session of the project, as the picker lists it.
type sessionInfo struct {
	ID       string
	Path     string
	Modified time.Time
	// FirstPrompt is the first thing the user asked.
	FirstPrompt string
}

// sessionsMsg carries the saved sessions (newest first).
type sessionsMsg struct {
	list []sessionInfo
	err  error
}

// historyMsg carries a saved session's transcript.
type historyMsg struct {
	session sessionInfo
	entries []transcript.Entry
	err     error
}

// runtimeMsg reports that another session is open: a fresh one (/clear)
// or a resumed one with its history.
type runtimeMsg struct {
	sessionID string
	resumed   *historyMsg
	err       error
}

// viewSession prefixes the view key of a saved session shown read-only.
const viewSession = "session:"

// firstPromptBytes bounds how much of a transcript is read to find the
// first prompt.
const firstPromptBytes = 256 << 10

// listSessions lists the saved sessions of the project in cwd, newest
// first, at most limit.
func listSessions(stateDir, cwd string, limit int) ([]sessionInfo, error) {
	dir := filepath.Dir(transcript.SessionPath(stateDir, cwd, "x"))
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions in %s: %w", dir, err)
	}
	var out []sessionInfo
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		out = append(out, sessionInfo{ID: strings.TrimSuffix(name, ".jsonl"), Path: filepath.Join(dir, name), Modified: info.ModTime()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Modified.After(out[j].Modified) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	for i := range out {
		out[i].FirstPrompt = firstPrompt(out[i].Path)
	}
	return out, nil
}

// firstPrompt is the first user text of a transcript, "" when none is
// found in its first part.
func firstPrompt(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	// A line cut by the limit is the last one read, which Read ignores.
	entries, err := transcript.Read(io.LimitReader(f, firstPromptBytes))
	if err != nil {
		return ""
	}
	for _, e := range entries {
		if e.Message == nil || e.Message.Role != llm.RoleUser {
			continue
		}
		if t := strings.TrimSpace(e.Message.Text()); t != "" {
			return t
		}
	}
	return ""
}

// historyConvo rebuilds a conversation from a transcript's entries.
func historyConvo(entries []transcript.Entry, cwd string) *convo {
	c := newConvo("", cwd)
	for _, msg := range transcript.Messages(entries) {
		for _, b := range msg.Content {
			switch b.Type {
			case llm.BlockText:
				if strings.TrimSpace(b.Text) == "" {
					continue
				}
				if msg.Role == llm.RoleUser {
					c.addUser(b.Text)
				} else {
					c.add(&item{kind: itemAssistant, text: strings.TrimSpace(b.Text), done: true})
				}
			case llm.BlockToolUse:
				c.startTool(&llm.Block{ID: b.ID, Name: b.Name, Input: b.Input})
			case llm.BlockToolResult:
				if it := c.tool(b.ToolUseID); it != nil {
					var text []string
					for _, p := range b.Content {
						text = append(text, p.Text)
					}
					it.result, it.isError, it.done = strings.Join(text, "\n"), b.IsError, true
					it.touch()
				}
			}
		}
	}
	c.closeOpen("The session ended before this call finished.")
	return c
}

// sessionPicker is the /resume list.
type sessionPicker struct {
	list []sessionInfo
	sel  int
}

// newSessionPicker lists the saved sessions other than current; nil
// when there is none.
func newSessionPicker(list []sessionInfo, current string) *sessionPicker {
	var others []sessionInfo
	for _, s := range list {
		if s.ID != current {
			others = append(others, s)
		}
	}
	if len(others) == 0 {
		return nil
	}
	return &sessionPicker{list: others}
}

// key moves the selection; Enter chooses a session, Esc closes the
// picker (done).
func (p *sessionPicker) key(s string) (chosen *sessionInfo, done bool) {
	switch s {
	case "up", "k":
		p.sel = max(p.sel-1, 0)
	case "down", "j":
		p.sel = min(p.sel+1, len(p.list)-1)
	case "esc", "q":
		return nil, true
	case "enter":
		c := p.list[p.sel]
		return &c, true
	}
	return nil, false
}

// pickerKey passes a key to the session picker and opens the session
// chosen: to continue it when the runtime can, read-only otherwise.
func (m *Model) pickerKey(s string) tea.Cmd {
	chosen, done := m.picker.key(s)
	if done {
		m.picker = nil
	}
	if chosen == nil {
		return nil
	}
	if m.cfg.canResume && m.act.resume != nil {
		return m.act.resume(*chosen)
	}
	if m.act.history != nil {
		return m.act.history(*chosen)
	}
	return nil
}

// showHistory shows a saved session read-only.
func (p *convoPane) showHistory(msg historyMsg) {
	if msg.err != nil {
		p.main().addError(fmt.Sprintf("Cannot read session %s: %v", msg.session.ID, msg.err))
		return
	}
	key := viewSession + msg.session.ID
	c := historyConvo(msg.entries, p.cfg.cwd)
	c.agentID = key
	p.convos[key] = c
	p.sessions[key] = msg.session
	p.show(key)
}

// runtimeChanged switches to another session.
func (m *Model) runtimeChanged(msg runtimeMsg) tea.Cmd {
	if msg.err != nil {
		m.pane.main().addError(msg.err.Error())
		return nil
	}
	m.resetConversation()
	m.cfg.sessionID = msg.sessionID
	if h := msg.resumed; h != nil && h.err == nil {
		m.pane.convos[""] = historyConvo(h.entries, m.cfg.cwd)
		m.pane.main().addInfo("Resumed session " + msg.sessionID + ".")
	}
	if msg.resumed == nil || m.turn.running {
		return nil
	}
	// A saved session may hold notifications its earlier process never
	// delivered, and tasks a crash interrupted: a watcher looks at once,
	// so they show (and the main agent hears of them) without a prompt.
	return m.turn.startWatch(m.act.watch, true)
}

// view renders the session list; canResume says a session chosen is
// continued rather than shown read-only.
func (p *sessionPicker) view(st *styles, width, rows int, canResume bool) string {
	inner := max(width-4, 20)
	lines := []string{st.title.Render("Resume a session of this project"), ""}
	if !canResume {
		for _, l := range wrapLines("Saved sessions cannot be continued here: the one you pick opens read-only.", inner) {
			lines = append(lines, st.warn.Render(l))
		}
		lines = append(lines, "")
	}
	rows = max(rows-len(lines)-2, 3)
	start := 0
	if p.sel >= rows {
		start = p.sel - rows + 1
	}
	for i := start; i < len(p.list) && i < start+rows; i++ {
		s := p.list[i]
		text := fmt.Sprintf("%s  %s  %s", s.Modified.Local().Format("2006-01-02 15:04"), shortID(s.ID), oneLine(orText(s.FirstPrompt, "(no prompt)")))
		mark := "  "
		if i == p.sel {
			mark = st.accent.Render("›") + " "
			text = st.bold.Render(clip(text, inner-2))
		}
		lines = append(lines, mark+clip(text, inner-2))
	}
	lines = append(lines, "", st.dim.Render("↑ ↓ choose · enter opens · esc closes"))
	return box(st.modalEdge, lines, width)
}
