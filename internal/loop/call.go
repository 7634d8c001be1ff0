package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/hooks"
	"github.com/cadre-dev/cadre/internal/text"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/tool"
)

// toolCall is one tool call on its way through the steps of runOne: what
// a step learns is kept here for the steps after it.
type toolCall struct {
	// call is the model's call; its Input becomes what runs once hooks
	// or the prompter have rewritten it.
	call  llm.Block
	turn  tool.Turn // its place in the batch (tool.Call.Turn)
	start time.Time
	tool  tool.Tool
	// verdict is a PreToolUse hook's permission verdict, nil when none
	// gave one; notes are context the hooks add to the result.
	verdict *permission.HookVerdict
	notes   []string
	res     ToolResult
}

// runOne takes one call through its steps, top to bottom; each step
// returns true when the call ends there with c.res as its result, and a
// Go error (from the tool, a hook's context or the authorizer) ends the
// turn. A panic in the tool becomes an error result. The steps are called
// directly, not from a table. The call's state is one allocation rather
// than ~450 bytes of this frame: an Agent call waits on its child inside
// execute, and the frames below a waiting call must stay under a quarter
// of 16 KiB for its stack to shrink back to 8 KiB at a GC — 8 KiB per
// live agent (TestLiveAgentRetainedBounded). call is copied (hooks may
// rewrite the copy's input) and taken by pointer, so the callers' frames
// hold no copy of it either.
func (r *runner) runOne(ctx context.Context, call *llm.Block, turn tool.Turn) (ToolResult, error) {
	if r.cfg.Observer != nil {
		return callPath{r}.observed(ctx, call, turn)
	}
	return callPath{r}.steps(ctx, call, turn)
}

// callPath is the runner's part that takes one tool call through its
// steps, inside its execute_tool span when telemetry observes it.
type callPath struct{ r *runner }

// observed is steps inside the call's span, apart so that a call without an
// observer carries nothing more in its frame.
func (p callPath) observed(ctx context.Context, call *llm.Block, turn tool.Turn) (ToolResult, error) {
	ctx, observed := p.r.cfg.Observer.StartTool(ctx, *call)
	res, err := p.steps(ctx, call, turn)
	observed(res.Output, res.Denied, err)
	return res, err
}

// steps takes one call through its steps (runOne).
func (p callPath) steps(ctx context.Context, call *llm.Block, turn tool.Turn) (ToolResult, error) {
	r := p.r
	c := &toolCall{call: *call, turn: turn, start: r.cfg.Now()}
	done, err := r.findTool(ctx, c) // input too large or not JSON, no such tool, input that does not fit: a result the model can fix
	if !done && err == nil {
		done, err = r.preToolUse(ctx, c) // PreToolUse hooks: may stop the turn, rewrite the input, give a permission verdict
	}
	if !done && err == nil {
		done, err = r.authorize(ctx, c) // the authorizer (rules, mode, prompt), weighing the hooks' verdict
	}
	if !done && err == nil {
		done, err = r.execute(ctx, c) // the tool's own Run, with the call on its Env
	}
	if !done && err == nil {
		_, err = r.postToolUse(ctx, c) // PostToolUse hooks, and the PreToolUse notes, on the result
	}
	if err != nil {
		return ToolResult{Duration: r.cfg.Now().Sub(c.start)}, err
	}
	c.res.Duration = r.cfg.Now().Sub(c.start)
	return c.res, nil
}

// refuse settles c with an error result the model reads.
func (c *toolCall) refuse(out tool.Output) (bool, error) {
	c.res = ToolResult{Output: out}
	return true, nil
}

// findTool checks what can be checked before anyone is asked: the input
// arrived whole and is JSON, the tool exists (or is offered since the turn
// began, dynamic.go), and the input fits its schema. Each is an input
// error the model can fix, never a denial (issue 29).
func (r *runner) findTool(ctx context.Context, c *toolCall) (bool, error) {
	call := c.call
	if call.InputOverLimit > 0 {
		return c.refuse(tool.Errorf("%s", prompts.ToolInputTooLarge(call.Name, call.InputOverLimit, llm.MaxToolInputBytes)))
	}
	if call.InvalidInput != "" {
		return c.refuse(tool.Errorf("%s", prompts.ToolInputNotJSON(call.Name, text.Ellipsis(call.InvalidInput, 200))))
	}
	t, ok := r.pool().Get(call.Name)
	if !ok {
		// dynamic.go: a tool offered since, or withheld with a reason.
		var msg string
		if t, msg, ok = r.resolve(ctx, call.Name); ok && t == nil {
			return c.refuse(tool.Output{Text: msg, IsError: true})
		}
	}
	if !ok {
		return c.refuse(tool.Errorf("%s", prompts.NoSuchTool(call.Name, r.pool().Names())))
	}
	if problems := tool.CheckInput(t, call.Input); len(problems) > 0 {
		return c.refuse(tool.Errorf("%s", prompts.ToolInputInvalid(call.Name, problems)))
	}
	c.tool = t
	return false, nil
}

// preToolUse fires PreToolUse. A hook may end the turn before the call,
// block it (a deny verdict), rewrite its input, allow it or ask for it
// (a verdict the authorizer weighs), and add context to its result.
func (r *runner) preToolUse(ctx context.Context, c *toolCall) (bool, error) {
	if r.cfg.Hooks == nil {
		return false, nil
	}
	if hooksOf(r).hooksQuiet() {
		// What Fire's zero Outcome leads to, without building the input.
		return false, ctx.Err()
	}
	in := &hooks.Input{HookEventName: hooks.PreToolUse, ToolName: c.call.Name, ToolInput: c.call.Input, ToolUseID: c.call.ID, Cwd: r.cfg.Env.Cwd}
	o := r.cfg.Hooks.Fire(ctx, in)
	if err := ctx.Err(); err != nil {
		return false, err
	}
	switch {
	case o.Stop:
		hooksOf(r).setHookStop(in.HookEventName, o.StopReason)
		return c.refuse(tool.Output{Text: prompts.HookStopped(string(in.HookEventName), o.StopReason), IsError: true})
	case o.Blocked:
		c.verdict = &permission.HookVerdict{
			Behavior: permission.Deny,
			Reason:   strings.Join(o.Feedback, "\n"),
			Message:  prompts.HookBlockedCall(string(in.HookEventName), c.call.Name, o.Feedback),
		}
		return false, nil
	}
	if o.UpdatedInput != nil {
		c.call.Input = o.UpdatedInput
	}
	if o.Permission == permission.Allow || o.Permission == permission.Ask {
		c.verdict = &permission.HookVerdict{Behavior: o.Permission, Reason: o.PermissionReason}
	}
	c.notes = o.Context
	return false, nil
}

// authorize asks the authorizer about the call (with the hooks' verdict
// when there is one). A refusal is a result the model reads; an allow
// may come with the input the prompter's answer rewrote (the history
// keeps what the model asked for).
func (r *runner) authorize(ctx context.Context, c *toolCall) (bool, error) {
	if r.cfg.Authorizer == nil && c.verdict == nil {
		return false, nil
	}
	req := permission.Request{
		Tool:       c.call.Name,
		ToolUseID:  c.call.ID,
		Input:      c.call.Input,
		ReadOnly:   c.tool.ReadOnly(),
		Declarer:   declarer(c.tool),
		Cwd:        r.cfg.Env.Cwd,
		Dirs:       r.cfg.Env.Dirs,
		AgentID:    r.cfg.AgentID,
		AgentType:  r.cfg.AgentType,
		Background: r.cfg.Background,
	}
	var out permission.Outcome
	var err error
	if c.verdict != nil {
		out, err = hooksOf(r).authorizeHooked(ctx, req, *c.verdict)
	} else {
		out, err = r.cfg.Authorizer.Authorize(ctx, req)
	}
	if err != nil {
		return false, fmt.Errorf("authorize %s: %w", c.call.Name, err)
	}
	if !out.Allowed {
		msg := out.Message
		if msg == "" {
			msg = prompts.ToolDenied(c.call.Name)
		}
		c.res = ToolResult{Output: tool.Output{Text: msg, IsError: true}, Denied: true}
		return true, nil
	}
	if len(out.UpdatedInput) > 0 {
		c.call.Input = out.UpdatedInput
	}
	return false, nil
}

// declarer returns the tool's declaration of its calls' subject, or nil.
func declarer(t tool.Tool) tool.SubjectDeclarer {
	d, _ := t.(tool.SubjectDeclarer)
	return d
}

// execute runs the tool with a per-call copy of the agent's Env carrying
// the call (tool.Env.ForCall). A panic becomes an error result; a Go
// error from the tool ends the turn.
func (r *runner) execute(ctx context.Context, c *toolCall) (done bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.res = ToolResult{Output: tool.Errorf("%s", prompts.ToolCrashed(c.call.Name, p))}
			done, err = false, nil
		}
	}()
	input := c.call.Input
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	env := r.cfg.Env.ForCall(tool.Call{ID: c.call.ID, Conversation: r.conversation, Turn: c.turn})
	out, err := c.tool.Run(ctx, env, input)
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		return false, fmt.Errorf("tool %s: %w", c.call.Name, err)
	}
	c.res = ToolResult{Output: out}
	return false, nil
}

// postToolUse fires PostToolUse, or PostToolUseFailure for an error
// result, and adds what the hooks said for the model to the result, then
// the context PreToolUse hooks gave.
func (r *runner) postToolUse(ctx context.Context, c *toolCall) (bool, error) {
	if r.cfg.Hooks == nil {
		return true, nil
	}
	c.res.Duration = r.cfg.Now().Sub(c.start)
	hooksOf(r).postToolHooks(ctx, c.call, c.call.Input, &c.res)
	if len(c.notes) > 0 {
		c.res.Output.Text = resultText(c.res.Output) + prompts.HookResultNotes(string(hooks.PreToolUse), nil, c.notes)
	}
	return true, nil
}
