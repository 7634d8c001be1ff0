package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/cadre-dev/cadre/tool"
)

// inputFields decodes a tool call's JSON input into a map of its fields;
// an input that is not an object gives nil.
func inputFields(in json.RawMessage) map[string]any {
	var m map[string]any
	if len(in) == 0 || json.Unmarshal(in, &m) != nil {
		return nil
	}
	return m
}

func field(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// relPath shows path relative to cwd when it is inside it.
func relPath(path, cwd string) string {
	if cwd == "" || !filepath.IsAbs(path) {
		return path
	}
	rel, err := filepath.Rel(cwd, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return path
	}
	return rel
}

// summarizeCall renders a tool call as the conversation shows it on one
// line: the tool's name and the one argument that says what it does.
func summarizeCall(name string, input json.RawMessage, cwd string) string {
	m := inputFields(input)
	arg := ""
	switch name {
	case tool.Bash:
		arg = firstLine(field(m, "command"))
	case tool.Read, tool.Write, tool.Edit, tool.MultiEdit:
		arg = relPath(field(m, "file_path"), cwd)
	case tool.NotebookEdit, tool.NotebookRead:
		arg = relPath(field(m, "notebook_path"), cwd)
	case tool.Glob, tool.Grep:
		arg = field(m, "pattern")
		if p := field(m, "path"); p != "" {
			arg += " in " + relPath(p, cwd)
		}
	case tool.LS:
		arg = relPath(field(m, "path"), cwd)
	case tool.Agent, tool.Task:
		typ := field(m, "subagent_type")
		if typ == "" {
			typ = "general-purpose"
		}
		arg = typ
		if d := field(m, "description"); d != "" {
			arg += ": " + d
		}
	case tool.WebFetch:
		arg = field(m, "url")
	case tool.WebSearch:
		arg = field(m, "query")
	case tool.TaskStop, tool.TaskOutput:
		arg = field(m, "task_id")
	case tool.SendMessage:
		arg = field(m, "to")
	case tool.TodoWrite:
		n := 0
		if list, ok := m["todos"].([]any); ok {
			n = len(list)
		}
		arg = plural(n, "todo")
	default:
		arg = compactJSON(input)
	}
	return name + "(" + oneLine(arg) + ")"
}

// compactJSON renders JSON on one line; an invalid input is shown as is.
func compactJSON(in json.RawMessage) string {
	if len(in) == 0 {
		return ""
	}
	var b bytes.Buffer
	if err := json.Compact(&b, in); err != nil {
		return string(in)
	}
	s := b.String()
	if s == "{}" {
		return ""
	}
	return s
}

// firstLine is the first non-blank line of s, with a mark when more
// follow.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[:i]) + " …"
	}
	return s
}

// oneLine folds whitespace runs to single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// clip cuts s to at most n display cells, ending with "…" when cut. It
// keeps ANSI styling intact.
func clip(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if cellWidth(s) <= n {
		return s
	}
	return ansi.TruncateWc(s, n, "…")
}

// lineCount counts the lines of s (a final newline does not start one).
func lineCount(s string) int {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return 0
	}
	return strings.Count(s, "\n") + 1
}

// formatTokens renders a token count the way a person reads it: 950,
// 12.3k, 1.2M.
func formatTokens(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d", n)
	case n < 1_000_000:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/1000)) + "k"
	default:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/1_000_000)) + "M"
	}
}

func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }

// formatElapsed renders a duration as 4s, 1m05s, 1h02m.
func formatElapsed(d time.Duration) string {
	s := int(d / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	default:
		return fmt.Sprintf("%dh%02dm", s/3600, (s%3600)/60)
	}
}

// shortID abbreviates an agent id ("a" and 16 hex digits) to 7 characters.
func shortID(id string) string {
	if utf8.RuneCountInString(id) > 7 {
		return string([]rune(id)[:7])
	}
	return id
}

// plural renders "1 tool", "2 tools".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
