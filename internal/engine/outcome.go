package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/cadre-dev/cadre/internal/engine/hub"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/pricing"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/tool/builtin"
	"github.com/cadre-dev/cadre/transcript"
)

// How a run ends: whatever ends it (the model's last answer, the turn
// limit, an API error, a cancelled context), the run's record is closed
// the same way. The transcript gets a final entry saying how the run ended
// and is flushed and synced; the consumer gets a Result with every number
// counted so far, and after it the error of a failed run.

// sendFinal delivers an event whatever the state of the run's context: a
// cancelled run still reports how it and its sub-agents ended. It cannot
// block for good, because Run reads the stream until the producer closes
// it (draining it after the consumer breaks out).
//
// It goes through the session's hub like every event (background.go): an
// agent that outlived its run reports to the stream open now, or to none.
func (s *runState) sendFinal(ev run.Event) {
	s.note(ev)
	_ = s.rt.bg.emit(context.Background(), ev)
}

// note counts the main agent's turns and tool calls from its events, so a
// run that fails still reports them.
func (s *runState) note(ev run.Event) {
	if ev.Type == run.EventAssistant || ev.Type == run.EventCompactBoundary { // a summary request costs too (compact.go)
		s.mu.Lock()
		if s.byModel == nil {
			s.byModel = map[string]llm.Usage{}
		}
		s.byModel[ev.Model] = s.byModel[ev.Model].Add(ev.Usage)
		s.mu.Unlock()
	}
	if ev.AgentID != "" {
		return
	}
	switch ev.Type {
	case run.EventAssistant:
		s.mu.Lock()
		s.mainTurns++
		s.mu.Unlock()
	case run.EventToolStart:
		s.mu.Lock()
		s.mainTools++
		s.mu.Unlock()
	}
}

// finish ends the run: it records the outcome in the transcript, closes
// the journal (flushing and syncing every file), and sends the Result,
// then the error of a failed run. res is nil when runErr is set.
func (s *runState) finish(ctx context.Context, rec *transcript.JournalWriter, res *loop.Result, runErr error) {
	r := s.rt
	if runErr != nil && ctx.Err() != nil {
		// Cancelled: report the cancellation, not what it broke.
		runErr = ctx.Err()
	}
	s.takeDenials()
	out := s.result(res, runErr)
	if rec != nil {
		end := transcript.RunEnd{Subtype: string(out.Subtype), IsError: out.IsError, Error: out.Error, NumTurns: out.NumTurns,
			ToolUses: out.ToolUses, DurationMS: out.Duration.Milliseconds(), Usage: out.Usage,
			Subagents: transcript.SubagentCounts{Spawned: out.Subagents.Spawned, Completed: out.Subagents.Completed,
				Failed: out.Subagents.Failed, Killed: out.Subagents.Killed}}
		if errors.Is(runErr, context.Canceled) || errors.Is(runErr, context.DeadlineExceeded) {
			end.Cancelled = true
		}
		if err := rec.AppendEnd(end); err != nil && runErr == nil {
			runErr = fmt.Errorf("cadre: the run finished but its transcript is incomplete: %w", err)
		}
	}
	if s.journal != nil {
		// The main transcript's errors fail the run; a sub-agent's files
		// fail that sub-agent (spawn.go), which its notification and the
		// counts report.
		syncErr := s.journal.Sync()
		err := syncErr
		if rec != nil {
			err = rec.Err()
		}
		if err != nil {
			r.bg.warns.mark("transcripts: " + err.Error()) // the run's own error says it
		}
		if syncErr != nil {
			// Another agent's file (a sub-agent's final .meta.json, a
			// background agent's lines): the run goes on, the Result
			// and stderr say so.
			r.bg.recordFailed("transcripts", syncErr)
		}
		if err != nil && runErr == nil {
			runErr = fmt.Errorf("cadre: the run finished but its transcript is incomplete: %w", err)
		}
	}
	if runErr != nil {
		out = s.result(nil, runErr)
	} else {
		r.mu.Lock()
		r.messages = res.Messages
		r.mu.Unlock()
	}
	out.Warnings = s.sendWarnings() // warnings.go
	s.sendFinal(run.Event{Type: run.EventResult, Result: out})
	if runErr != nil {
		s.events <- hub.Item{Err: runErr}
	}
}

// takeDenials claims for this run's Result the session's denials that no
// earlier Result reported.
func (s *runState) takeDenials() {
	r := s.rt
	r.mu.Lock()
	defer r.mu.Unlock()
	s.denied = r.denials.Since(r.denialsReported)
	r.denialsReported += len(s.denied)
}

// result builds the run's Result: from the loop's result when the run
// finished, from the counters when it failed with err.
func (s *runState) result(res *loop.Result, err error) *run.Result {
	r := s.rt
	todos := s.todoLists() // todos.go
	s.mu.Lock()
	defer s.mu.Unlock()
	out := &run.Result{
		Subtype: run.ErrorDuringExecution, IsError: true, NumTurns: s.mainTurns, ToolUses: s.mainTools,
		Duration: r.cfg.Now().Sub(s.start), Usage: s.usage, SessionID: r.session, TranscriptPath: r.tpath,
		PermissionDenials: s.denied, Subagents: s.stats, Todos: todos,
	}
	out.Subagents.Refused = maps.Clone(s.stats.Refused)
	if out.Subagents.Refused == nil {
		out.Subagents.Refused = map[run.RefusalReason]int{}
	}
	out.ModelUsage = maps.Clone(s.byModel)
	prices := r.cfg.Prices
	if prices == nil {
		prices = pricing.Default()
	}
	for _, id := range slices.Sorted(maps.Keys(s.byModel)) {
		cost, known := prices.Cost(id, s.byModel[id])
		if !known {
			out.UnpricedModels = append(out.UnpricedModels, id)
		}
		out.CostUSD += cost
	}
	switch {
	case err != nil:
		out.Error = err.Error()
	case res.MaxTurnsHit:
		out.Text, out.Subtype, out.NumTurns, out.ToolUses = res.Text, run.ErrorMaxTurns, res.Turns, res.ToolUses
	case res.BudgetExhausted:
		// The session's budget is spent (budget.go): Claude Code's
		// error_max_budget_usd.
		out.Text, out.Subtype, out.NumTurns, out.ToolUses = res.Text, run.ErrorMaxBudget, res.Turns, res.ToolUses
	case res.OutputExhausted:
		// Structured output (sdkoptions.go): no call matched the schema.
		out.Text, out.Subtype, out.NumTurns, out.ToolUses = fmt.Sprintf("No structured output matched the output schema in %d attempts.", cmp.Or(r.cfg.OutputRetries, builtin.DefaultOutputAttempts)), run.ErrorMaxStructuredOutputRetries, res.Turns, res.ToolUses
	default:
		out.Text, out.Subtype, out.IsError, out.NumTurns, out.ToolUses = res.Text, run.Success, false, res.Turns, res.ToolUses
		if s.output != nil {
			out.StructuredOutput = s.output.Value()
		}
	}
	return out
}
