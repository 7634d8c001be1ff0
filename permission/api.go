// Package permission decides whether an agent may run a tool call: modes,
// allow/ask/deny rules from settings files and flags, prompting, and the
// ratchet that keeps a child agent from ever being more permissive than its
// parent.
package permission

import (
	"context"
	"encoding/json"

	"github.com/cadre-dev/cadre/tool"
)

// Mode is a permission mode (S-10.1).
type Mode string

// The permission modes.
const (
	ModeDefault           Mode = "default"
	ModeAcceptEdits       Mode = "acceptEdits"
	ModePlan              Mode = "plan"
	ModeDontAsk           Mode = "dontAsk"
	ModeBypassPermissions Mode = "bypassPermissions"
	ModeAuto              Mode = "auto"
	ModeBubble            Mode = "bubble"
)

// Behavior is what a decision says to do with a call.
type Behavior string

// Decision behaviours, in the order deny > ask > allow.
const (
	Allow Behavior = "allow"
	Ask   Behavior = "ask"
	Deny  Behavior = "deny"
)

// Request is one tool call to decide on.
type Request struct {
	// Tool is the tool's name as the model called it.
	Tool string
	// Input is the call's JSON input.
	Input json.RawMessage
	// ReadOnly is the tool's own claim that it never writes.
	ReadOnly bool
	// Declarer, when set, is the called tool's declaration of what its
	// calls act on (a tool.SubjectDeclarer); the loop sets it from the
	// tool. Unset, the checker uses the declaration of the tool cadre
	// defines under that name (tool.BuiltinSubject), if there is one, and
	// whole-tool rules alone otherwise.
	Declarer tool.SubjectDeclarer
	// Cwd and Dirs are the agent's working directories (absolute).
	Cwd  string
	Dirs []string
	// AgentID and AgentType name the agent making the call ("" for main).
	AgentID   string
	AgentType string
	// Background is true for an agent that runs in the background and
	// therefore can never show a prompt (S-7.5).
	Background bool
	// ToolUseID is the model's id for the call, reported with denials.
	ToolUseID string
}

// Decision is the verdict of the rules and the mode for one request, with
// what produced it.
type Decision struct {
	Behavior Behavior `json:"decision"`
	// Rule is the rule that decided, as written ("Bash(npm test:*)"), or ""
	// when the mode decided.
	Rule string `json:"rule,omitempty"`
	// Source is the settings file or flag the rule came from.
	Source string `json:"source,omitempty"`
	// Reason is a sentence a person or the model can act on.
	Reason string `json:"reason"`
}

// Outcome is the final answer for one call after any prompt.
type Outcome struct {
	// Allowed says whether the call may run.
	Allowed bool
	// Message is the text the model gets instead of a result when the call
	// was not allowed: why, and which rule would allow it.
	Message string
	// Decision is the rule/mode verdict behind the outcome.
	Decision Decision
	// UpdatedInput, when set on an allowed call, is the input to run it
	// with instead of the model's (see Reply.UpdatedInput).
	UpdatedInput json.RawMessage
}

// Authorizer decides every tool call of one agent. The loop calls it before
// each call; it may block on a prompt.
type Authorizer interface {
	Authorize(ctx context.Context, req Request) (Outcome, error)
}
