package permission

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cadre-dev/cadre/internal/textdist"
	"github.com/cadre-dev/cadre/tool"
)

// UnknownToolError is a rule whose tool name names no tool: a typo such as
// `Bsh(rm:*)` would otherwise protect nothing while looking as if it did.
type UnknownToolError struct {
	// Rule is the rule as parsed, with its behaviour and source.
	Rule Rule
	// Suggestion is the known name closest to the rule's, or "".
	Suggestion string
	// MCP is set for an mcp__ name whose server or tool is not configured.
	MCP string
}

func (e *UnknownToolError) Error() string {
	var b strings.Builder
	if e.Rule.Behavior != "" {
		b.WriteString(string(e.Rule.Behavior) + " ")
	}
	fmt.Fprintf(&b, "rule %s", e.Rule.Label())
	if e.MCP != "" {
		b.WriteString(": " + e.MCP)
	} else {
		fmt.Fprintf(&b, ": %q is not a tool cadre knows", e.Rule.Tool)
	}
	if e.Suggestion != "" {
		fmt.Fprintf(&b, " (did you mean %s?)", e.Suggestion)
	}
	return b.String()
}

// CheckRuleNames returns an *UnknownToolError for every rule whose tool
// name is neither in the tool registry nor among extra (the names of
// further tools the agent has: custom tools of an embedder). Names are
// case-sensitive, so `bash` is unknown (did you mean Bash?). MCP names
// (mcp__…) are not checked here: their servers may not be known yet; see
// CheckMCPRuleNames.
func CheckRuleNames(rules []Rule, extra []string) []error {
	var errs []error
	for _, r := range rules {
		if tool.IsMCP(r.Tool) {
			continue
		}
		if _, ok := tool.Lookup(r.Tool); ok || slices.Contains(extra, r.Tool) {
			continue
		}
		errs = append(errs, &UnknownToolError{Rule: r, Suggestion: closestName(r.Tool, append(tool.Known(), extra...))})
	}
	return errs
}

// CheckMCPRuleNames checks the mcp__ rules once the MCP servers are known:
// servers maps every configured server to its tool names (nil when the
// server's tools are not known, so only the server is checked).
// `mcp__*` names every server; `mcp__s` and `mcp__s__*` need server s;
// `mcp__s__t` needs tool t of s.
func CheckMCPRuleNames(rules []Rule, servers map[string][]string) []error {
	var errs []error
	names := make([]string, 0, len(servers))
	for s := range servers {
		names = append(names, s)
	}
	slices.Sort(names)
	for _, r := range rules {
		if !tool.IsMCP(r.Tool) || r.Tool == tool.MCPPrefix+"*" {
			continue
		}
		server, name, hasTool := strings.Cut(strings.TrimPrefix(r.Tool, tool.MCPPrefix), "__")
		tools, known := servers[server]
		switch {
		case !known:
			msg := fmt.Sprintf("no MCP server %q is configured", server)
			if len(names) > 0 {
				msg += " (servers: " + strings.Join(names, ", ") + ")"
			}
			errs = append(errs, &UnknownToolError{Rule: r, MCP: msg, Suggestion: mcpSuggestion(closestName(server, names), name, hasTool)})
		case hasTool && name != "*" && tools != nil && !slices.Contains(tools, name):
			errs = append(errs, &UnknownToolError{Rule: r, MCP: fmt.Sprintf("MCP server %q has no tool %q", server, name),
				Suggestion: mcpSuggestion(server, closestName(name, tools), true)})
		}
	}
	return errs
}

func mcpSuggestion(server, name string, hasTool bool) string {
	switch {
	case server == "" || hasTool && name == "":
		return ""
	case hasTool:
		return tool.MCPPrefix + server + "__" + name
	}
	return tool.MCPPrefix + server
}

// closestName returns the candidate nearest to name for a did-you-mean: a
// case-insensitive match first, else the smallest edit distance when it is
// small next to the name's length.
func closestName(name string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		if strings.EqualFold(c, name) {
			return c
		}
		d := textdist.Distance(strings.ToLower(name), strings.ToLower(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if bestD < 0 || bestD > 2 && bestD*3 > len(name) {
		return ""
	}
	return best
}
