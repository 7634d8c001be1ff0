package config

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/cadre-dev/cadre/internal/mcpx"
	"github.com/cadre-dev/cadre/mcp"
)

// TopicMCP: an MCP server configuration (.mcp.json, --mcp-config, the
// mcpServers object of a settings file).
const TopicMCP Topic = "mcp"

// noteMCP keeps a file's mcpServers object, with the line it starts on,
// for MCPServers; its scope is set by the layer that loaded the file.
func (s *Settings) noteMCP(path string, data []byte, keys []keyPos, raw json.RawMessage) {
	if len(raw) == 0 || string(raw) == "null" {
		return
	}
	line := 0
	for _, k := range keys {
		if k.parent == "" && k.name == "mcpServers" {
			line, _ = lineCol(data, k.offset)
		}
	}
	s.MCPServers = append(s.MCPServers, mcpx.SettingsServers{File: path, Line: line, Raw: append(json.RawMessage(nil), raw...)})
}

// scopeMCP sets the scope of the mcpServers objects noted since the first
// n.
func (s *Settings) scopeMCP(n int, scope mcpx.Scope) {
	for i := n; i < len(s.MCPServers); i++ {
		s.MCPServers[i].Scope = scope
	}
}

// mcpServers reads the session's MCP servers with Claude Code's
// precedence (user settings < .mcp.json < project settings < local
// settings < --settings and --mcp-config < managed settings), or only the
// --mcp-config ones with StrictMCPConfig. A malformed file is an error
// naming file and line; problems in single entries are diagnostics.
// The servers workspace trust keeps out come back apart.
func mcpServers(cwd string, opts Options, s *Settings, getenv func(string) string) (servers, untrusted []mcp.Server, diags []Diagnostic, err error) {
	return MCPServers(cwd, s, opts.MCPConfigs, opts.StrictMCPConfig, getenv)
}

// MCPServers reads the MCP servers a session in cwd uses, exactly as Load
// does (see mcpServers for the precedence), from the settings s that
// LoadSettings returned, the --mcp-config values configs and
// --strict-mcp-config. It returns apart the servers workspace trust keeps
// out — those of an untrusted workspace's .mcp.json or project settings —
// which must not be started (issue 9); each is recorded in s.Trust, so
// s.Trust.Report() names them. `cadre mcp` shows them as not trusted.
func MCPServers(cwd string, s *Settings, configs []string, strict bool, getenv func(string) string) (servers, untrusted []mcp.Server, diags []Diagnostic, err error) {
	servers, mdiags, err := mcpx.Load(mcpx.LoadOptions{
		Cwd: cwd, Settings: s.MCPServers, Flags: configs, Strict: strict, Getenv: getenv,
	})
	for _, d := range mdiags {
		sev := SeverityWarning
		if d.Severity == mcpx.Error {
			sev = SeverityError
		}
		diags = append(diags, Diagnostic{File: d.File, Line: d.Line, Severity: sev, Topic: TopicMCP, Message: d.Message})
	}
	if err != nil {
		return nil, nil, diags, fmt.Errorf("mcp servers: %w", err)
	}
	// Issue 9: a server from the workspace's own files (.mcp.json, project
	// settings) starts a command or reaches a host, so it needs trust. A
	// --mcp-config value is the user's own choice on the command line,
	// even when the file it names lies in the workspace.
	servers = slices.DeleteFunc(servers, func(sv mcp.Server) bool {
		if sv.Source.Scope == mcpx.ScopeFlag || s.Trust.Allow(sv.Source.File, "mcpServers."+sv.Name) {
			return false
		}
		untrusted = append(untrusted, sv)
		return true
	})
	return servers, untrusted, diags, nil
}
