package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/cadre-dev/cadre/hooks"
	"github.com/cadre-dev/cadre/run"
	"github.com/google/uuid"
)

// hookStartedJSON is system/hook_started, as Claude Code writes it with
// --include-hook-events.
type hookStartedJSON struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	HookID    string `json:"hook_id"`
	HookName  string `json:"hook_name"`
	HookEvent string `json:"hook_event"`
	UUID      string `json:"uuid"`
	SessionID string `json:"session_id"`
}

// hookResponseJSON is system/hook_response: how a hook ended.
type hookResponseJSON struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	HookID    string `json:"hook_id"`
	HookName  string `json:"hook_name"`
	HookEvent string `json:"hook_event"`
	Output    string `json:"output"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	// ExitCode is left out when the hook did not exit on its own.
	ExitCode *int `json:"exit_code,omitempty"`
	// Outcome is success, error or cancelled.
	Outcome   string        `json:"outcome"`
	UUID      string        `json:"uuid"`
	SessionID string        `json:"session_id"`
	Cadre     hookRespExtra `json:"cadre"`
}

// hookRespExtra is cadre's part of hook_response.
type hookRespExtra struct {
	Command    string `json:"command"`
	Source     string `json:"source,omitempty"`
	AgentID    string `json:"agent_id,omitempty"`
	DurationMS int64  `json:"duration_ms"`
	Decision   string `json:"decision,omitempty"`
	TimedOut   bool   `json:"timed_out,omitempty"`
	Error      string `json:"error,omitempty"`
}

// hookName is how Claude Code names a hook run: the event, and the value
// its matchers tested ("PreToolUse:Bash", "SessionStart:startup",
// "SubagentStart:general-purpose"; SubagentStop's name is the event alone,
// as Claude Code 2.1.328 writes it).
func hookName(r *hooks.Run) string {
	if r.Match == "" || r.Event == hooks.SubagentStop {
		return string(r.Event)
	}
	return string(r.Event) + ":" + r.Match
}

// hookOutcome is success (exit 0), cancelled (the run ended first) or
// error (anything else, a blocking exit 2 included).
func hookOutcome(r *hooks.Run) string {
	switch {
	case r.Canceled:
		return "cancelled"
	case r.ExitCode == 0 && r.Err == nil:
		return "success"
	}
	return "error"
}

// hookEvent writes a hook run as stream-json: with --include-hook-events
// every run, without it only SessionStart's (as Claude Code does).
func (p *streamPrinter) hookEvent(ev run.Event) error {
	r := ev.Hook
	if !p.hookEvents && r.Event != hooks.SessionStart {
		return nil
	}
	// Claude Code's hook ids are UUIDs; a run's start and end share one.
	id, ok := p.hookIDs[r.ID]
	if !ok {
		id = uuid.NewString()
		p.hookIDs[r.ID] = id
	}
	if ev.Type == run.EventHookStarted {
		return p.write(hookStartedJSON{Type: "system", Subtype: "hook_started", HookID: id, HookName: hookName(r),
			HookEvent: string(r.Event), UUID: uuid.NewString(), SessionID: p.session})
	}
	delete(p.hookIDs, r.ID)
	out := hookResponseJSON{Type: "system", Subtype: "hook_response", HookID: id, HookName: hookName(r), HookEvent: string(r.Event),
		Output: r.Stdout + r.Stderr, Stdout: r.Stdout, Stderr: r.Stderr, Outcome: hookOutcome(r), UUID: uuid.NewString(), SessionID: p.session,
		Cadre: hookRespExtra{Command: r.Command, Source: r.Source, AgentID: r.AgentID, DurationMS: r.Duration.Milliseconds(),
			Decision: r.Decision, TimedOut: r.TimedOut}}
	if r.ExitCode >= 0 {
		code := r.ExitCode
		out.ExitCode = &code
	}
	if r.Err != nil {
		out.Cadre.Error = r.Err.Error()
	}
	return p.write(out)
}

// printHook writes a finished hook run as a --verbose line: event,
// command, exit code, duration and decision, and why it failed.
func printHook(w io.Writer, label string, r *hooks.Run) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s⚓ hook %s %s: ", label, hookName(r), oneLine(r.Command, 80))
	switch {
	case r.TimedOut:
		b.WriteString("timed out")
	case r.Canceled:
		b.WriteString("cancelled")
	default:
		fmt.Fprintf(&b, "exit %d", r.ExitCode)
	}
	fmt.Fprintf(&b, " in %d ms", r.Duration.Milliseconds())
	if r.Decision != "" {
		b.WriteString(", " + r.Decision)
	}
	if r.Err != nil {
		b.WriteString(" (" + oneLine(r.Err.Error(), 160) + ")")
	} else if r.ExitCode != 0 && strings.TrimSpace(r.Stderr) != "" {
		b.WriteString(": " + oneLine(r.Stderr, 160))
	}
	fmt.Fprintln(w, b.String())
}
