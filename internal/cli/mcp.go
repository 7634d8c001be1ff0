package cli

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/spf13/pflag"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/sdkproto"
	"github.com/cadre-dev/cadre/mcp"
)

// mcpFlags are the MCP flags of the root command, Claude Code's.
type mcpFlags struct {
	configs []string
	strict  bool
}

func (m *mcpFlags) register(f *pflag.FlagSet) {
	f.StringArrayVar(&m.configs, "mcp-config", nil, "MCP servers from a JSON file or a JSON string in .mcp.json form (repeatable)")
	f.BoolVar(&m.strict, "strict-mcp-config", false, "use only the MCP servers of --mcp-config, not .mcp.json's or the settings files'")
}

// mcpServersJSON is the init event's mcp_servers list.
func mcpServersJSON(in []mcp.InitServer) []mcpServerJSON {
	out := make([]mcpServerJSON, 0, len(in))
	for _, s := range in {
		out = append(out, mcpServerJSON{Name: s.Name, Status: s.Status})
	}
	return out
}

// sdkMCP connects the program's in-process MCP servers (the Agent SDK's
// createSdkMcpServer): those its --mcp-config named with type "sdk" and
// those initialize lists in sdkMcpServers. Their messages travel as
// mcp_message control requests.
func (s *sdkSession) sdkMCP(cfg *cadre.Config, in *sdkproto.Initialize) {
	var names []string
	if in != nil {
		names = append(names, in.SDKMCPServers...)
	}
	for i, sv := range cfg.MCPServers {
		if sv.Transport == mcp.InProcess {
			cfg.MCPServers[i].Pipe = s.mcpPipe(sv.Name)
			names = slices.DeleteFunc(names, func(n string) bool { return n == sv.Name })
		}
	}
	for _, n := range names {
		cfg.MCPServers = slices.DeleteFunc(cfg.MCPServers, func(sv mcp.Server) bool { return sv.Name == n })
		cfg.MCPServers = append(cfg.MCPServers, mcp.InProcessServer(n, s.mcpPipe(n)))
	}
}

func (s *sdkSession) mcpPipe(name string) mcp.MessagePipe {
	return func(ctx context.Context, msg json.RawMessage) (json.RawMessage, error) {
		return s.conn.MCPMessage(ctx, name, msg)
	}
}
