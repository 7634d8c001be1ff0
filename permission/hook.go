package permission

import (
	"context"
	"encoding/json"

	"github.com/cadre-dev/cadre/prompts"
)

// SourceHook is the source of decisions a PreToolUse hook made.
const SourceHook = "PreToolUse hook"

// HookVerdict is a PreToolUse hook's permission decision for one call.
type HookVerdict struct {
	// Behavior is Allow, Ask or Deny.
	Behavior Behavior
	// Reason is the hook's reason: shown at the prompt an ask leads to,
	// recorded with a denial.
	Reason string
	// Message is what the model reads when the hook denied the call.
	Message string
}

// HookAuthorizer is an Authorizer that weighs a PreToolUse hook's verdict
// against the rules, as Claude Code does: a hook's deny refuses the call
// (and counts as a denial); its allow skips the prompt an ask would show
// (in dontAsk mode too) but never overrides a deny rule or plan mode; its
// ask prompts even where the rules allow, and is denied where no one can
// answer.
type HookAuthorizer interface {
	Authorizer
	AuthorizeHooked(ctx context.Context, req Request, v HookVerdict) (Outcome, error)
}

var _ HookAuthorizer = (*Session)(nil)

// AuthorizeHooked decides one call a PreToolUse hook has a verdict on.
func (s *Session) AuthorizeHooked(ctx context.Context, req Request, v HookVerdict) (Outcome, error) {
	if err := ctx.Err(); err != nil {
		return Outcome{}, err
	}
	req = s.fill(req)
	switch v.Behavior {
	case Deny:
		d := Decision{Behavior: Deny, Source: SourceHook, Reason: v.Reason}
		if d.Reason == "" {
			d.Reason = prompts.PermHookDenied
		}
		s.record(req, d, false)
		return Outcome{Allowed: false, Message: v.Message, Decision: d}, nil
	case Allow, Ask:
	default:
		return s.Authorize(ctx, req)
	}
	// The rules without dontAsk's conversion of ask into deny: only a
	// real deny (a rule, plan mode, a case-variant name) stands against
	// the hook.
	checker := s.Checker()
	prompting := *checker
	prompting.cfg.NoPrompt = false
	d := prompting.Check(req)
	if d.Behavior == Deny {
		return s.deny(req, d, "", false), nil
	}
	if v.Behavior == Allow {
		reason := prompts.PermHookAllowed
		if v.Reason != "" {
			reason += ": " + v.Reason
		}
		return Outcome{Allowed: true, Decision: Decision{Behavior: Allow, Source: SourceHook, Reason: reason}}, nil
	}
	d = Decision{Behavior: Ask, Source: SourceHook, Reason: v.Reason}
	if d.Reason == "" {
		d.Reason = prompts.PermHookAsks
	}
	if checker.cfg.NoPrompt {
		return s.deny(req, d, "No prompts are possible here, so the call was denied.", false), nil
	}
	return s.ask(ctx, req, d)
}

// record adds a denial to the session's and the run's lists.
func (s *Session) record(req Request, d Decision, background bool) {
	den := Denial{
		AgentID: req.AgentID, AgentType: req.AgentType, ToolName: req.Tool, ToolUseID: req.ToolUseID,
		ToolInput: append(json.RawMessage(nil), req.Input...), Reason: d.Reason, Rule: d.Rule, Source: d.Source,
		Background: background,
	}
	if len(den.ToolInput) == 0 {
		den.ToolInput = json.RawMessage("{}")
	}
	s.mu.Lock()
	s.denials = append(s.denials, den)
	s.mu.Unlock()
	if s.cfg.Log != nil {
		s.cfg.Log.Add(den)
	}
}
