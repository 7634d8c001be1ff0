package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/run"
)

// outputFormats returns the valid --output-format values.
func outputFormats() []string { return []string{"text", "json", "stream-json"} }

// printer writes a run's events in one output format.
type printer interface {
	event(ev run.Event) error
	// fail reports a run that ended with an error instead of a result:
	// the result object still carries every number seen so far.
	fail(f failure) error
}

// failure is how a run that produced no result ended.
type failure struct {
	msg     string
	subtype run.Subtype
	// apiStatus is the HTTP status of the model API error that ended
	// the run, 0 for none.
	apiStatus int
	// result is the runtime's result of the failed run (its turns,
	// denials, sub-agent counts, transcript), nil when it gave none.
	result *run.Result
}

// printerConfig is what a printer needs besides its format.
type printerConfig struct {
	out     lineWriter
	errOut  io.Writer
	verbose bool
	partial bool
	info    runInfo
	tally   *tally
	// hookEvents is --include-hook-events.
	hookEvents bool
}

func newPrinter(format string, c printerConfig) (printer, error) {
	switch format {
	case "text", "":
		return &textPrinter{out: c.out, errOut: c.errOut, verbose: c.verbose, tally: c.tally}, nil
	case "json":
		return &jsonPrinter{out: c.out, errOut: c.errOut, tally: c.tally}, nil
	case "stream-json":
		sp := newStreamPrinter(c.out, c.tally, c.info, c.partial)
		sp.hookEvents = c.hookEvents
		return sp, nil
	}
	return nil, fmt.Errorf("invalid --output-format %q: valid values are %s", format, strings.Join(outputFormats(), ", "))
}

// checkFormat validates --output-format before anything runs.
func checkFormat(format string) error {
	_, err := newPrinter(format, printerConfig{tally: newTally(nil, nil)})
	return err
}

type textPrinter struct {
	out     lineWriter
	errOut  io.Writer
	verbose bool
	tally   *tally
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

func (p *textPrinter) event(ev run.Event) error {
	p.tally.observe(ev)
	if ev.Type == run.EventResult {
		return p.out.WriteLine([]byte(ev.Result.Text + "\n"))
	}
	pre := p.label(ev.AgentID)
	if ev.Type == run.EventRetry {
		// Always shown: a run that waits must say why.
		printRetry(p.errOut, pre, ev.Retry)
		return nil
	}
	if !p.verbose {
		return nil
	}
	switch ev.Type {
	case run.EventToolStart:
		fmt.Fprintf(p.errOut, "%s● %s %s\n", pre, ev.Call.Name, oneLine(string(ev.Call.Input), 120))
	case run.EventToolEnd:
		if ev.ToolResult.IsError {
			fmt.Fprintf(p.errOut, "%s  ⎿ error: %s\n", pre, oneLine(ev.ToolResult.Text, 200))
		}
	case run.EventTaskStarted:
		if p.labels == nil {
			p.labels = map[string]string{}
		}
		p.labels[ev.Task.AgentID] = strings.Repeat("  ", ev.Task.Depth) + "[" + ev.Task.AgentType + " " + ev.Task.AgentID + "] "
		fmt.Fprintf(p.errOut, "%s▶ started: %s (model %s, %s)\n", p.label(ev.Task.AgentID), ev.Task.Description, ev.Task.Receipt.Model, plural(len(ev.Task.Receipt.Tools), "tool", "tools"))
	case run.EventHookFinished:
		printHook(p.errOut, pre, ev.Hook)
	case run.EventTaskCompleted:
		fmt.Fprintf(p.errOut, "%s■ %s (%s, %d ms)\n", pre, ev.Subagent.Status, plural(ev.Subagent.ToolUses, "tool use", "tool uses"), ev.Subagent.Duration.Milliseconds())
		delete(p.labels, ev.Subagent.AgentID)
	}
	return nil
}

// printRetry writes the stderr line of a retried model request.
func printRetry(w io.Writer, label string, r *llm.Retry) {
	if w == nil {
		return
	}
	if r.Cause == llm.RetryFallback {
		fmt.Fprintf(w, "cadre: %s%s\n", label, oneLine(r.Err, 300))
		return
	}
	fmt.Fprintf(w, "cadre: %smodel request failed (%s), retry %d of %d in %s: %s\n",
		label, retryWhat(r.Status, r.Cause), r.Attempt, r.MaxRetries, roundWait(r.Wait), oneLine(r.Err, 300))
}

// retryWhat names a failed request for the retry line.
func retryWhat(status int, cause llm.RetryCause) string {
	switch {
	case status != 0:
		return fmt.Sprintf("status %d", status)
	case cause == llm.RetryStalled:
		return "the stream stalled"
	case cause == llm.RetryNoHeaders:
		return "no response"
	case cause == llm.RetryCut:
		return "the stream was cut"
	case cause == llm.RetryRefused:
		return "connection refused"
	}
	return "network error"
}

// roundWait renders a retry wait to a tenth of a second.
func roundWait(d time.Duration) string {
	return d.Round(100 * time.Millisecond).String()
}

// plural renders n with the singular or plural noun.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func (p *textPrinter) fail(f failure) error {
	_, err := fmt.Fprintln(p.errOut, "cadre: "+trimPrefix(f.msg))
	return err
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
