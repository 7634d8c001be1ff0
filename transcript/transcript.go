// Package transcript stores an agent's conversation as append-only JSON
// lines, one message per line, handed to the session's Journal as each
// message is complete and written by it at once, so an interrupt loses
// nothing that was said. The same files are read back to resume an agent.
package transcript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/prompts"
)

// Entry is one line of a transcript.
type Entry struct {
	// Type is "user" or "assistant" for conversation messages, and
	// EntryRunEnd for the record of how a run ended.
	Type string `json:"type"`
	// SessionID is the session the agent belongs to.
	SessionID string `json:"sessionId"`
	// AgentID is set in a sub-agent's transcript.
	AgentID string `json:"agentId,omitempty"`
	// Timestamp is when the entry was written (RFC 3339, UTC).
	Timestamp string `json:"timestamp"`
	// Message is the conversation message.
	Message *llm.Message `json:"message,omitempty"`
	// Model and Usage are set on assistant entries.
	Model string     `json:"model,omitempty"`
	Usage *llm.Usage `json:"usage,omitempty"`
	// RunEnd is set on the run_end entry (Type EntryRunEnd) that closes
	// each run.
	RunEnd *RunEnd `json:"runEnd,omitempty"`
	// Compact is set on a compact_boundary entry (Type
	// EntryCompactBoundary): the conversation was compacted here, and
	// the messages after it are the compacted conversation.
	Compact *CompactBoundary `json:"compactMetadata,omitempty"`
}

// EntryCompactBoundary is the Type of the entry that marks a compaction.
const EntryCompactBoundary = "compact_boundary"

// CompactBoundary is what a compact_boundary entry records.
type CompactBoundary struct {
	// Trigger is "auto" or "manual".
	Trigger string `json:"trigger"`
	// PreTokens and PostTokens are the context size before and (an
	// estimate) after.
	PreTokens  int64 `json:"preTokens"`
	PostTokens int64 `json:"postTokens"`
	// DurationMs is how long the compaction took.
	DurationMs int64 `json:"durationMs"`
	// Summary is the summary the model wrote.
	Summary string `json:"summary,omitempty"`
}

// Torn is a record cut short: the process died (or the disk filled) in
// the middle of writing it. Its line holds the start of a JSON object and
// no end; it is skipped when the transcript is read.
type Torn struct {
	// Line is the 1-based line number of the partial record.
	Line int
	// Bytes is how much of the record was written.
	Bytes int
}

// maxLine bounds one transcript line when it is read back.
const maxLine = 64 << 20

// Read parses every entry of a transcript. Torn records (see [Scan]) are
// skipped; a bad line of any other kind is an error naming it.
func Read(r io.Reader) ([]Entry, error) {
	entries, _, err := Scan(r)
	return entries, err
}

// Scan parses every entry of a transcript and reports the torn records it
// skipped: a last line with no newline that does not decode, a line
// anywhere holding the start of a JSON object and no end (a crash tore it,
// and a later run started its records on the next line), or the start of
// one with a whole entry glued after it (written by a cadre that did not
// end the torn line first; the entry is kept). Any other line that does
// not decode is an error naming it.
func Scan(r io.Reader) ([]Entry, []Torn, error) {
	var out []Entry
	var torn []Torn
	br := bufio.NewReader(r)
	for line := 1; ; line++ {
		raw, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return nil, nil, fmt.Errorf("read transcript: %w", err)
		}
		if len(raw) > maxLine {
			return nil, nil, fmt.Errorf("transcript line %d: longer than %d bytes", line, maxLine)
		}
		terminated := len(raw) > 0 && raw[len(raw)-1] == '\n'
		text := bytes.TrimSpace(raw)
		if len(text) > 0 {
			var e Entry
			switch derr := decodeEntry(text, &e); {
			case derr == nil:
				out = append(out, e)
			case !terminated || errors.Is(derr, io.ErrUnexpectedEOF):
				torn = append(torn, Torn{Line: line, Bytes: len(text)})
			default:
				at, ok := gluedEntry(text, &e)
				if !ok {
					return nil, nil, fmt.Errorf("transcript line %d: %w", line, derr)
				}
				torn = append(torn, Torn{Line: line, Bytes: at})
				out = append(out, e)
			}
		}
		if err == io.EOF {
			return out, torn, nil
		}
	}
}

// maxGlueTries bounds the places gluedEntry tries on one line.
const maxGlueTries = 16

// entryStart is how every encoded Entry begins (Type is its first field).
var entryStart = []byte(`{"type":`)

// gluedEntry finds a whole entry glued after a torn record on one line
// (a writer that did not end the torn line first): the first place after
// the start where an entry begins and decodes to the line's end. It
// returns where the entry starts.
func gluedEntry(text []byte, e *Entry) (int, bool) {
	// A bounded number of tries: a crafted line cannot make reading
	// quadratic.
	for from, tries := 1, 0; from < len(text) && tries < maxGlueTries; tries++ {
		i := bytes.Index(text[from:], entryStart)
		if i < 0 {
			return 0, false
		}
		at := from + i
		var cand Entry
		if decodeEntry(text[at:], &cand) == nil {
			*e = cand
			return at, true
		}
		from = at + 1
	}
	return 0, false
}

// decodeEntry decodes one line: exactly one JSON object. A line that ends
// inside the object gives io.ErrUnexpectedEOF.
func decodeEntry(text []byte, e *Entry) error {
	dec := json.NewDecoder(bytes.NewReader(text))
	if err := dec.Decode(e); err != nil {
		return err
	}
	if rest := bytes.TrimSpace(text[dec.InputOffset():]); len(rest) > 0 {
		return errors.New("more than one JSON value on the line")
	}
	return nil
}

// ReadFile reads the transcript at path.
func ReadFile(path string) ([]Entry, error) {
	entries, _, err := ScanFile(path)
	return entries, err
}

// ScanFile reads the transcript at path and reports its torn records
// (see [Scan]).
func ScanFile(path string) ([]Entry, []Torn, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("open transcript: %w", err)
	}
	defer f.Close()
	entries, torn, err := Scan(f)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return entries, torn, nil
}

// TornWarning describes the torn records of the transcript at path for a
// person: "" when there are none.
func TornWarning(path string, torn []Torn) string {
	if len(torn) == 0 {
		return ""
	}
	lines := make([]string, len(torn))
	for i, t := range torn {
		lines[i] = fmt.Sprintf("line %d (%d bytes)", t.Line, t.Bytes)
	}
	return fmt.Sprintf("transcript %s: skipped %d record(s) cut short by an earlier crash or a failed write: %s",
		path, len(torn), strings.Join(lines, ", "))
}

// Messages returns the conversation messages of the entries, in order, as
// they were sent, from the last compact_boundary on (the compacted
// conversation): consecutive user entries (a prompt that followed tool
// results) are joined into one message. Tool calls that never got results
// (the process died, or the agent was stopped, between an answer and its
// results) get error results saying so (see [CloseInterrupted]), so the
// conversation can be sent again as it is.
func Messages(entries []Entry) []llm.Message {
	var out []llm.Message
	for _, e := range entries {
		if e.Type == EntryCompactBoundary {
			// A resume continues from the compacted conversation; the
			// history before stays in the file.
			out = nil
			continue
		}
		if e.Message == nil {
			continue
		}
		m := *e.Message
		if n := len(out); n > 0 && m.Role == llm.RoleUser && out[n-1].Role == llm.RoleUser {
			out[n-1].Content = append(append([]llm.Block(nil), out[n-1].Content...), m.Content...)
			continue
		}
		out = append(out, m)
	}
	out, _ = CloseInterrupted(out)
	return out
}

// CloseInterrupted returns msgs with an error result for every tool call
// that has none in the user message after it: the call was interrupted
// and may not have completed. The results go after the results the user
// message has (tool results come first in a user message), or in a new
// user message after a last answer. It returns how many it added; msgs
// itself is not changed. A conversation with every call answered comes
// back as it is, so applying it again changes nothing.
func CloseInterrupted(msgs []llm.Message) ([]llm.Message, int) {
	var out []llm.Message
	added := 0
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		uses := m.ToolUses()
		if m.Role != llm.RoleAssistant || len(uses) == 0 {
			if out != nil {
				out = append(out, m)
			}
			continue
		}
		var next *llm.Message
		if i+1 < len(msgs) && msgs[i+1].Role == llm.RoleUser {
			next = &msgs[i+1]
		}
		answered := map[string]bool{}
		if next != nil {
			for _, b := range next.Content {
				if b.Type == llm.BlockToolResult {
					answered[b.ToolUseID] = true
				}
			}
		}
		var missing []llm.Block
		for _, u := range uses {
			if !answered[u.ID] {
				answered[u.ID] = true
				missing = append(missing, llm.ToolResultBlock(u.ID, prompts.CallInterrupted(), true))
			}
		}
		if len(missing) == 0 {
			if out != nil {
				out = append(out, m)
			}
			continue
		}
		if out == nil {
			out = append(make([]llm.Message, 0, len(msgs)+1), msgs[:i]...)
		}
		added += len(missing)
		out = append(out, m)
		if next == nil {
			out = append(out, llm.Message{Role: llm.RoleUser, Content: missing})
			continue
		}
		// After the results the message has: tool results lead a user
		// message.
		at := 0
		for at < len(next.Content) && next.Content[at].Type == llm.BlockToolResult {
			at++
		}
		content := make([]llm.Block, 0, len(next.Content)+len(missing))
		content = append(append(append(content, next.Content[:at]...), missing...), next.Content[at:]...)
		out = append(out, llm.Message{Role: llm.RoleUser, Content: content})
		i++ // the user message is done
	}
	if out == nil {
		return msgs, 0
	}
	return out, added
}

// StateDir returns cadre's state directory: $XDG_STATE_HOME/cadre, or
// ~/.local/state/cadre. getenv is os.Getenv in production.
func StateDir(getenv func(string) string) (string, error) {
	if d := getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "cadre"), nil
	}
	home := getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("find state dir: %w", err)
		}
		home = h
	}
	return filepath.Join(home, ".local", "state", "cadre"), nil
}

// ProjectSlug turns a project directory into a file name: every character
// that is not a letter or digit becomes '-' ("/home/me/proj" →
// "-home-me-proj").
func ProjectSlug(dir string) string {
	b := []byte(filepath.Clean(dir))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

// SessionPath is where the main transcript of a session lives:
// <state>/projects/<slug>/<session-id>.jsonl.
func SessionPath(stateDir, projectDir, sessionID string) string {
	return filepath.Join(stateDir, "projects", ProjectSlug(projectDir), sessionID+".jsonl")
}

// AgentPath is where a sub-agent's transcript lives, beside its session's:
// <state>/projects/<slug>/<session-id>/agent-<id>.jsonl.
func AgentPath(stateDir, projectDir, sessionID, agentID string) string {
	return filepath.Join(stateDir, "projects", ProjectSlug(projectDir), sessionID, "agent-"+agentID+".jsonl")
}

// EntryRunEnd is the Type of the entry that closes a run in the main
// transcript: how the run ended, so a reader (or a resumed session) knows
// whether it finished, failed or was cancelled. A transcript whose last
// run has no such entry belongs to a process that died without a word.
const EntryRunEnd = "run_end"

// RunEnd is how a run ended, as its final transcript entry records it.
type RunEnd struct {
	// Subtype is success, error_max_turns or error_during_execution.
	Subtype string `json:"subtype"`
	IsError bool   `json:"isError"`
	// Cancelled is set when the run was cancelled (an interrupt, a signal).
	Cancelled bool `json:"cancelled,omitempty"`
	// Error is why a failed run failed.
	Error      string         `json:"error,omitempty"`
	NumTurns   int            `json:"numTurns"`
	ToolUses   int            `json:"toolUses"`
	DurationMS int64          `json:"durationMs"`
	Usage      llm.Usage      `json:"usage"`
	Subagents  SubagentCounts `json:"subagents"`
}

// SubagentCounts counts a run's sub-agents by how they ended.
type SubagentCounts struct {
	Spawned   int `json:"spawned"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
	Killed    int `json:"killed"`
}

// LastRunEnd is the run_end entry of the transcript's last run: nil when
// the last run has none (it is running, or its process died).
func LastRunEnd(entries []Entry) *RunEnd {
	for i := len(entries) - 1; i >= 0; i-- {
		switch {
		case entries[i].Type == EntryRunEnd:
			return entries[i].RunEnd
		case entries[i].Message != nil:
			return nil
		}
	}
	return nil
}
