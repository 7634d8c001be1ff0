package spawn

import (
	"slices"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/prompts"
)

// MCPGrant decides, the way ComputeCeiling decides for the parent's fixed
// tools, whether a child defined by def gets the MCP tool called name
// (mcp__server__tool, or ListMcpResources / ReadMcpResource), whose set
// changes while servers connect. own marks a tool of a server the
// definition itself asks for (its mcpServers): the definition's tools
// list does not narrow those, but disallowedTools and deny rules do. It
// returns why a tool is left out.
func MCPGrant(def *agentdef.Definition, rules []permission.Rule, name string, own bool) (bool, string) {
	if i := slices.IndexFunc(def.DisallowedTools, func(e agentdef.ToolEntry) bool { return wholeEntry(e) && EntryMatches(e, name) }); i >= 0 {
		return false, prompts.DroppedDisallowed(def.DisallowedTools[i].Raw)
	}
	if allow := def.EffectiveTools(); allow != nil && !own {
		if !slices.ContainsFunc(allow, func(e agentdef.ToolEntry) bool { return EntryMatches(e, name) }) {
			return false, prompts.DroppedNotInTools
		}
	}
	if rule, denied := WholeToolDenied(rules, name); denied {
		return false, prompts.DroppedByRule(rule.Label())
	}
	return true, ""
}
