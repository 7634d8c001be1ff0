// Package transcript stores an agent's conversation as append-only JSON
// lines, one message per line, handed to the session's Journal as each
// message is complete and written by it at once, so an interrupt loses
// nothing that was said. The same files are read back to resume an agent.
package transcript

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cadre-dev/cadre/llm"
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
}

// Read parses every entry of a transcript. A torn last line (a crash in the
// middle of a write) is ignored; a bad line elsewhere is an error naming it.
func Read(r io.Reader) ([]Entry, error) {
	var out []Entry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
	var pendingErr error
	line := 0
	for sc.Scan() {
		line++
		if pendingErr != nil {
			return nil, pendingErr
		}
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var e Entry
		if err := json.Unmarshal([]byte(text), &e); err != nil {
			pendingErr = fmt.Errorf("transcript line %d: %w", line, err)
			continue
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read transcript: %w", err)
	}
	return out, nil
}

// ReadFile reads the transcript at path.
func ReadFile(path string) ([]Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open transcript: %w", err)
	}
	defer f.Close()
	entries, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return entries, nil
}

// Messages returns the conversation messages of the entries, in order, as
// they were sent: consecutive user entries (a prompt that followed tool
// results) are joined into one message.
func Messages(entries []Entry) []llm.Message {
	var out []llm.Message
	for _, e := range entries {
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
	return out
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
