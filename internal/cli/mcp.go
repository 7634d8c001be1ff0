package cli

import (
	"github.com/spf13/pflag"

	"github.com/cadre-dev/cadre"
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
func mcpServersJSON(in []cadre.MCPInitServer) []mcpServerJSON {
	out := make([]mcpServerJSON, 0, len(in))
	for _, s := range in {
		out = append(out, mcpServerJSON{Name: s.Name, Status: s.Status})
	}
	return out
}
