// Package loop runs one agent: it sends the conversation to the model,
// streams the answer, runs the tools the model asks for, appends the
// results, and repeats until the model stops asking for tools, the turn
// limit is hit, or the context ends (S-1.1). It knows nothing of
// sub-agents: a sub-agent is this same loop with another Config.
package loop

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/hooks"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/tool"
)

// Recorder receives every complete message of the conversation, in order,
// as soon as it exists. A transcript writer is the usual Recorder.
type Recorder interface {
	AppendMessage(m llm.Message, model string, usage *llm.Usage) error
}

// Config is everything one agent run needs.
type Config struct {
	// Model answers; ModelID names the model in requests.
	Model   llm.Model
	ModelID string
	// System is the rendered system prompt, sent verbatim every turn;
	// SystemPrefix a leading part of it that other agents share
	// (llm.Request.SystemPrefix).
	System, SystemPrefix string
	// Tools are offered to the model in pool order.
	Tools *tool.Pool
	// SharedTools is how many leading Tools sub-agents share
	// (llm.Request.SharedTools).
	SharedTools int
	// Env is the agent's tool environment.
	Env *tool.Env
	// Authorizer decides each tool call; nil allows every call.
	Authorizer permission.Authorizer
	// MaxTurns bounds the number of model requests; 0 means no bound.
	MaxTurns int
	// MaxTokens, Thinking and Effort are passed to every request.
	MaxTokens int64
	Thinking  *llm.Thinking
	Effort    llm.Effort
	// Recorder, when set, gets every message as it is complete.
	Recorder Recorder
	// AgentID and AgentType identify the agent to the authorizer.
	AgentID   string
	AgentType string
	// Background marks an agent that can never prompt.
	Background bool
	// Unavailable maps names of tools withheld from this agent to the
	// message a call of one gets (for example Agent at the nesting limit).
	Unavailable map[string]string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Inbox, when set, is read at every tool round (see Inbox).
	Inbox Inbox
	// Dynamic, when set, adds tools that may change between turns (MCP
	// servers' tools); see ToolSource.
	Dynamic ToolSource
	// CacheHints are passed to every request: blocks of the starting
	// messages that end a prefix shared with other agents (a fork's
	// rules block, S-6.2).
	CacheHints []llm.CacheHint
	// Hooks fires this agent's hook events (a *hooks.Agent); nil fires
	// none. The loop fires UserPromptSubmit for the prompt it starts with,
	// PreToolUse, PostToolUse and PostToolUseFailure around each call, and
	// Stop when the model ends its turn; the binding turns Stop into
	// SubagentStop for a sub-agent.
	Hooks hooks.Firer
	// Prompt, when set, is the prompt a person submitted for this run
	// (issue 15): UserPromptSubmit fires for it alone, not for the
	// notifications that share its message, and not at all when it is
	// empty (a run on notifications only). Unset, the text of the last
	// message is the prompt.
	Prompt *string
	// Output, when set, is an answer the run must give through a tool
	// (structured output, S-15.6): the run ends after the tool round in
	// which Output.Done became true; when the model ends its turn before
	// that, it is asked again with Output.Remind's message; once
	// Output.Exhausted, the run ends with Result.OutputExhausted.
	Output Output
	// Compaction, when set, compacts the conversation before it outgrows
	// the model's context window (compact.go); nil never compacts.
	Compaction *Compaction
	// Budget, when set, bounds what the run spends (budget.go); nil
	// never stops it.
	Budget Budget
	// Observer, when set, watches each model request and tool call
	// (telemetry: the chat and execute_tool spans); nil costs nothing.
	Observer Observer
	// Idle, when set, is called when the model ends its turn instead of
	// ending the run (a teammate that waits for mail, issue 25): it blocks
	// until there is more to do and returns the blocks of the next user
	// message, or false to end the run as it would have without Idle;
	// last is the answer that ended the turn.
	Idle func(ctx context.Context, last llm.Message) ([]llm.Block, bool)
}

// Output is the answer a run must give through a tool call (see
// Config.Output); builtin.OutputSlot implements it.
type Output interface {
	// Done reports whether the answer was given.
	Done() bool
	// Exhausted reports whether the attempts are spent without it.
	Exhausted() bool
	// Remind counts a turn ended without the answer as an attempt and
	// returns the message that asks for it.
	Remind() string
}

// EventKind names a loop event.
type EventKind int

// Loop event kinds.
const (
	// TextDelta carries Text as the model writes it.
	TextDelta EventKind = iota + 1
	// ThinkingDelta carries Text of the model's thinking.
	ThinkingDelta
	// Retry carries Retry: a model request failed and is being redone;
	// deltas since the last complete message must be discarded.
	Retry
	// AssistantMessage carries Message, a complete model answer, with
	// Usage, MessageID, Model, StopReason and APIDuration of the request
	// that produced it.
	AssistantMessage
	// ToolStart carries Call, a tool call about to run.
	ToolStart
	// ToolEnd carries Call and ToolResult after the call ended.
	ToolEnd
	// UserMessage carries Message, the tool results sent back.
	UserMessage
	// Done carries Result; it is the last event of a run that did not fail.
	Done
)

// Event is one item of a run's stream.
type Event struct {
	Kind       EventKind
	Text       string
	Retry      *llm.Retry
	Message    *llm.Message
	Usage      llm.Usage
	Call       *llm.Block
	ToolResult *ToolResult
	Result     *Result
	// MessageID and Model are the provider's id of the answer and the
	// model that gave it; StopReason why it stopped; APIDuration how long
	// the request took, retries included.
	MessageID   string
	Model       string
	StopReason  llm.StopReason
	APIDuration time.Duration
	// Compact describes a compaction (CompactStart, CompactEnd,
	// ContextWarning; compact.go).
	Compact *Boundary
}

// ToolResult is how one tool call ended.
type ToolResult struct {
	Output   tool.Output
	Denied   bool
	Duration time.Duration
}

// Result sums up a finished run.
type Result struct {
	// Text is the final answer's text.
	Text string
	// Messages is the whole conversation, including the initial messages.
	Messages []llm.Message
	// Turns counts model requests.
	Turns int
	// ToolUses counts tool calls made.
	ToolUses int
	// Usage totals every request.
	Usage llm.Usage
	// StopReason is the last answer's stop reason.
	StopReason llm.StopReason
	// MaxTurnsHit is true when the run stopped at MaxTurns with the model
	// still wanting tools.
	MaxTurnsHit bool
	// Duration is the wall time of the run.
	Duration time.Duration
	// HookStop is set when a hook ended the run early: continue: false,
	// or a UserPromptSubmit hook that blocked the prompt (then no model
	// request was made and Messages leaves the prompt out).
	HookStop *HookStop
	// OutputExhausted is set when Config.Output's attempts were spent
	// without the answer.
	OutputExhausted bool
	// BudgetExhausted is set when Config.Budget stopped the run: Text is
	// then its partial report.
	BudgetExhausted bool
}

// Run starts the agent on the conversation msgs (which ends with a user
// message) and yields its events. The stream ends after a Done event or with
// an error (the model failed, the context ended, or recording failed); a
// consumer that stops ranging cancels the run. Every message that was
// complete before the end has been given to the Recorder.
func Run(ctx context.Context, cfg Config, msgs []llm.Message) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		r := &runner{cfg: cfg, msgs: append([]llm.Message(nil), msgs...), yield: yield, hints: cfg.CacheHints}
		if r.cfg.Now == nil {
			r.cfg.Now = time.Now
		}
		if r.cfg.Env == nil {
			r.cfg.Env = &tool.Env{Files: tool.NewFileState(), Todos: &tool.TodoList{}}
		}
		r.start = r.cfg.Now()
		res, err := r.run(ctx)
		if err != nil && !r.stopped && wallTimeUp(ctx) {
			res, err = budgetOf(r).stop(""), nil
		}
		if r.stopped || errors.Is(err, errStopped) {
			return
		}
		if err != nil {
			yield(Event{}, err)
			return
		}
		yield(Event{Kind: Done, Result: res}, nil)
	}
}

// errStopped means the consumer stopped ranging; nothing more is yielded.
var errStopped = errors.New("consumer stopped")

type runner struct {
	cfg     Config
	msgs    []llm.Message
	yield   func(Event, error) bool
	stopped bool
	start   time.Time

	turns    int
	toolUses int
	usage    llm.Usage

	// stopHookActive is true once a stop hook has kept the agent going.
	stopHookActive bool
	// tools is the current turn's tool set (see turnTools).
	tools    *toolSet
	mu       sync.Mutex
	hookStop *HookStop

	// Compaction state (compact.go): hints are the cache hints in force
	// (gone once the starting messages are); lastSize the context size
	// the last answer measured; warned whether the warning was given
	// since the last compaction; compactions and compactedAt count them
	// and note the turn of the last.
	hints       []llm.CacheHint
	lastSize    int64
	warned      bool
	compactions int
	compactedAt int
	breaker     compactBreaker
	// budgetWarned is set once the model was told to wrap up (budget.go).
	budgetWarned bool
	// conversation is what the calls of the running batch see as
	// tool.Call.Conversation: the history up to the answer that made them,
	// clipped so that it cannot be appended into.
	conversation []llm.Message
}

// emit yields one event. Once the consumer has stopped, it never yields
// again (a range function must not continue after its body said stop).
func (r *runner) emit(e Event) error {
	if r.stopped || !r.yield(e, nil) {
		r.stopped = true
		return errStopped
	}
	return nil
}

func (r *runner) record(m llm.Message, usage *llm.Usage) error {
	if r.cfg.Recorder == nil {
		return nil
	}
	if err := r.cfg.Recorder.AppendMessage(m, r.cfg.ModelID, usage); err != nil {
		return fmt.Errorf("record message: %w", err)
	}
	return nil
}

func (r *runner) run(ctx context.Context) (*Result, error) {
	if len(r.msgs) == 0 || r.msgs[len(r.msgs)-1].Role != llm.RoleUser {
		return nil, errors.New("run agent: the conversation must end with a user message")
	}
	if r.cfg.Hooks != nil {
		ok, err := hooksOf(r).promptHooks(ctx)
		if err != nil {
			return nil, err
		}
		if !ok {
			return &Result{Messages: r.msgs[:len(r.msgs)-1], HookStop: hooksOf(r).stoppedByHook(), Duration: r.cfg.Now().Sub(r.start)}, nil
		}
	}
	if err := r.record(r.msgs[len(r.msgs)-1], nil); err != nil {
		return nil, err
	}
	if n := len(r.msgs); n >= 2 && r.msgs[n-2].Role == llm.RoleUser {
		// The history ended with a user message (tool results of a run
		// stopped at its turn limit): the new prompt joins it, so roles
		// keep alternating and the earlier blocks keep their bytes.
		merged := llm.Message{Role: llm.RoleUser, Content: append(append([]llm.Block(nil), r.msgs[n-2].Content...), r.msgs[n-1].Content...)}
		r.msgs = append(r.msgs[:n-2:n-2], merged)
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if r.turns > 0 {
			if err := r.betweenTurns(ctx); err != nil { // compact.go
				return nil, err
			}
		}
		if r.cfg.Budget != nil && r.cfg.Budget.Check() == BudgetSpent {
			return budgetOf(r).stop(""), nil // budget.go
		}
		req := &llm.Request{
			Model:  r.cfg.ModelID,
			System: r.cfg.System,
			// A sub-agent's part shared with siblings of any type.
			SystemPrefix: r.cfg.SystemPrefix,
			Tools:        r.turnTools(ctx).specs, // dynamic.go
			SharedTools:  r.cfg.SharedTools,
			Messages:     r.msgs,
			MaxTokens:    r.cfg.MaxTokens,
			Thinking:     r.cfg.Thinking,
			Effort:       r.cfg.Effort,
			// Hints index the starting messages, which are never rewritten.
			CacheHints: r.hints,
		}
		sent := r.cfg.Now()
		resp, err := r.request(ctx, req)
		if err != nil {
			if retry, err := r.tooLong(ctx, err); retry { // compact.go
				continue
			} else if err != nil {
				return nil, err
			}
		}
		if r.cfg.Inbox != nil {
			r.cfg.Inbox.Sent()
		}
		apiDuration := r.cfg.Now().Sub(sent)
		r.turns++
		r.usage = r.usage.Add(resp.Usage)
		r.lastSize = compactSize(resp.Usage, resp.Message)
		msg := resp.Message
		msg.Role = llm.RoleAssistant
		msg.Content = dropEmptyText(msg.Content)
		if len(msg.Content) == 0 {
			// An empty answer cannot be sent back (no empty content); keep
			// the history valid with a placeholder text.
			msg.Content = []llm.Block{llm.TextBlock("(no content)")}
		}
		r.msgs = append(r.msgs, msg)
		usage := resp.Usage
		if err := r.record(msg, &usage); err != nil {
			return nil, err
		}
		model := resp.Model
		if model == "" {
			model = r.cfg.ModelID
		}
		if err := r.emit(Event{Kind: AssistantMessage, Message: &msg, Usage: resp.Usage, MessageID: resp.ID, Model: model,
			StopReason: resp.StopReason, APIDuration: apiDuration}); err != nil {
			return nil, err
		}
		calls := msg.ToolUses()
		if r.cfg.Budget != nil && r.cfg.Budget.Charge(model, resp.Usage) == BudgetSpent && len(calls) > 0 {
			// Spent with tools asked for: they are not made, and the run
			// stops with its partial report (budget.go).
			user := llm.Message{Role: llm.RoleUser, Content: skipAll(calls)}
			r.msgs = append(r.msgs, user)
			if err := r.record(user, nil); err != nil {
				return nil, err
			}
			if err := r.emit(Event{Kind: UserMessage, Message: &user}); err != nil {
				return nil, err
			}
			return budgetOf(r).stop(resp.StopReason), nil
		}
		if len(calls) == 0 {
			if r.cfg.Hooks != nil {
				goOn, err := hooksOf(r).stopHooks(ctx, msg)
				if err != nil {
					return nil, err
				}
				if goOn {
					continue
				}
			}
			if out := r.cfg.Output; out != nil && !out.Done() && hooksOf(r).stoppedByHook() == nil {
				if out.Exhausted() {
					return r.outputExhausted(msg, resp.StopReason), nil
				}
				if r.cfg.MaxTurns > 0 && r.turns >= r.cfg.MaxTurns {
					return r.result(msg, resp.StopReason, true), nil
				}
				text := out.Remind()
				if out.Exhausted() {
					return r.outputExhausted(msg, resp.StopReason), nil
				}
				if err := r.ask(text); err != nil {
					return nil, err
				}
				continue
			}
			if r.cfg.Idle != nil && hooksOf(r).stoppedByHook() == nil {
				if more, ok := r.cfg.Idle(ctx, msg); ok && len(more) > 0 {
					user := llm.Message{Role: llm.RoleUser, Content: more}
					r.msgs = append(r.msgs, user)
					if err := r.record(user, nil); err != nil {
						return nil, err
					}
					if err := r.emit(Event{Kind: UserMessage, Message: &user}); err != nil {
						return nil, err
					}
					continue
				}
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			return r.result(msg, resp.StopReason, false), nil
		}
		// Tools see the conversation up to this answer (the Agent tool
		// forks from it); the clipped slice cannot be appended into.
		r.conversation = slices.Clip(r.msgs)
		results, runErr := r.runTools(ctx, calls)
		if results != nil && runErr == nil && r.cfg.Inbox != nil {
			// What arrived meanwhile goes with the results (S-7.3).
			results = append(results, r.cfg.Inbox.Take()...)
		}
		if results != nil && runErr == nil {
			if b, ok := budgetOf(r).wrapUp(); ok { // budget.go: told once, at 85 %
				results = append(results, b)
			}
		}
		if results != nil {
			user := llm.Message{Role: llm.RoleUser, Content: results}
			r.msgs = append(r.msgs, user)
			if err := r.record(user, nil); err != nil {
				return nil, err
			}
			if runErr == nil {
				if err := r.emit(Event{Kind: UserMessage, Message: &user}); err != nil {
					return nil, err
				}
			}
		}
		if runErr != nil {
			return nil, runErr
		}
		if hooksOf(r).stoppedByHook() != nil {
			return r.result(msg, resp.StopReason, false), nil
		}
		if out := r.cfg.Output; out != nil {
			// A matching answer ends the turn; spent attempts end the run.
			if out.Done() {
				return r.result(msg, resp.StopReason, false), nil
			}
			if out.Exhausted() {
				return r.outputExhausted(msg, resp.StopReason), nil
			}
		}
		if r.cfg.MaxTurns > 0 && r.turns >= r.cfg.MaxTurns {
			return r.result(msg, resp.StopReason, true), nil
		}
	}
}

func (r *runner) result(last llm.Message, stop llm.StopReason, maxTurns bool) *Result {
	text := last.Text()
	if maxTurns {
		text = prompts.MaxTurnsReached(r.cfg.MaxTurns)
	}
	return &Result{
		Text:        text,
		Messages:    r.msgs,
		Turns:       r.turns,
		ToolUses:    r.toolUses,
		Usage:       r.usage,
		StopReason:  stop,
		MaxTurnsHit: maxTurns,
		Duration:    r.cfg.Now().Sub(r.start),
		HookStop:    hooksOf(r).stoppedByHook(),
	}
}

// outputExhausted is the result of a run whose Config.Output attempts
// were spent without the answer.
func (r *runner) outputExhausted(last llm.Message, stop llm.StopReason) *Result {
	res := r.result(last, stop, false)
	res.OutputExhausted = true
	return res
}

// ask sends the model a user message of text (Config.Output's reminder)
// after its answer, recording it.
func (r *runner) ask(text string) error {
	user := llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock(text)}}
	r.msgs = append(r.msgs, user)
	if err := r.record(user, nil); err != nil {
		return err
	}
	return r.emit(Event{Kind: UserMessage, Message: &user})
}

// Observer watches a loop's model requests and tool calls. Each Start
// returns the context the request or call runs in and a function the
// loop calls once when it has ended: with the response or error, or with
// the call's output, whether it was denied, and the Go error that ended
// the turn.
type Observer interface {
	StartRequest(ctx context.Context, req *llm.Request) (context.Context, func(*llm.Response, error))
	StartTool(ctx context.Context, call llm.Block) (context.Context, func(tool.Output, bool, error))
}

// request streams one model answer, forwarding deltas; the Observer, if
// any, watches it.
func (r *runner) request(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if r.cfg.Observer != nil {
		return observedRequest(ctx, r, req)
	}
	return streamRequest(ctx, r, req)
}

// observedRequest is request with the Observer watching: it is told how the
// request ended on every path. (A frame of its own: the deferred closure
// moved request's results to the heap on every turn, watched or not.)
// (Functions, not methods: runner keeps to its bound of methods.)
func observedRequest(ctx context.Context, r *runner, req *llm.Request) (resp *llm.Response, err error) {
	ctx, done := r.cfg.Observer.StartRequest(ctx, req)
	defer func() { done(resp, err) }()
	return streamRequest(ctx, r, req)
}

// streamRequest streams one model answer of r, forwarding deltas.
func streamRequest(ctx context.Context, r *runner, req *llm.Request) (*llm.Response, error) {
	for ev, err := range r.cfg.Model.Stream(ctx, req) {
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return nil, ctxErr
			}
			return nil, fmt.Errorf("model request (turn %d): %w", r.turns+1, err)
		}
		switch ev.Kind {
		case llm.EventTextDelta:
			if err := r.emit(Event{Kind: TextDelta, Text: ev.Text}); err != nil {
				return nil, err
			}
		case llm.EventThinkingDelta:
			if err := r.emit(Event{Kind: ThinkingDelta, Text: ev.Text}); err != nil {
				return nil, err
			}
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
	return nil, errors.New("model stream ended before the answer was complete")
}

// done is one finished call, sent from a worker to the loop.
type done struct {
	index  int
	result ToolResult
	err    error
}

// runTools runs the calls of one assistant message: consecutive read-only
// (or concurrency-safe) calls together, each writing call alone, in call
// order. It returns one
// tool_result block per call, in call order. On a Go error from a tool (or
// the context ending) the remaining calls are answered with an
// interruption note so the history stays valid, and the error is returned.
func (r *runner) runTools(ctx context.Context, calls []llm.Block) ([]llm.Block, error) {
	results := make([]llm.Block, len(calls))
	filled := make([]bool, len(calls))
	var firstErr error
	for i := 0; i < len(calls); {
		j := i + 1
		if r.concurrent(calls[i]) {
			for j < len(calls) && r.concurrent(calls[j]) {
				j++
			}
		}
		if firstErr == nil && hooksOf(r).stoppedByHook() == nil {
			if err := r.runBatch(ctx, calls[i:j], i, results, filled); err != nil {
				firstErr = err
			}
		}
		i = j
	}
	if hs := hooksOf(r).stoppedByHook(); hs != nil && firstErr == nil {
		// A hook ended the turn: calls after it are not made.
		for i, ok := range filled {
			if !ok {
				results[i] = llm.ToolResultBlock(calls[i].ID, prompts.HookStopped(string(hs.Event), hs.Reason), true)
			}
		}
	}
	if firstErr != nil {
		for i, ok := range filled {
			if !ok {
				results[i] = llm.ToolResultBlock(calls[i].ID, prompts.ToolInterrupted(), true)
			}
		}
		return results, firstErr
	}
	return results, nil
}

// concurrent reports whether the call may run alongside its neighbours.
func (r *runner) concurrent(call llm.Block) bool {
	t, ok := r.pool().Get(call.Name)
	return ok && tool.RunsConcurrently(t)
}

func (r *runner) runBatch(ctx context.Context, calls []llm.Block, offset int, results []llm.Block, filled []bool) error {
	for i := range calls {
		if err := r.emit(Event{Kind: ToolStart, Call: &calls[i]}); err != nil {
			return err
		}
	}
	r.toolUses += len(calls)
	if len(calls) == 1 {
		res, err := r.runOne(ctx, &calls[0], tool.Turn{})
		return r.finish(&calls[0], offset, res, err, results, filled)
	}
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan done, len(calls))
	var wg sync.WaitGroup
	seq := tool.NewSequence(len(calls)) // steps taken in call order (tool.Turn)
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := done{index: i}
			d.result, d.err = r.runOne(bctx, &calls[i], seq.Turn(i))
			seq.Pass(i)
			ch <- d
		}()
	}
	var firstErr error
	for range calls {
		d := <-ch
		if err := r.finish(&calls[d.index], offset+d.index, d.result, d.err, results, filled); err != nil && firstErr == nil {
			firstErr = err
			cancel()
		}
	}
	wg.Wait()
	return firstErr
}

// finish records the result of call (an element of the batch's calls,
// which the ToolEnd event points to rather than a copy of it).
func (r *runner) finish(call *llm.Block, index int, res ToolResult, err error, results []llm.Block, filled []bool) error {
	if err != nil {
		return err
	}
	results[index] = resultBlock(call.ID, res.Output) // dynamic.go
	filled[index] = true
	return r.emit(Event{Kind: ToolEnd, Call: call, ToolResult: &res})
}

// resultText keeps the result non-empty: an empty text block is invalid.
func resultText(o tool.Output) string {
	if o.Text == "" {
		if o.IsError {
			return prompts.ToolFailedSilently
		}
		return prompts.ToolNoOutput
	}
	return o.Text
}

// dropEmptyText removes empty text blocks, which the API rejects when the
// message is sent back.
func dropEmptyText(blocks []llm.Block) []llm.Block {
	if !slices.ContainsFunc(blocks, isEmptyText) {
		return blocks // the usual answer: kept as it came, not copied
	}
	out := blocks[:0:0]
	for _, b := range blocks {
		if b.Type == llm.BlockText && b.Text == "" {
			continue
		}
		out = append(out, b)
	}
	return out
}

// isEmptyText reports whether b is a text block without text.
func isEmptyText(b llm.Block) bool { return b.Type == llm.BlockText && b.Text == "" }
