package sdkproto

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// HookRegistration is one hook callback the program registered in
// initialize: run it for Event (a Claude Code hook event such as
// PreToolUse) when the tool name matches Matcher ("" matches every tool),
// giving up after Timeout (0: the hook runner's default).
//
// The hooks package runs them: each becomes a hook whose command is
// CallHook with its CallbackID.
type HookRegistration struct {
	Event      string
	Matcher    string
	CallbackID string
	Timeout    time.Duration
}

// HookRegistrations lists the hooks of an initialize request: events in
// name order, matchers and callbacks in the order given.
func (in *Initialize) HookRegistrations() []HookRegistration {
	events := make([]string, 0, len(in.Hooks))
	for e := range in.Hooks {
		events = append(events, e)
	}
	slices.Sort(events)
	var out []HookRegistration
	for _, e := range events {
		for _, m := range in.Hooks[e] {
			for _, id := range m.HookCallbackIDs {
				out = append(out, HookRegistration{Event: e, Matcher: m.Matcher, CallbackID: id,
					Timeout: time.Duration(m.Timeout * float64(time.Second))})
			}
		}
	}
	return out
}

// CallHook asks the program to run one hook callback. input is the hook's
// payload in Claude Code's shape (session_id, hook_event_name, tool_name,
// tool_input, …); the answer is the callback's output in Claude Code's
// hook output shape (continue, decision, reason, hookSpecificOutput…),
// which the caller interprets.
func (c *Conn) CallHook(ctx context.Context, callbackID string, input json.RawMessage, toolUseID string) (json.RawMessage, error) {
	out, err := c.Request(ctx, HookCallback{Subtype: SubtypeHookCallback, CallbackID: callbackID, Input: input, ToolUseID: toolUseID})
	if err != nil {
		return nil, fmt.Errorf("hook callback %s: %w", callbackID, err)
	}
	return out, nil
}

// MCPMessage sends one JSON-RPC message to an MCP server that lives in the
// program's process (one named in initialize's sdkMcpServers) and returns
// the server's JSON-RPC reply; a notification gets none (nil). A client
// for those servers (internal/mcpx) uses it as its transport.
func (c *Conn) MCPMessage(ctx context.Context, server string, msg json.RawMessage) (json.RawMessage, error) {
	out, err := c.Request(ctx, MCPMessage{Subtype: SubtypeMCPMessage, ServerName: server, Message: msg})
	if err != nil {
		return nil, fmt.Errorf("mcp server %s: %w", server, err)
	}
	var r struct {
		MCPResponse json.RawMessage `json:"mcp_response"`
	}
	if len(out) > 0 {
		if err := json.Unmarshal(out, &r); err != nil {
			return nil, fmt.Errorf("mcp server %s: answer: %w", server, err)
		}
	}
	if len(r.MCPResponse) == 0 || string(r.MCPResponse) == "null" {
		return nil, nil
	}
	return r.MCPResponse, nil
}
