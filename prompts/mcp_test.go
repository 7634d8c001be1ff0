package prompts

import (
	"testing"
	"time"
)

func TestMCPTexts(t *testing.T) {
	t.Parallel()
	for got, want := range map[string]string{
		MCPServerUnavailable("gh", "failed: exit 1"):                                        `MCP server "gh" is not available (failed: exit 1). Its tools cannot be used now; continue without them.`,
		MCPCallTimeout("gh", "search", 2*time.Second):                                       `MCP server "gh" did not answer search within 2s; the call was cancelled.`,
		MCPServerLost("gh", "search", "exit status 3"):                                      `MCP server "gh" stopped while running search: exit status 3. Its tools are unavailable for the rest of this session.`,
		MCPCallFailed("gh", "search", "bad params"):                                         `MCP server "gh": search failed: bad params`,
		MCPBinaryContent("image", "image/png", 10):                                          `[image: image/png, 10 bytes, not shown]`,
		MCPBinaryContent("audio", "", 1):                                                    `[audio: unknown type, 1 bytes, not shown]`,
		MCPResourceLink("a", "file:///a", "text/plain"):                                     `[resource link: a <file:///a> (text/plain)]`,
		MCPResourceLink("a", "file:///a", ""):                                               `[resource link: a <file:///a>]`,
		MCPRequired("linear-bot", `required MCP server "linear" failed to connect: exit 1`): `Agent type "linear-bot" cannot start: required MCP server "linear" failed to connect: exit 1. Continue without it, or use another agent type.`,
		MCPToolWithheld("mcp__s__t", "denied by rule mcp__s"):                               `The tool mcp__s__t is not available to this agent (denied by rule mcp__s).`,
		MCPTruncated(10, 20):                                                                `[output truncated: the first 10 of 20 characters are shown. Ask the tool for less (a narrower query, a page, a limit) to see the rest.]`,
	} {
		if got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
	if ListMcpResources() == "" || ReadMcpResource() == "" {
		t.Error("empty resource tool description")
	}
}
