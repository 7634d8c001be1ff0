package loop

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/hooks"
	"github.com/cadre-dev/cadre/internal/compact"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/tool"
)

// Compaction configures context compaction for one agent (S-1.5). A nil
// Config.Compaction never compacts: a conversation that outgrows the
// window then fails its request, as before.
type Compaction struct {
	// Thresholds are the agent's (compact.Compute); a zero Compact
	// threshold never compacts automatically.
	Thresholds compact.Thresholds
	// Auto turns on compaction at the threshold and on a prompt-too-long
	// answer; off, only manual requests compact.
	Auto bool
	// Keep gathers what must survive a compaction of msgs besides the
	// summary (the engine reads the agent's files, todos, tasks, skills);
	// nil keeps the summary alone.
	Keep func(ctx context.Context, msgs []llm.Message) compact.Keep
	// Transcript is the path of the agent's full record, named in the
	// summary message; "" for none.
	Transcript string
	// Manual, when set, is polled between turns: a compaction asked for
	// while the agent runs (Runtime.Compact), with its instructions.
	Manual func() (instructions string, ok bool)
	// ClearResults turns on clearing old, large tool results once the
	// context passes the warning threshold, when that saves at least
	// ClearMinSavings tokens (0: compact.MinClearSavings); it runs
	// before a full compaction is considered. KeepResults names the
	// tools whose results are never cleared (nil: none).
	ClearResults    bool
	ClearMinSavings int64
	KeepResults     func(tool string) bool
}

// Boundary describes one compaction: the CompactEnd event carries it and
// a BoundaryRecorder records it.
type Boundary struct {
	Trigger compact.Trigger
	// Instructions are the custom instructions the summary followed (the
	// request's and PreCompact hooks' output).
	Instructions string
	// PreTokens is the context size before (measured from the last
	// answer's usage); PostTokens an estimate of the new conversation's.
	PreTokens, PostTokens int64
	// Duration is how long the compaction took, hooks included.
	Duration time.Duration
	// Summary is the summary the model wrote.
	Summary string
	// Usage, Model and MessageID are the summary request's: it is a model
	// request of its own, counted in the agent's usage.
	Usage     llm.Usage
	Model     string
	MessageID string
	// Messages is the conversation that replaced the compacted one.
	Messages []llm.Message
}

// BoundaryRecorder is a Recorder that also records compactions; the
// transcript's writer is one. The messages that follow a boundary are
// the compacted conversation (recorded with AppendMessage).
type BoundaryRecorder interface {
	AppendBoundary(b Boundary) error
}

// Compaction event kinds (after the others).
const (
	// CompactStart carries Compact with Trigger set: a compaction began
	// (stream-json's system/status compacting).
	CompactStart EventKind = iota + 100
	// CompactEnd carries Compact, the whole Boundary.
	CompactEnd
	// ContextWarning carries Compact with PreTokens set: the context
	// passed the warning threshold.
	ContextWarning
)

// errHookBlocked means a PreCompact hook stopped the compaction.
type errHookBlocked struct{ feedback string }

func (e errHookBlocked) Error() string { return prompts.CompactBlocked(e.feedback) }

// IsCompactBlocked reports whether err is a PreCompact hook's stop.
func IsCompactBlocked(err error) bool {
	var b errHookBlocked
	return errors.As(err, &b)
}

// maxTrims bounds how often a summary request that is itself too long
// is retried with older messages dropped.
const maxTrims = 3

// betweenTurns runs before each model request but the first: a manual
// compaction asked for meanwhile, else an automatic one when the last
// answer's usage reached the threshold, else the warning.
func (r *runner) betweenTurns(ctx context.Context) error {
	c := r.cfg.Compaction
	if c == nil {
		return nil
	}
	if c.Manual != nil {
		if instr, ok := c.Manual(); ok {
			err := r.compact(ctx, compact.Manual, instr)
			if err != nil && !IsCompactBlocked(err) {
				return err
			}
			return nil
		}
	}
	if !c.Auto || c.Thresholds.Compact <= 0 || r.lastSize == 0 {
		return nil
	}
	r.clearOldResults()
	if r.lastSize >= c.Thresholds.Compact {
		if err := r.compact(ctx, compact.Auto, ""); err != nil {
			if IsCompactBlocked(err) {
				return nil // the hook said no; the request goes as it is
			}
			return err
		}
		if turns, times := r.breaker.Limits(); r.breaker.Compacted(r.turns) {
			return errors.New(prompts.CompactThrashing(times, turns))
		}
		return nil
	}
	if r.lastSize >= c.Thresholds.Warn && !r.warned {
		r.warned = true
		return r.emit(Event{Kind: ContextWarning, Compact: &Boundary{PreTokens: r.lastSize}})
	}
	return nil
}

// clearOldResults clears old, large tool results (compact.ClearOldResults)
// when the context passed the warning threshold and that saves enough;
// the next request then sends the markers instead of the outputs.
func (r *runner) clearOldResults() {
	c := r.cfg.Compaction
	if !c.ClearResults || r.lastSize < c.Thresholds.Warn {
		return
	}
	floor := c.ClearMinSavings
	if floor <= 0 {
		floor = compact.MinClearSavings
	}
	msgs, plan := compact.ClearOldResults(r.msgs, compact.KeepRecentResults, compact.MinClearResultTokens, c.Transcript, c.KeepResults)
	if plan.Saved < floor {
		return
	}
	r.msgs = msgs
	r.lastSize = max(r.lastSize-plan.Saved, 0)
}

// tooLong handles a request the provider refused as too long: compact
// once and retry. It reports whether to retry; a second refusal with no
// answer since the last compaction ends the agent.
func (r *runner) tooLong(ctx context.Context, err error) (bool, error) {
	c := r.cfg.Compaction
	if c == nil || !c.Auto || !compact.PromptTooLong(err) {
		return false, err
	}
	if r.compactedAt == r.turns && r.compactions > 0 {
		return false, fmt.Errorf("the conversation is still too long for the model right after compaction: %w", err)
	}
	if cerr := r.compact(ctx, compact.Auto, ""); cerr != nil {
		if IsCompactBlocked(cerr) {
			return false, fmt.Errorf("%v; the prompt is too long: %w", cerr, err)
		}
		return false, cerr
	}
	if turns, times := r.breaker.Limits(); r.breaker.Compacted(r.turns) {
		return false, errors.New(prompts.CompactThrashing(times, turns))
	}
	return true, nil
}

// compact replaces the conversation with a summary the agent's model
// writes, and what must survive. The conversation ends with a user
// message when it is called.
func (r *runner) compact(ctx context.Context, trigger compact.Trigger, instructions string) error {
	start := r.cfg.Now()
	c := r.cfg.Compaction
	if r.cfg.Hooks != nil {
		o := r.cfg.Hooks.Fire(ctx, &hooks.Input{HookEventName: hooks.PreCompact, Trigger: string(trigger), CustomInstructions: instructions, Cwd: r.cfg.Env.Cwd})
		if err := ctx.Err(); err != nil {
			return err
		}
		if o.Blocked {
			return errHookBlocked{strings.Join(o.Feedback, "\n")}
		}
		// What the hooks printed joins the instructions.
		if extra := strings.TrimSpace(strings.Join(o.Context, "\n")); extra != "" {
			instructions = strings.TrimSpace(instructions + "\n" + extra)
		}
	}
	if err := r.emit(Event{Kind: CompactStart, Compact: &Boundary{Trigger: trigger, Instructions: instructions}}); err != nil {
		return err
	}
	pre := r.lastSize
	if pre == 0 {
		pre = compact.EstimateMessages(r.msgs)
	}
	base := llm.Request{
		Model: r.cfg.ModelID, System: r.cfg.System, SystemPrefix: r.cfg.SystemPrefix,
		Tools: r.turnTools(ctx).specs, SharedTools: r.cfg.SharedTools,
		MaxTokens: r.cfg.MaxTokens, Thinking: r.cfg.Thinking, Effort: r.cfg.Effort,
	}
	msgs := r.msgs
	var resp *llm.Response
	for trims := 0; ; trims++ {
		var err error
		resp, err = r.summarize(ctx, compact.SummaryRequest(base, msgs, instructions))
		if err == nil {
			break
		}
		if compact.PromptTooLong(err) && trims < maxTrims {
			if shorter := compact.Trim(msgs); len(shorter) < len(msgs) {
				msgs = shorter
				continue
			}
		}
		return fmt.Errorf("compact the conversation: %w", err)
	}
	r.usage = r.usage.Add(resp.Usage)
	if r.cfg.Budget != nil {
		// The summary request is the agent's spend like any other
		// (issue 27 point 6); the next Check stops the run if it was
		// the last of the budget.
		model := resp.Model
		if model == "" {
			model = r.cfg.ModelID
		}
		r.cfg.Budget.Charge(model, resp.Usage)
	}
	summary := compact.Summary(resp.Message.Text())
	if summary == "" {
		return errors.New("compact the conversation: the model wrote no summary")
	}
	var keep compact.Keep
	if c.Keep != nil {
		keep = c.Keep(ctx, r.msgs)
	}
	if r.cfg.Hooks != nil {
		// SessionStart with source compact: what its hooks add survives.
		o := r.cfg.Hooks.Fire(ctx, &hooks.Input{HookEventName: hooks.SessionStart, Source: "compact", Cwd: r.cfg.Env.Cwd})
		keep.Extra = append(keep.Extra, o.Context...)
	}
	rebuilt := compact.Rebuild(summary, c.Transcript, keep)
	b := Boundary{
		Trigger: trigger, Instructions: instructions, PreTokens: pre, PostTokens: compact.EstimateMessages(rebuilt),
		Summary: summary, Usage: resp.Usage, Model: resp.Model, MessageID: resp.ID, Messages: rebuilt,
	}
	if b.Model == "" {
		b.Model = r.cfg.ModelID
	}
	r.msgs = append([]llm.Message(nil), rebuilt...)
	// Hints index the starting messages, which are gone now.
	r.hints = nil
	r.lastSize, r.warned = b.PostTokens, false
	r.compactions++
	r.compactedAt = r.turns
	if r.cfg.Hooks != nil {
		r.cfg.Hooks.Fire(ctx, &hooks.Input{HookEventName: hooks.PostCompact, Trigger: string(trigger), CompactSummary: summary, Cwd: r.cfg.Env.Cwd})
	}
	b.Duration = r.cfg.Now().Sub(start)
	if br, ok := r.cfg.Recorder.(BoundaryRecorder); ok {
		if err := br.AppendBoundary(b); err != nil {
			return fmt.Errorf("record compaction: %w", err)
		}
	}
	for _, m := range rebuilt {
		if err := r.record(m, nil); err != nil {
			return err
		}
	}
	return r.emit(Event{Kind: CompactEnd, Compact: &b, Usage: resp.Usage, MessageID: b.MessageID, Model: b.Model})
}

// summarize streams the summary request's answer without forwarding its
// text: the summary is not part of the conversation.
func (r *runner) summarize(ctx context.Context, req llm.Request) (*llm.Response, error) {
	for ev, err := range r.cfg.Model.Stream(ctx, &req) {
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return nil, ctxErr
			}
			return nil, err
		}
		switch ev.Kind {
		case llm.EventRetry:
			if err := r.emit(Event{Kind: Retry, Retry: ev.Retry}); err != nil {
				return nil, err
			}
		case llm.EventDone:
			if ev.Response == nil {
				return nil, errors.New("model stream ended without a response")
			}
			return ev.Response, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, errors.New("model stream ended before the summary was complete")
}

// Compact compacts the conversation msgs of an agent that is not
// running (a manual /compact between runs) and yields its events:
// CompactStart, then CompactEnd whose Boundary holds the new
// conversation. cfg is the agent's configuration (its Compaction may
// turn automatic compaction off; it must not be nil). A PreCompact
// hook's stop ends the stream with an error IsCompactBlocked knows.
func Compact(ctx context.Context, cfg Config, msgs []llm.Message, instructions string) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if cfg.Compaction == nil {
			yield(Event{}, errors.New("compact: compaction is off for this agent"))
			return
		}
		if len(msgs) == 0 {
			yield(Event{}, errors.New("compact: there is no conversation to compact"))
			return
		}
		r := &runner{cfg: cfg, msgs: append([]llm.Message(nil), msgs...), yield: yield}
		if r.cfg.Now == nil {
			r.cfg.Now = time.Now
		}
		if r.cfg.Env == nil {
			r.cfg.Env = &tool.Env{Files: tool.NewFileState()}
		}
		err := r.compact(ctx, compact.Manual, instructions)
		if r.stopped || errors.Is(err, errStopped) {
			return
		}
		if err != nil {
			yield(Event{}, err)
		}
	}
}

// compactBreaker is the thrash guard (compact.Breaker).
type compactBreaker = compact.Breaker

// compactSize is the context size the next request will send, measured
// by the answer's usage: what it read and what it wrote. An answer whose
// oversized tool input the adapter dropped (InputOverLimit) does not send
// it back, so its kept blocks are estimated instead of its output tokens.
func compactSize(u llm.Usage, answer llm.Message) int64 {
	for _, b := range answer.Content {
		if b.InputOverLimit > 0 {
			u.OutputTokens = compact.EstimateMessages([]llm.Message{answer})
			break
		}
	}
	return compact.Size(u)
}
