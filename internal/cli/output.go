package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/permission"
)

// outputFormats returns the valid --output-format values.
func outputFormats() []string { return []string{"text", "json", "stream-json"} }

// printer writes a run's events in one output format.
type printer interface {
	event(ev cadre.Event) error
	// fail reports a run that ended with an error instead of a result.
	fail(msg, subtype string) error
}

func newPrinter(format string, out, errOut io.Writer, verbose bool) (printer, error) {
	switch format {
	case "text", "":
		return &textPrinter{out: out, errOut: errOut, verbose: verbose}, nil
	case "json":
		return &jsonPrinter{enc: json.NewEncoder(out)}, nil
	case "stream-json":
		return &streamPrinter{enc: json.NewEncoder(out)}, nil
	}
	return nil, fmt.Errorf("invalid --output-format %q: valid values are %s", format, strings.Join(outputFormats(), ", "))
}

type textPrinter struct {
	out, errOut io.Writer
	verbose     bool
	// labels names running sub-agents for --verbose lines.
	labels map[string]string
}

// label prefixes a --verbose line with the agent it belongs to, indented
// by depth; the main agent's lines have none.
func (p *textPrinter) label(agentID string) string {
	if agentID == "" {
		return ""
	}
	if l, ok := p.labels[agentID]; ok {
		return l
	}
	return "[" + agentID + "] "
}

func (p *textPrinter) event(ev cadre.Event) error {
	if ev.Type == cadre.EventResult {
		_, err := fmt.Fprintln(p.out, ev.Result.Text)
		return err
	}
	if !p.verbose {
		return nil
	}
	pre := p.label(ev.AgentID)
	switch ev.Type {
	case cadre.EventToolStart:
		fmt.Fprintf(p.errOut, "%s● %s %s\n", pre, ev.Call.Name, oneLine(string(ev.Call.Input), 120))
	case cadre.EventToolEnd:
		if ev.ToolResult.IsError {
			fmt.Fprintf(p.errOut, "%s  ⎿ error: %s\n", pre, oneLine(ev.ToolResult.Text, 200))
		}
	case cadre.EventTaskStarted:
		if p.labels == nil {
			p.labels = map[string]string{}
		}
		p.labels[ev.Task.AgentID] = strings.Repeat("  ", ev.Task.Depth) + "[" + ev.Task.AgentType + " " + ev.Task.AgentID + "] "
		fmt.Fprintf(p.errOut, "%s▶ started: %s (model %s, %d tools)\n", p.label(ev.Task.AgentID), ev.Task.Description, ev.Task.Receipt.Model, len(ev.Task.Receipt.Tools))
	case cadre.EventTaskCompleted:
		fmt.Fprintf(p.errOut, "%s■ %s (%d tool uses, %d ms)\n", pre, ev.Subagent.Status, ev.Subagent.ToolUses, ev.Subagent.Duration.Milliseconds())
		delete(p.labels, ev.Subagent.AgentID)
	case cadre.EventRetry:
		fmt.Fprintf(p.errOut, "%sretrying model request (attempt %d, status %d) in %s: %s\n", pre, ev.Retry.Attempt, ev.Retry.Status, ev.Retry.Wait, ev.Retry.Err)
	}
	return nil
}

func (p *textPrinter) fail(msg, _ string) error {
	_, err := fmt.Fprintln(p.errOut, "cadre: "+msg)
	return err
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// resultJSON is the final object of json and stream-json output; field names
// follow Claude Code's so existing scripts keep working.
type resultJSON struct {
	Type              string              `json:"type"`
	Subtype           string              `json:"subtype"`
	IsError           bool                `json:"is_error"`
	Result            string              `json:"result"`
	NumTurns          int                 `json:"num_turns"`
	DurationMS        int64               `json:"duration_ms"`
	SessionID         string              `json:"session_id"`
	Usage             llm.Usage           `json:"usage"`
	PermissionDenials []permission.Denial `json:"permission_denials"`
	Subagents         cadre.SubagentStats `json:"subagents"`
	TranscriptPath    string              `json:"transcript_path,omitempty"`
}

func toResultJSON(res *cadre.Result) resultJSON {
	d := res.PermissionDenials
	if d == nil {
		d = []permission.Denial{}
	}
	return resultJSON{
		Type: "result", Subtype: res.Subtype, IsError: res.IsError, Result: res.Text, NumTurns: res.NumTurns,
		DurationMS: res.Duration.Milliseconds(), SessionID: res.SessionID, Usage: res.Usage,
		PermissionDenials: d, Subagents: res.Subagents, TranscriptPath: res.TranscriptPath,
	}
}

// failJSON is the result object of a run that ended in error.
func failJSON(msg, subtype, session string) resultJSON {
	return resultJSON{Type: "result", Subtype: subtype, IsError: true, Result: msg, SessionID: session,
		PermissionDenials: []permission.Denial{}}
}

type jsonPrinter struct {
	enc     *json.Encoder
	session string
}

func (p *jsonPrinter) event(ev cadre.Event) error {
	switch ev.Type {
	case cadre.EventInit:
		p.session = ev.Init.SessionID
	case cadre.EventResult:
		return p.enc.Encode(toResultJSON(ev.Result))
	}
	return nil
}

func (p *jsonPrinter) fail(msg, subtype string) error {
	return p.enc.Encode(failJSON(msg, subtype, p.session))
}

type streamPrinter struct {
	enc     *json.Encoder
	session string
}

type initJSON struct {
	Type           string   `json:"type"`
	Subtype        string   `json:"subtype"`
	SessionID      string   `json:"session_id"`
	Cwd            string   `json:"cwd"`
	Model          string   `json:"model"`
	Tools          []string `json:"tools"`
	TranscriptPath string   `json:"transcript_path,omitempty"`
}

type messageJSON struct {
	Type            string       `json:"type"`
	Message         *llm.Message `json:"message"`
	ParentToolUseID *string      `json:"parent_tool_use_id"`
	AgentID         string       `json:"agent_id,omitempty"`
	SessionID       string       `json:"session_id"`
	Usage           *llm.Usage   `json:"usage,omitempty"`
}

func (p *streamPrinter) event(ev cadre.Event) error {
	var parent *string
	if ev.ParentToolUseID != "" {
		parent = &ev.ParentToolUseID
	}
	switch ev.Type {
	case cadre.EventInit:
		p.session = ev.Init.SessionID
		return p.enc.Encode(initJSON{Type: "system", Subtype: "init", SessionID: ev.Init.SessionID, Cwd: ev.Init.Cwd,
			Model: ev.Init.Model, Tools: ev.Init.Tools, TranscriptPath: ev.Init.TranscriptPath})
	case cadre.EventAssistant:
		u := ev.Usage
		return p.enc.Encode(messageJSON{Type: "assistant", Message: ev.Message, ParentToolUseID: parent, AgentID: ev.AgentID, SessionID: p.session, Usage: &u})
	case cadre.EventUser:
		return p.enc.Encode(messageJSON{Type: "user", Message: ev.Message, ParentToolUseID: parent, AgentID: ev.AgentID, SessionID: p.session})
	case cadre.EventTaskStarted:
		return p.enc.Encode(taskJSON{Type: "system", Subtype: "task_started", SessionID: p.session, TaskInfo: ev.Task})
	case cadre.EventTaskCompleted:
		return p.enc.Encode(taskDoneJSON{Type: "system", Subtype: "task_completed", SessionID: p.session, SubagentResult: ev.Subagent,
			DurationMS: ev.Subagent.Duration.Milliseconds()})
	case cadre.EventResult:
		return p.enc.Encode(toResultJSON(ev.Result))
	}
	return nil
}

// taskJSON is the stream-json event for a started sub-agent (S-7.6).
type taskJSON struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	*cadre.TaskInfo
}

// taskDoneJSON is the stream-json event for an ended sub-agent.
type taskDoneJSON struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	*cadre.SubagentResult
	DurationMS int64 `json:"duration_ms"`
}

func (p *streamPrinter) fail(msg, subtype string) error {
	return p.enc.Encode(failJSON(msg, subtype, p.session))
}
