package hooks

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/prompts"
)

// Firer fires hook events for one agent; *Agent is the implementation.
type Firer interface {
	Fire(ctx context.Context, in *Input) Outcome
}

// Prompter puts PermissionRequest hooks in front of a permission prompt:
// when the rules say ask, the hooks answer first, and only when none
// decides is Next asked (as in Claude Code, this happens in headless runs
// too, where Next denies). Use it as an agent's permission.Prompter.
type Prompter struct {
	// Hooks is the agent's binding of the dispatcher.
	Hooks Firer
	// Next asks a person; nil means nobody can be asked.
	Next permission.Prompter
}

var _ permission.Prompter = Prompter{}

// Prompt fires PermissionRequest, then asks Next if no hook decided. A
// hook that exits 2 denies with its stderr. A hook's allow may change the
// call's input (updatedInput) and grant allow rules for the session
// (updatedPermissions with addRules), as in Claude Code.
func (p Prompter) Prompt(ctx context.Context, pr permission.Prompt) (permission.Reply, error) {
	reply, ok, err := p.Answer(ctx, pr)
	if err != nil || ok {
		return reply, err
	}
	next := p.Next
	if next == nil {
		next = permission.NoPrompter{}
	}
	return next.Prompt(ctx, pr)
}

var _ permission.Answerer = Prompter{}

// Answer fires PermissionRequest and reports the hooks' decision, ok
// false when none decided. It never asks Next: a permission.Session uses
// it for a background agent, which cannot prompt but whose calls the
// hooks may still allow or deny, as in Claude Code.
func (p Prompter) Answer(ctx context.Context, pr permission.Prompt) (permission.Reply, bool, error) {
	if p.Hooks == nil {
		return permission.Reply{}, false, nil
	}
	in := &Input{
		HookEventName: PermissionRequest,
		ToolName:      pr.Request.Tool,
		ToolInput:     pr.Request.Input,
		Cwd:           pr.Request.Cwd,
	}
	if pr.Request.AgentID != "" {
		// The main agent's requests name its type too; hooks see
		// agent_id and agent_type only inside a sub-agent.
		in.AgentID, in.AgentType = pr.Request.AgentID, pr.Request.AgentType
	}
	if pr.HasSuggestion {
		in.PermissionSuggestions = suggestion(pr.Suggested)
	}
	o := p.Hooks.Fire(ctx, in)
	if err := ctx.Err(); err != nil {
		return permission.Reply{}, false, err
	}
	switch {
	case o.Request == permission.Deny:
		return permission.Reply{Choice: permission.ChoiceDeny, Message: prompts.HookPermissionDenied(o.RequestMessage), AsGiven: true}, true, nil
	case o.Blocked:
		return permission.Reply{Choice: permission.ChoiceDeny, Message: prompts.HookPermissionDenied(strings.Join(o.Feedback, "\n")), AsGiven: true}, true, nil
	case o.Request == permission.Allow:
		reply := permission.Reply{Choice: permission.ChoiceAllowOnce, UpdatedInput: o.UpdatedInput}
		if len(o.RequestRules) > 0 {
			reply.Choice, reply.Rules = permission.ChoiceAllowSession, o.RequestRules
		}
		return reply, true, nil
	}
	return permission.Reply{}, false, nil
}

// suggestion renders the rule "always allow" would add as Claude Code's
// permission_suggestions.
func suggestion(r permission.Rule) json.RawMessage {
	type ruleValue struct {
		ToolName    string `json:"toolName"`
		RuleContent string `json:"ruleContent,omitempty"`
	}
	type update struct {
		Type        string      `json:"type"`
		Rules       []ruleValue `json:"rules"`
		Behavior    string      `json:"behavior"`
		Destination string      `json:"destination"`
	}
	b, err := json.Marshal([]update{{Type: "addRules", Rules: []ruleValue{{ToolName: r.Tool, RuleContent: r.Content}}, Behavior: "allow", Destination: "session"}})
	if err != nil {
		return nil
	}
	return b
}
