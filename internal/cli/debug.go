package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/cadre-dev/cadre/run"
)

// debugPrinter writes a line per event to stderr (--debug), then hands the
// event on. The filter picks kinds: "all", or a comma-separated list of
// api (model answers and retries), tools and tasks.
type debugPrinter struct {
	next   printer
	out    io.Writer
	filter string
}

func (d *debugPrinter) wants(kind string) bool {
	if d.filter == "all" || d.filter == "" {
		return true
	}
	for _, f := range strings.Split(d.filter, ",") {
		if strings.TrimSpace(f) == kind {
			return true
		}
	}
	return false
}

func (d *debugPrinter) event(ev run.Event) error {
	who := "main"
	if ev.AgentID != "" {
		who = ev.AgentID
	}
	switch ev.Type {
	case run.EventAssistant:
		if d.wants("api") {
			fmt.Fprintf(d.out, "[debug] %s: %s answered in %dms (stop %s; tokens in %d, out %d, cache read %d, cache write %d)\n",
				who, ev.Model, ev.APIDuration.Milliseconds(), ev.StopReason, ev.Usage.InputTokens, ev.Usage.OutputTokens,
				ev.Usage.CacheReadTokens, ev.Usage.CacheWriteTokens)
		}
	case run.EventRetry:
		if d.wants("api") {
			fmt.Fprintf(d.out, "[debug] %s: retry %d (%s, status %d) in %s: %s\n", who, ev.Retry.Attempt, ev.Retry.Cause, ev.Retry.Status, ev.Retry.Wait, ev.Retry.Err)
		}
	case run.EventToolStart:
		if d.wants("tools") {
			fmt.Fprintf(d.out, "[debug] %s: tool %s %s %s\n", who, ev.Call.ID, ev.Call.Name, oneLine(string(ev.Call.Input), 200))
		}
	case run.EventToolEnd:
		if d.wants("tools") {
			fmt.Fprintf(d.out, "[debug] %s: tool %s ended in %dms (error %v, denied %v)\n", who, ev.Call.ID, ev.ToolResult.Duration.Milliseconds(), ev.ToolResult.IsError, ev.ToolResult.Denied)
		}
	case run.EventTaskStarted:
		if d.wants("tasks") {
			fmt.Fprintf(d.out, "[debug] %s: started %s %s (depth %d, model %s)\n", who, ev.Task.AgentType, ev.Task.AgentID, ev.Task.Depth, ev.Task.Receipt.Model)
		}
	case run.EventHookFinished:
		if d.wants("hooks") {
			printHook(d.out, "[debug] "+who+": ", ev.Hook)
		}
	case run.EventTaskCompleted:
		if d.wants("tasks") {
			fmt.Fprintf(d.out, "[debug] %s: %s %s\n", who, ev.Subagent.AgentID, ev.Subagent.Status)
		}
	}
	return d.next.event(ev)
}

func (d *debugPrinter) fail(f failure) error { return d.next.fail(f) }

func (d *debugPrinter) inner() printer { return d.next }

// debugFilters are the kinds --debug takes.
var debugFilters = []string{"all", "api", "tools", "tasks", "hooks"}

// joinDebugFilter rewrites "--debug api,tools" (or -d) as
// "--debug=api,tools": the flag's value is optional, so the flag parser
// would take the filter for the prompt. Only a value made of known kinds
// is joined; anything else stays an argument (the prompt).
func joinDebugFilter(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if (a == "--debug" || a == "-d") && i+1 < len(args) && isDebugFilter(args[i+1]) {
			out = append(out, "--debug="+args[i+1])
			i++
			continue
		}
		out = append(out, a)
	}
	return out
}

// isDebugFilter reports whether v is a comma-separated list of kinds.
func isDebugFilter(v string) bool {
	for _, f := range strings.Split(v, ",") {
		if !slices.Contains(debugFilters, strings.TrimSpace(f)) {
			return false
		}
	}
	return v != ""
}
