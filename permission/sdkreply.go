package permission

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// SDKReply is a permission answer in the JSON form of the Claude Agent
// SDKs (their PermissionResult): {"behavior":"allow","updatedInput":{…}}
// or {"behavior":"deny","message":"…"}. It is what an SDK's canUseTool
// callback answers a can_use_tool request with, and what a
// --permission-prompt-tool MCP tool answers with as its text.
type SDKReply struct {
	Behavior           string          `json:"behavior"`
	UpdatedInput       json.RawMessage `json:"updatedInput,omitempty"`
	UpdatedPermissions []SDKUpdate     `json:"updatedPermissions,omitempty"`
	Message            string          `json:"message,omitempty"`
	Interrupt          bool            `json:"interrupt,omitempty"`
	ToolUseID          string          `json:"toolUseID,omitempty"`
}

// SDKUpdate is a change of the permission settings an SDK answer asks for
// (or a can_use_tool request suggests).
type SDKUpdate struct {
	Type        string         `json:"type"`
	Rules       []SDKRuleValue `json:"rules,omitempty"`
	Behavior    string         `json:"behavior,omitempty"`
	Destination string         `json:"destination"`
	Mode        string         `json:"mode,omitempty"`
	Directories []string       `json:"directories,omitempty"`
}

// SDKRuleValue is a rule as the SDKs write it: a tool and optional
// content.
type SDKRuleValue struct {
	ToolName    string `json:"toolName"`
	RuleContent string `json:"ruleContent,omitempty"`
}

// ParseSDKReply turns a permission answer in the SDKs' form (SDKReply)
// into a Reply, for the call whose input was input. An allow may rewrite
// the input (updatedInput) and grant allow rules for the session
// (updatedPermissions with addRules; other updates are not applied);
// interrupt, when set, is called when a deny asks to interrupt the turn.
func ParseSDKReply(raw, input json.RawMessage, interrupt func()) (Reply, error) {
	var res SDKReply
	if err := json.Unmarshal(raw, &res); err != nil {
		return Reply{}, err
	}
	switch res.Behavior {
	case "allow":
		reply := Reply{Choice: ChoiceAllowOnce}
		if changed, err := rewritten(res.UpdatedInput, input); err != nil {
			return Reply{}, err
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
				r := Rule{Behavior: Allow, Tool: rv.ToolName, Content: rv.RuleContent, Source: SourceSession}
				reply.Rules = append(reply.Rules, r)
			}
		}
		if len(reply.Rules) > 0 {
			reply.Choice = ChoiceAllowSession
		}
		return reply, nil
	case "deny":
		if res.Interrupt && interrupt != nil {
			interrupt()
		}
		if res.Message != "" {
			return Reply{Choice: ChoiceDeny, Message: res.Message, AsGiven: true}, nil
		}
		return Reply{Choice: ChoiceDeny, Message: "The program's permission callback denied this call."}, nil
	}
	return Reply{}, fmt.Errorf("unknown behavior %q (want allow or deny)", res.Behavior)
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
