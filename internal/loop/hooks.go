package loop

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/cadre-dev/cadre/hooks"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/prompts"
)

// HookStop says a hook ended the run early.
type HookStop struct {
	// Event is the hook event whose hook ended the run.
	Event hooks.Event
	// Reason is the hook's stopReason, or the feedback of a hook that
	// blocked the prompt.
	Reason string
}

// hookRunner is the runner's side of its hooks: the prompt, tool and
// stop hooks it fires and the stop a hook asked for. It is a view of the
// runner, so that runner does not hold every method of the loop.
type hookRunner struct{ r *runner }

func hooksOf(r *runner) hookRunner { return hookRunner{r} }

// setHookStop records the first hook that asked the run to stop; calls of
// one batch run concurrently.
func (hr hookRunner) setHookStop(ev hooks.Event, reason string) {
	r := hr.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hookStop == nil {
		r.hookStop = &HookStop{Event: ev, Reason: reason}
	}
}

func (hr hookRunner) stoppedByHook() *HookStop {
	r := hr.r
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hookStop
}

// promptHooks fires UserPromptSubmit for the prompt that starts the run.
// Context the hooks add goes in a text block before the prompt, in the
// same message (so it is recorded and sent with it). It returns false when
// a hook blocked the prompt: the run ends before any model request.
func (hr hookRunner) promptHooks(ctx context.Context) (bool, error) {
	r := hr.r
	if hr.hooksQuiet() && ctx.Err() == nil {
		return true, nil // no hook: nothing can block or add to the prompt
	}
	last := &r.msgs[len(r.msgs)-1]
	prompt := messageText(*last)
	if r.cfg.Prompt != nil {
		prompt = *r.cfg.Prompt
	}
	if prompt == "" {
		// Only tool results or attachments: no prompt was submitted.
		return true, nil
	}
	in := &hooks.Input{HookEventName: hooks.UserPromptSubmit, Prompt: prompt, Cwd: r.cfg.Env.Cwd}
	o := r.cfg.Hooks.Fire(ctx, in)
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if o.Blocked || o.Stop {
		reason := o.StopReason
		if o.Blocked {
			reason = strings.Join(o.Feedback, "\n")
		}
		hr.setHookStop(in.HookEventName, reason)
		return false, nil
	}
	if text := prompts.HookContext(string(in.HookEventName), o.Context); text != "" {
		content := make([]llm.Block, 0, len(last.Content)+1)
		content = append(content, llm.TextBlock(text))
		last.Content = append(content, last.Content...)
	}
	return true, nil
}

// messageText joins the text blocks of m.
func messageText(m llm.Message) string {
	var parts []string
	for _, b := range m.Content {
		if b.Type == llm.BlockText && b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// hooksQuiet reports whether no hook can fire now: no Firer, or one that
// says it has no hook (hooks.Agent.Quiet), so the events around every tool
// call need not build their inputs.
func (hr hookRunner) hooksQuiet() bool {
	r := hr.r
	if r.cfg.Hooks == nil {
		return true
	}
	q, ok := r.cfg.Hooks.(interface{ Quiet() bool })
	return ok && q.Quiet()
}

// authorizeHooked decides a call a PreToolUse hook has a verdict on. The
// authorizer weighs it against the rules when it can (permission.Session
// does: a deny rule always wins); otherwise a hook's deny refuses, and
// its allow or ask leaves the decision to the authorizer as usual. With no
// authorizer at all, allow runs the call and ask is refused, since no one
// can be asked.
func (hr hookRunner) authorizeHooked(ctx context.Context, req permission.Request, v permission.HookVerdict) (permission.Outcome, error) {
	r := hr.r
	if ha, ok := r.cfg.Authorizer.(permission.HookAuthorizer); ok {
		return ha.AuthorizeHooked(ctx, req, v)
	}
	switch {
	case v.Behavior == permission.Deny:
		return permission.Outcome{Message: v.Message, Decision: permission.Decision{Behavior: permission.Deny, Source: permission.SourceHook, Reason: v.Reason}}, nil
	case r.cfg.Authorizer != nil:
		return r.cfg.Authorizer.Authorize(ctx, req)
	case v.Behavior == permission.Allow:
		return permission.Outcome{Allowed: true, Decision: permission.Decision{Behavior: permission.Allow, Source: permission.SourceHook, Reason: v.Reason}}, nil
	}
	return permission.Outcome{Message: prompts.HookAskUnanswered(req.Tool, v.Reason), Decision: permission.Decision{Behavior: permission.Deny, Source: permission.SourceHook, Reason: v.Reason}}, nil
}

// postToolHooks fires PostToolUse, or PostToolUseFailure for an error
// result, and adds what the hooks said for the model to the result.
func (hr hookRunner) postToolHooks(ctx context.Context, call llm.Block, input json.RawMessage, res *ToolResult) {
	r := hr.r
	if hr.hooksQuiet() {
		return // no hook: nothing to tell, no input (and result copy) to build
	}
	in := &hooks.Input{ToolName: call.Name, ToolInput: input, ToolUseID: call.ID, Cwd: r.cfg.Env.Cwd, DurationMS: res.Duration.Milliseconds()}
	if res.Output.IsError {
		in.HookEventName, in.Error = hooks.PostToolUseFailure, res.Output.Text
		in.IsInterrupt = ctx.Err() != nil
	} else {
		in.HookEventName = hooks.PostToolUse
		in.ToolResponse, _ = json.Marshal(res.Output.Text)
	}
	o := r.cfg.Hooks.Fire(ctx, in)
	if o.Stop {
		hr.setHookStop(in.HookEventName, o.StopReason)
	}
	if notes := prompts.HookResultNotes(string(in.HookEventName), o.Feedback, o.Context); notes != "" {
		res.Output.Text = resultText(res.Output) + notes
	}
}

// stopHooks fires Stop (SubagentStop in a sub-agent) when the model ends
// its turn. It returns true when a hook blocked the stop and the agent
// goes on: the hooks' feedback has been appended as a user message.
func (hr hookRunner) stopHooks(ctx context.Context, last llm.Message) (bool, error) {
	r := hr.r
	if hr.hooksQuiet() {
		return false, ctx.Err() // no hook: the agent stops (no input to build)
	}
	in := &hooks.Input{HookEventName: hooks.Stop, StopHookActive: r.stopHookActive, LastAssistantMessage: last.Text(), Cwd: r.cfg.Env.Cwd}
	o := r.cfg.Hooks.Fire(ctx, in)
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if o.Stop {
		hr.setHookStop(in.HookEventName, o.StopReason)
		return false, nil
	}
	if !o.Blocked || (r.cfg.MaxTurns > 0 && r.turns >= r.cfg.MaxTurns) {
		return false, nil
	}
	r.stopHookActive = true
	user := llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock(prompts.StopHookFeedback(string(in.HookEventName), o.Feedback))}}
	r.msgs = append(r.msgs, user)
	if err := r.record(user, nil); err != nil {
		return false, err
	}
	if err := r.emit(Event{Kind: UserMessage, Message: &user}); err != nil {
		return false, err
	}
	return true, nil
}
