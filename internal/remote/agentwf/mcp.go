package agentwf

// MCP servers on a worker. A worker connects the MCP servers of its own
// settings (`cadre-remote worker --settings`), never the launcher's: a
// server is a command or a URL with credentials, which do not travel in a
// spawn request. A remote agent gets the tools of those servers its
// definition names (executor.Definition.MCPServers, matched by name) and
// those its ceiling names; the launcher's deny rules still hold for them
// (the worker's permission check).

import (
	"context"
	"slices"

	"github.com/cadre-dev/cadre/internal/mcpx"
	"github.com/cadre-dev/cadre/tool"
)

// MCPTools is a worker's MCP servers as its activities use them
// (*mcpx.Manager): the tools of the servers connected now.
type MCPTools interface {
	Tools(ctx context.Context) []tool.Tool
}

// mcpTools is the tools of the worker's MCP servers connected now.
func (a *Activities) mcpTools(ctx context.Context) []tool.Tool {
	if a.MCP == nil {
		return nil
	}
	return a.MCP.Tools(ctx)
}

// namedServer reports whether t is a tool of one of servers.
func namedServer(t tool.Tool, servers []string) bool {
	st, ok := t.(mcpx.Tool)
	if !ok {
		return false
	}
	return slices.ContainsFunc(servers, func(s string) bool { return mcpx.Normalize(s) == st.Server() })
}
