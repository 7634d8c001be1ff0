package tasktools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/tool"
)

// The team tools (issue 25): with agent teams on, SendMessage takes
// Claude Code's structured messages besides text, and the lead has
// TeamCreate and TeamDelete. The engine does the work behind TeamCaller.

// TeamCaller is the calling agent's side of the team tools.
type TeamCaller interface {
	// TeamSend delivers m from the calling agent.
	TeamSend(ctx context.Context, m TeamMessage) (tool.Output, error)
	// TeamCreate names the session's team.
	TeamCreate(ctx context.Context, name, description string) (tool.Output, error)
	// TeamDelete ends the session's team.
	TeamDelete(ctx context.Context) (tool.Output, error)
}

// Structured message types (Claude Code's shapes).
const (
	ShutdownRequest      = "shutdown_request"
	ShutdownResponse     = "shutdown_response"
	PlanApprovalRequest  = "plan_approval_request"
	PlanApprovalResponse = "plan_approval_response"
)

// TeamMessage is a team SendMessage call: To and Summary, and either Text
// (a plain message) or a structured message (Type set).
type TeamMessage struct {
	To      string
	Summary string
	Text    string
	// Type is the structured message's type; "" for text.
	Type string
	// Reason: shutdown_request's and shutdown_response's.
	Reason string
	// RequestID: the request a response answers.
	RequestID string
	// Approve: a response's verdict.
	Approve bool
	// Feedback: a rejected plan's.
	Feedback string
	// Mode: the permission mode an approved plan continues in.
	Mode string
	// Plan: plan_approval_request's plan.
	Plan string
}

// structured is a structured message's JSON.
type structured struct {
	Type      string `json:"type"`
	Reason    string `json:"reason,omitempty"`
	RequestID string `json:"request_id,omitempty"`
	Approve   *bool  `json:"approve,omitempty"`
	Feedback  string `json:"feedback,omitempty"`
	Mode      string `json:"permissionMode,omitempty"`
	Plan      string `json:"plan,omitempty"`
}

// ParseTeamMessage decodes a team SendMessage input: message is a string
// or one of the structured messages. Errors name what is wrong.
func ParseTeamMessage(raw json.RawMessage) (TeamMessage, error) {
	var in struct {
		To      string          `json:"to"`
		Message json.RawMessage `json:"message"`
		Summary string          `json:"summary"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return TeamMessage{}, fmt.Errorf("SendMessage input: %w", err)
	}
	m := TeamMessage{To: strings.TrimSpace(in.To), Summary: in.Summary}
	if r := []rune(m.Summary); len(r) > 200 {
		m.Summary = string(r[:200])
	}
	if m.To == "" {
		return m, fmt.Errorf("SendMessage input: to is required")
	}
	if len(bytes.TrimSpace(in.Message)) == 0 {
		return m, fmt.Errorf("SendMessage input: message is required")
	}
	if json.Unmarshal(in.Message, &m.Text) == nil {
		return m, nil
	}
	var s structured
	d := json.NewDecoder(bytes.NewReader(in.Message))
	d.DisallowUnknownFields()
	if err := d.Decode(&s); err != nil {
		return m, fmt.Errorf("SendMessage input: message must be a string or a structured message: %w", err)
	}
	m.Type, m.Reason, m.RequestID, m.Feedback, m.Mode, m.Plan = s.Type, s.Reason, s.RequestID, s.Feedback, s.Mode, s.Plan
	switch s.Type {
	case ShutdownRequest, PlanApprovalRequest:
	case ShutdownResponse, PlanApprovalResponse:
		if s.RequestID == "" || s.Approve == nil {
			return m, fmt.Errorf("SendMessage input: %s needs request_id and approve", s.Type)
		}
		m.Approve = *s.Approve
	default:
		return m, fmt.Errorf("SendMessage input: unknown message type %q (want %s, %s, %s or %s)", s.Type,
			ShutdownRequest, ShutdownResponse, PlanApprovalRequest, PlanApprovalResponse)
	}
	return m, nil
}

// teamSendSchema is the team SendMessage's input schema.
var teamSendSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"to":{"type":"string","description":"The recipient: a teammate's name, team-lead, or an agent id."},` +
	`"message":{"description":"The message: text, or a structured message.","anyOf":[{"type":"string"},` +
	`{"type":"object","properties":{"type":{"type":"string","enum":["shutdown_request"]},"reason":{"type":"string"}},"required":["type"],"additionalProperties":false},` +
	`{"type":"object","properties":{"type":{"type":"string","enum":["shutdown_response"]},"request_id":{"type":"string"},"approve":{"type":"boolean"},"reason":{"type":"string"}},"required":["type","request_id","approve"],"additionalProperties":false},` +
	`{"type":"object","properties":{"type":{"type":"string","enum":["plan_approval_request"]},"plan":{"type":"string"}},"required":["type","plan"],"additionalProperties":false},` +
	`{"type":"object","properties":{"type":{"type":"string","enum":["plan_approval_response"]},"request_id":{"type":"string"},"approve":{"type":"boolean"},"feedback":{"type":"string"},"permissionMode":{"type":"string"}},"required":["type","request_id","approve"],"additionalProperties":false}]},` +
	`"summary":{"type":"string","description":"A few words saying what the message is about (at most 200 characters)."}},` +
	`"required":["to","message"],"additionalProperties":false}`)

// teamTool is a team tool with a hand-written schema.
type teamTool struct {
	spec llm.ToolSpec
	run  func(ctx context.Context, env *tool.Env, raw json.RawMessage) (tool.Output, error)
}

// Spec implements tool.Tool.
func (t *teamTool) Spec() llm.ToolSpec { return t.spec }

// ReadOnly implements tool.Tool.
func (t *teamTool) ReadOnly() bool { return false }

// Run implements tool.Tool.
func (t *teamTool) Run(ctx context.Context, env *tool.Env, raw json.RawMessage) (tool.Output, error) {
	return t.run(ctx, env, raw)
}

// TeamSendMessage is SendMessage with teams on.
func TeamSendMessage(caller func(context.Context, *tool.Env) TeamCaller) tool.Tool {
	return &teamTool{
		spec: llm.ToolSpec{Name: tool.SendMessage, Description: prompts.TeamSendMessageTool, InputSchema: teamSendSchema},
		run: func(ctx context.Context, env *tool.Env, raw json.RawMessage) (tool.Output, error) {
			c := caller(ctx, env)
			if c == nil {
				return ErrorOutput(prompts.AgentOutsideSession()), nil
			}
			m, err := ParseTeamMessage(raw)
			if err != nil {
				return ErrorOutput(err.Error()), nil
			}
			return c.TeamSend(ctx, m)
		},
	}
}

// TeamLeadTools are TeamCreate and TeamDelete.
func TeamLeadTools(caller func(context.Context, *tool.Env) TeamCaller) []tool.Tool {
	type createIn struct {
		TeamName    string `json:"team_name" jsonschema:"description=The team's name."`
		Description string `json:"description,omitempty" jsonschema:"description=What the team is for."`
	}
	type deleteIn struct{}
	return []tool.Tool{
		tool.Func(tool.FuncConfig{Name: tool.TeamCreate, Description: prompts.TeamCreateTool}, func(ctx context.Context, env *tool.Env, in createIn) (tool.Output, error) {
			c := caller(ctx, env)
			if c == nil {
				return ErrorOutput(prompts.AgentOutsideSession()), nil
			}
			return c.TeamCreate(ctx, strings.TrimSpace(in.TeamName), in.Description)
		}),
		tool.Func(tool.FuncConfig{Name: tool.TeamDelete, Description: prompts.TeamDeleteTool}, func(ctx context.Context, env *tool.Env, _ deleteIn) (tool.Output, error) {
			c := caller(ctx, env)
			if c == nil {
				return ErrorOutput(prompts.AgentOutsideSession()), nil
			}
			return c.TeamDelete(ctx)
		}),
	}
}
