package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cadre-dev/cadre/internal/mcpx"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/tool"
)

// A permission prompt answered by an MCP tool (Permissions.PromptTool,
// Claude Code's --permission-prompt-tool mcp__server__tool): the tool is
// called with {"tool_name", "input", "tool_use_id"} and answers with the
// JSON text {"behavior":"allow","updatedInput":{…}} or
// {"behavior":"deny","message":"…"} — the SDK's permission result, so an
// allow may also grant session rules (updatedPermissions).

// checkPromptTool validates Permissions.PromptTool against the rest of
// the configuration.
func checkPromptTool(cfg *Config) error {
	p := cfg.Permissions
	if p == nil || p.PromptTool == "" {
		return nil
	}
	if p.Prompter != nil {
		return fmt.Errorf("Permissions.PromptTool %s and Permissions.Prompter cannot both be set", p.PromptTool)
	}
	if !tool.IsMCP(p.PromptTool) {
		return fmt.Errorf("Permissions.PromptTool %q: want an MCP tool, mcp__<server>__<tool>", p.PromptTool)
	}
	for _, s := range cfg.MCPServers {
		if strings.HasPrefix(p.PromptTool, mcpx.ToolName(s.Name, "")) {
			return nil
		}
	}
	return fmt.Errorf("Permissions.PromptTool %s: no MCP server of that name is configured", p.PromptTool)
}

// mcpPrompter asks the MCP tool named tool.
type mcpPrompter struct {
	r    *Runtime
	tool string
}

var _ permission.Prompter = (*mcpPrompter)(nil)

// promptToolInput is what the tool is called with, as Claude Code calls
// it.
type promptToolInput struct {
	ToolName  string          `json:"tool_name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
}

// Prompt calls the tool (waiting for its server while it connects) and
// reads its answer. A missing tool, a failed call or an answer that is
// not a permission result is an error, which denies the call.
func (p *mcpPrompter) Prompt(ctx context.Context, pr permission.Prompt) (permission.Reply, error) {
	p.r.StartMCP()
	t := p.r.mcp.m.AwaitTool(ctx, p.tool)
	if t == nil {
		return permission.Reply{}, fmt.Errorf("the permission prompt tool %s is not available", p.tool)
	}
	input := pr.Request.Input
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage("{}")
	}
	args, err := json.Marshal(promptToolInput{ToolName: pr.Request.Tool, Input: input, ToolUseID: pr.Request.ToolUseID})
	if err != nil {
		return permission.Reply{}, fmt.Errorf("permission prompt tool %s: %w", p.tool, err)
	}
	out, err := t.Run(ctx, &tool.Env{Cwd: p.r.cfg.Cwd}, args)
	if err != nil {
		return permission.Reply{}, fmt.Errorf("permission prompt tool %s: %w", p.tool, err)
	}
	if out.IsError {
		return permission.Reply{}, fmt.Errorf("permission prompt tool %s failed: %s", p.tool, out.Text)
	}
	reply, err := permission.ParseSDKReply(json.RawMessage(strings.TrimSpace(out.Text)), input, nil)
	if err != nil {
		return permission.Reply{}, fmt.Errorf("permission prompt tool %s answered %q: %w", p.tool, out.Text, err)
	}
	return reply, nil
}
