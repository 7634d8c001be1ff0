package prompts

import (
	_ "embed"
	"fmt"
	"strings"
	"time"
)

//go:embed listmcpresources.md
var listMcpResources string

//go:embed readmcpresource.md
var readMcpResource string

// ListMcpResources is the ListMcpResources tool's description.
func ListMcpResources() string { return strings.TrimSpace(listMcpResources) }

// ReadMcpResource is the ReadMcpResource tool's description.
func ReadMcpResource() string { return strings.TrimSpace(readMcpResource) }

// MCPServerUnavailable is the error result of a call to a server that is
// not connected; state says where it stands and why.
func MCPServerUnavailable(server, state string) string {
	return fmt.Sprintf("MCP server %q is not available (%s). Its tools cannot be used now; continue without them.", server, state)
}

// MCPCallTimeout is the error result of a call the server did not answer
// in time; the call was cancelled.
func MCPCallTimeout(server, tool string, d time.Duration) string {
	return fmt.Sprintf("MCP server %q did not answer %s within %s; the call was cancelled.", server, tool, d)
}

// MCPServerLost is the error result of a call during which the server
// went away (its process died or its connection dropped).
func MCPServerLost(server, tool, reason string) string {
	return fmt.Sprintf("MCP server %q stopped while running %s: %s. Its tools are unavailable for the rest of this session.", server, tool, reason)
}

// MCPCallFailed is the error result of a call the server refused with a
// protocol error (unknown tool, invalid arguments…).
func MCPCallFailed(server, tool, msg string) string {
	return fmt.Sprintf("MCP server %q: %s failed: %s", server, tool, msg)
}

// MCPBinaryContent stands for image, audio or binary resource content in a
// text result.
func MCPBinaryContent(kind, mimeType string, size int) string {
	if mimeType == "" {
		mimeType = "unknown type"
	}
	return fmt.Sprintf("[%s: %s, %d bytes, not shown]", kind, mimeType, size)
}

// MCPResourceLink stands for a resource link in a tool result.
func MCPResourceLink(name, uri, mimeType string) string {
	if mimeType != "" {
		return fmt.Sprintf("[resource link: %s <%s> (%s)]", name, uri, mimeType)
	}
	return fmt.Sprintf("[resource link: %s <%s>]", name, uri)
}

// MCPEmptyResult is the text of a result with no content.
func MCPEmptyResult() string { return "(the tool returned no content)" }

// MCPTruncated ends a result cut to its first shown characters of total.
func MCPTruncated(shown, total int) string {
	return fmt.Sprintf("[output truncated: the first %d of %d characters are shown. Ask the tool for less (a narrower query, a page, a limit) to see the rest.]", shown, total)
}

// MCPToolWithheld is the error result of a call of an MCP tool the agent
// was not given; why says which rule or list keeps it out.
func MCPToolWithheld(name, why string) string {
	return fmt.Sprintf("The tool %s is not available to this agent (%s).", name, why)
}

// MCPRequired is the error result of an Agent call refused because a
// server the agent type requires (requiredMcpServers) is not usable.
func MCPRequired(agentType, why string) string {
	return fmt.Sprintf("Agent type %q cannot start: %s. Continue without it, or use another agent type.", agentType, why)
}
