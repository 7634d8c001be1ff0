package sdkproto

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/cadre-dev/cadre/permission"
)

// Prompter is a permission.Prompter that asks the program: each prompt
// becomes a can_use_tool request answered by the SDK's canUseTool
// callback. An allow may rewrite the input (updatedInput) and grant allow
// rules for the session (updatedPermissions with addRules); a deny's
// message reaches the model.
type Prompter struct {
	Conn *Conn
	// Interrupt, when set, is called when a deny asks to interrupt the
	// turn (interrupt: true).
	Interrupt func()
}

var _ permission.Prompter = (*Prompter)(nil)

// Prompt asks the program.
func (p *Prompter) Prompt(ctx context.Context, pr permission.Prompt) (permission.Reply, error) {
	input := pr.Request.Input
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage("{}")
	}
	req := CanUseTool{
		Subtype: SubtypeCanUseTool, ToolName: pr.Request.Tool, Input: input, ToolUseID: pr.Request.ToolUseID,
		AgentID: pr.Request.AgentID, DecisionReason: pr.Decision.Reason, DisplayName: pr.Request.Tool,
	}
	if pr.Decision.Rule != "" {
		req.DecisionReasonType = "rule"
	} else {
		req.DecisionReasonType = "mode"
	}
	if pr.HasSuggestion {
		req.PermissionSuggestions = []PermissionUpdate{{Type: "addRules", Behavior: "allow", Destination: "session",
			Rules: []RuleValue{{ToolName: pr.Suggested.Tool, RuleContent: pr.Suggested.Content}}}}
	}
	raw, err := p.Conn.Request(ctx, req)
	if err != nil {
		return permission.Reply{}, err
	}
	reply, err := permission.ParseSDKReply(raw, input, p.Interrupt)
	if err != nil {
		return permission.Reply{}, fmt.Errorf("can_use_tool answer: %w", err)
	}
	return reply, nil
}
