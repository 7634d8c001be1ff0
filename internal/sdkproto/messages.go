// Package sdkproto speaks the protocol through which the Claude Agent SDKs
// (TypeScript @anthropic-ai/claude-agent-sdk, Python claude-agent-sdk)
// drive a CLI started with --input-format stream-json --output-format
// stream-json: one JSON object per line in each direction. The program
// sends user messages and control requests (initialize, interrupt,
// set_permission_mode, set_model, mcp_message) on stdin; the CLI writes
// its stream-json messages and its own control requests (can_use_tool,
// hook_callback, mcp_message) on stdout, and each request gets exactly one
// control_response with the same request_id. The message shapes follow the
// SDK's type declarations (sdk.d.ts of 0.3.x); only facts and formats carry
// over.
//
// Conn is the codec and router of one connection; what the requests mean
// is the caller's (the CLI's) business, through Handler. Prompter answers
// cadre's permission prompts with the SDK's canUseTool callback.
package sdkproto

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cadre-dev/cadre/permission"
)

// Line types.
const (
	TypeUser            = "user"
	TypeControlRequest  = "control_request"
	TypeControlResponse = "control_response"
	TypeControlCancel   = "control_cancel_request"
	TypeKeepAlive       = "keep_alive"
)

// Request subtypes.
const (
	SubtypeInitialize        = "initialize"
	SubtypeInterrupt         = "interrupt"
	SubtypeSetPermissionMode = "set_permission_mode"
	SubtypeSetModel          = "set_model"
	SubtypeCanUseTool        = "can_use_tool"
	SubtypeHookCallback      = "hook_callback"
	SubtypeMCPMessage        = "mcp_message"
)

// line is one line of the protocol, either direction: Type decides which
// other fields are set.
type line struct {
	Type string `json:"type"`

	// user
	Message         json.RawMessage `json:"message,omitempty"`
	ParentToolUseID *string         `json:"parent_tool_use_id,omitempty"`
	SessionID       *string         `json:"session_id,omitempty"`
	UUID            string          `json:"uuid,omitempty"`

	// control_request, control_cancel_request
	RequestID string          `json:"request_id,omitempty"`
	Request   json.RawMessage `json:"request,omitempty"`

	// control_response
	Response *responseBody `json:"response,omitempty"`
}

// responseBody is the body of a control_response: success with a payload,
// or error with a message.
type responseBody struct {
	Subtype   string          `json:"subtype"`
	RequestID string          `json:"request_id"`
	Response  json.RawMessage `json:"response,omitempty"`
	Error     string          `json:"error,omitempty"`
}

// UserMessage is a user turn sent by the program.
type UserMessage struct {
	// Text is the message's text: a string content, or its text blocks
	// joined by blank lines.
	Text string
	// Raw is the line as it arrived, for --replay-user-messages.
	Raw json.RawMessage
	// UUID is the program's id for the message, if it gave one.
	UUID string
}

// decodeUser reads the text of a user message's content: a string or an
// array of blocks, of which only text blocks are supported.
func decodeUser(raw json.RawMessage) (string, error) {
	var m struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", fmt.Errorf("user message: %w", err)
	}
	if m.Role != "" && m.Role != "user" {
		return "", fmt.Errorf("user message: role %q, want user", m.Role)
	}
	var s string
	if err := json.Unmarshal(m.Content, &s); err == nil {
		return s, nil
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(m.Content, &blocks); err != nil {
		return "", fmt.Errorf("user message content: want a string or an array of blocks: %w", err)
	}
	var parts []string
	for _, b := range blocks {
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		default:
			return "", fmt.Errorf("user message: %q blocks are not supported yet (only text)", b.Type)
		}
	}
	return strings.Join(parts, "\n\n"), nil
}

// request is the subtype every control request carries.
type request struct {
	Subtype string `json:"subtype"`
}

// Initialize is the SDK's initialize request: its hooks, in-process MCP
// servers, system prompt and agents.
type Initialize struct {
	Subtype string `json:"subtype"`
	// Hooks maps a hook event (PreToolUse, …) to its matchers.
	Hooks map[string][]HookMatcher `json:"hooks,omitempty"`
	// SDKMCPServers names the MCP servers that live in the SDK's process;
	// their messages travel as mcp_message requests.
	SDKMCPServers []string `json:"sdkMcpServers,omitempty"`
	// SystemPrompt replaces the system prompt: the SDK sends a list of
	// parts (older ones a string); [""] is the SDK's default, which
	// leaves the CLI's own prompt in place.
	SystemPrompt       Strings `json:"systemPrompt,omitempty"`
	AppendSystemPrompt string  `json:"appendSystemPrompt,omitempty"`
	// Agents are agent definitions by name, in the shape of --agents.
	Agents map[string]json.RawMessage `json:"agents,omitempty"`
}

// Strings is a JSON string or list of strings.
type Strings []string

// UnmarshalJSON accepts a string or a list of strings.
func (s *Strings) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = Strings{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("want a string or a list of strings: %w", err)
	}
	*s = many
	return nil
}

// Text joins the parts; "" when every part is empty.
func (s Strings) Text() string { return strings.TrimSpace(strings.Join(s, "\n\n")) }

// HookMatcher is one matcher of an SDK hook event: the tool names it
// matches ("" or "*" for all) and the ids of the SDK callbacks to call.
type HookMatcher struct {
	Matcher         string   `json:"matcher,omitempty"`
	HookCallbackIDs []string `json:"hookCallbackIds"`
	// Timeout is in seconds; 0 means the default.
	Timeout float64 `json:"timeout,omitempty"`
}

// InitializeResponse is the CLI's answer to initialize.
type InitializeResponse struct {
	Commands              []Command       `json:"commands"`
	Agents                []AgentInfo     `json:"agents"`
	OutputStyle           string          `json:"output_style"`
	AvailableOutputStyles []string        `json:"available_output_styles"`
	Models                []ModelInfo     `json:"models"`
	Account               Account         `json:"account"`
	PID                   int             `json:"pid"`
	ClaudeCodeVersion     string          `json:"claude_code_version"`
	CurrentPermissionMode permission.Mode `json:"current_permission_mode"`
	// HooksApplied tells the SDK whether its hooks were registered; it is
	// set only when the request carried hooks.
	HooksApplied *bool `json:"hooks_applied,omitempty"`
}

// Command is a slash command; cadre has none yet.
type Command struct {
	Name         string `json:"name"`
	Description  string `json:"description"`
	ArgumentHint string `json:"argumentHint"`
}

// AgentInfo is an agent type the session can start.
type AgentInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Model       string `json:"model,omitempty"`
}

// ModelInfo is a model the session can switch to.
type ModelInfo struct {
	Value         string `json:"value"`
	ResolvedModel string `json:"resolvedModel,omitempty"`
	DisplayName   string `json:"displayName"`
	Description   string `json:"description"`
}

// Account says where the API key comes from.
type Account struct {
	APIKeySource string `json:"apiKeySource,omitempty"`
	APIProvider  string `json:"apiProvider,omitempty"`
}

// SetPermissionMode is the set_permission_mode request.
type SetPermissionMode struct {
	Subtype string          `json:"subtype"`
	Mode    permission.Mode `json:"mode"`
}

// SetModel is the set_model request; a nil or "default" Model means the
// session's default model.
type SetModel struct {
	Subtype string  `json:"subtype"`
	Model   *string `json:"model"`
}

// MCPMessage carries one JSON-RPC message of an in-process MCP server, in
// either direction.
type MCPMessage struct {
	Subtype    string          `json:"subtype"`
	ServerName string          `json:"server_name"`
	Message    json.RawMessage `json:"message"`
}

// CanUseTool is the CLI's permission request.
type CanUseTool struct {
	Subtype               string             `json:"subtype"`
	ToolName              string             `json:"tool_name"`
	Input                 json.RawMessage    `json:"input"`
	PermissionSuggestions []PermissionUpdate `json:"permission_suggestions,omitempty"`
	BlockedPath           string             `json:"blocked_path,omitempty"`
	DecisionReason        string             `json:"decision_reason,omitempty"`
	DecisionReasonType    string             `json:"decision_reason_type,omitempty"`
	ToolUseID             string             `json:"tool_use_id"`
	AgentID               string             `json:"agent_id,omitempty"`
	Description           string             `json:"description,omitempty"`
	DisplayName           string             `json:"display_name,omitempty"`
}

// PermissionUpdate is a change of the permission settings an answer asks
// for (or a request suggests); the type is permission's, which parses the
// answers.
type PermissionUpdate = permission.SDKUpdate

// RuleValue is a rule as the SDK writes it: a tool and optional content.
type RuleValue = permission.SDKRuleValue

// PermissionResult is the SDK's answer to can_use_tool
// (permission.ParseSDKReply reads it).
type PermissionResult = permission.SDKReply

// HookCallback asks the SDK to run one hook callback.
type HookCallback struct {
	Subtype    string          `json:"subtype"`
	CallbackID string          `json:"callback_id"`
	Input      json.RawMessage `json:"input"`
	ToolUseID  string          `json:"tool_use_id,omitempty"`
}

// InterruptResponse answers interrupt: cadre queues no messages that
// survive an interrupt it does not list, so the list is empty.
type InterruptResponse struct {
	StillQueued []string `json:"still_queued"`
}
