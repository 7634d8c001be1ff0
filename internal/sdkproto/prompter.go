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
	reply, err := PermissionReply(raw, input, p.Interrupt)
	if err != nil {
		return permission.Reply{}, fmt.Errorf("can_use_tool answer: %w", err)
	}
	return reply, nil
}

// PermissionReply turns a permission answer in the SDK's form — a
// PermissionResult: {"behavior":"allow","updatedInput":{…}} or
// {"behavior":"deny","message":"…"} — into cadre's, for the call whose
// input was input. It is the answer of a can_use_tool request and of a
// --permission-prompt-tool MCP tool alike. interrupt, when set, is called
// when a deny asks to interrupt the turn.
func PermissionReply(raw, input json.RawMessage, interrupt func()) (permission.Reply, error) {
	var res PermissionResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return permission.Reply{}, err
	}
	switch res.Behavior {
	case "allow":
		reply := permission.Reply{Choice: permission.ChoiceAllowOnce}
		if changed, err := rewritten(res.UpdatedInput, input); err != nil {
			return permission.Reply{}, err
		} else if changed {
			reply.UpdatedInput = res.UpdatedInput
		}
		for _, u := range res.UpdatedPermissions {
			if u.Type != "addRules" || u.Behavior != "allow" {
				// Only granting allow rules is applied; other updates
				// (modes, directories, removals, settings files) are not.
				continue
			}
			for _, rv := range u.Rules {
				r := permission.Rule{Behavior: permission.Allow, Tool: rv.ToolName, Content: rv.RuleContent, Source: permission.SourceSession}
				reply.Rules = append(reply.Rules, r)
			}
		}
		if len(reply.Rules) > 0 {
			reply.Choice = permission.ChoiceAllowSession
		}
		return reply, nil
	case "deny":
		if res.Interrupt && interrupt != nil {
			interrupt()
		}
		msg := res.Message
		if msg == "" {
			msg = "The program's permission callback denied this call."
		}
		return permission.Reply{Choice: permission.ChoiceDeny, Message: msg}, nil
	}
	return permission.Reply{}, fmt.Errorf("unknown behavior %q (want allow or deny)", res.Behavior)
}

// rewritten reports whether updated is an input other than input; it must
// be a JSON object.
func rewritten(updated, input json.RawMessage) (bool, error) {
	if len(bytes.TrimSpace(updated)) == 0 || bytes.Equal(bytes.TrimSpace(updated), []byte("null")) {
		return false, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(updated, &obj); err != nil {
		return false, fmt.Errorf("updatedInput is not a JSON object: %w", err)
	}
	var a, b bytes.Buffer
	if json.Compact(&a, updated) != nil || json.Compact(&b, input) != nil {
		return true, nil
	}
	if bytes.Equal(a.Bytes(), b.Bytes()) {
		return false, nil
	}
	// Same members in another order are the same input.
	var x, y any
	_ = json.Unmarshal(updated, &x)
	_ = json.Unmarshal(input, &y)
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return !bytes.Equal(xa, ya), nil
}
