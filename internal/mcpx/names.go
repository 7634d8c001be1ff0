package mcpx

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/cadre-dev/cadre/tool"
)

// Normalize makes a server or tool name safe for a model-facing tool name
// the way Claude Code does: every character other than an ASCII letter, a
// digit, '_' or '-' becomes '_' (one for one; case is kept).
func Normalize(name string) string {
	out := make([]byte, 0, len(name))
	for i := 0; i < len(name); {
		c := name[i]
		if c >= 0x80 {
			// One '_' per character, as JavaScript replaces per UTF-16
			// unit; a rune outside the BMP is two units there.
			r, size := utf8.DecodeRuneInString(name[i:])
			out = append(out, '_')
			if r > 0xFFFF {
				out = append(out, '_')
			}
			i += size
			continue
		}
		if isNameByte(c) {
			out = append(out, c)
		} else {
			out = append(out, '_')
		}
		i++
	}
	return string(out)
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// ToolName is the model-facing name of a server's tool:
// mcp__<server>__<tool>, both parts normalised.
func ToolName(server, toolName string) string {
	return tool.MCPPrefix + Normalize(server) + "__" + Normalize(toolName)
}

// MatchSelector reports whether an MCP selector as written in tools,
// disallowedTools and permission rules — mcp__server, mcp__server__tool,
// mcp__server__* (or a '*' anywhere in the tool part), mcp__* — covers the
// tool toolName of server (both as they appear in model-facing names, that
// is normalised). Matching by the known server name keeps servers whose
// names contain "__" exact.
func MatchSelector(sel, server, toolName string) bool {
	rest, ok := strings.CutPrefix(sel, tool.MCPPrefix)
	switch {
	case !ok || rest == "":
		return false
	case rest == "*", rest == server:
		return true
	}
	pat, ok := strings.CutPrefix(rest, server+"__")
	return ok && (pat == "*" || glob(pat, toolName))
}

// glob matches name against a pattern whose only special character is '*'.
func glob(pattern, name string) bool {
	if !strings.Contains(pattern, "*") {
		return pattern == name
	}
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(name, parts[0]) {
		return false
	}
	name = name[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(name, p)
		if i < 0 {
			return false
		}
		name = name[i+len(p):]
	}
	return strings.HasSuffix(name, parts[len(parts)-1])
}

// Tool is implemented by every tool this package makes from a server
// tool, so selection can tell its server without parsing its name (a
// server name may itself contain "__").
type Tool interface {
	tool.Tool
	// Server is the normalised name of the server the tool comes from.
	Server() string
	// Remote is the tool's name as the server lists it.
	Remote() string
}

// Covers reports whether any of the selectors covers t. Selectors that
// are not MCP selectors are ignored; a tool that is not an MCP server tool
// is never covered.
func Covers(selectors []string, t tool.Tool) bool {
	mt, ok := t.(Tool)
	if !ok {
		return false
	}
	tail := strings.TrimPrefix(t.Spec().Name, tool.MCPPrefix+mt.Server()+"__")
	for _, sel := range selectors {
		if MatchSelector(sel, mt.Server(), tail) {
			return true
		}
	}
	return false
}

// Select keeps the MCP server tools that a selector covers, in order;
// other tools are dropped.
func Select(tools []tool.Tool, selectors []string) []tool.Tool {
	var out []tool.Tool
	for _, t := range tools {
		if Covers(selectors, t) {
			out = append(out, t)
		}
	}
	return out
}

// Remove drops the MCP server tools that a selector covers and keeps
// everything else, in order.
func Remove(tools []tool.Tool, selectors []string) []tool.Tool {
	var out []tool.Tool
	for _, t := range tools {
		if !Covers(selectors, t) {
			out = append(out, t)
		}
	}
	return out
}

// MissingServers returns, in order and once each, the servers named by
// selectors (mcp__x, mcp__x__t, mcp__x__*) that are not among servers
// (configured names; compared normalised), so a caller can warn about an
// agent that asks for a server nobody configured.
func MissingServers(selectors []string, servers []string) []string {
	var out []string
	for _, sel := range selectors {
		rest, ok := strings.CutPrefix(sel, tool.MCPPrefix)
		if !ok || rest == "" || rest == "*" {
			continue
		}
		found := false
		for _, s := range servers {
			n := Normalize(s)
			if rest == n || strings.HasPrefix(rest, n+"__") {
				found = true
				break
			}
		}
		name, _, _ := strings.Cut(rest, "__")
		if !found && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}
