package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/mcpx"
	"github.com/cadre-dev/cadre/mcp"
	"github.com/cadre-dev/cadre/permission"
)

// checkMCPRules checks the mcp__ permission rules once the MCP servers are
// known (issue 9, Build 4): the session's servers, those workspace trust
// kept out (a rule naming one protects it once the workspace is trusted)
// and the servers agent definitions configure inline. A deny or ask rule
// whose server is a near miss of a configured one (`mcp__githb` beside
// `github`) is a typo that protects nothing while the real server runs: an
// error that stops the run. A rule naming a server this session does not
// have at all (a user-wide rule for a server of other projects) applies to
// nothing here and is reported as a warning, as is any allow rule that
// names no server. Tool names are checked when the servers connect
// (the runtime withholds the tools of a server a deny or ask rule
// misnames).
func checkMCPRules(rules []permission.Rule, servers, untrusted []mcp.Server, defs []*agentdef.Definition) ([]Diagnostic, error) {
	// Names as rules write them: normalised, as in the tools' names.
	known := map[string][]string{}
	for _, sv := range slices.Concat(servers, untrusted) {
		known[mcpx.Normalize(sv.Name)] = nil
	}
	for _, d := range defs {
		for _, raw := range d.MCPServers {
			var inline map[string]json.RawMessage
			if json.Unmarshal(raw, &inline) == nil {
				for name := range inline {
					known[mcpx.Normalize(name)] = nil
				}
			}
		}
	}
	// A rule naming a known server is fine here (its tool is checked when
	// the server connects); testing the prefix keeps servers whose names
	// hold "__" whole.
	rules = slices.DeleteFunc(slices.Clone(rules), func(r permission.Rule) bool {
		for s := range known {
			if r.Tool == "mcp__"+s || strings.HasPrefix(r.Tool, "mcp__"+s+"__") {
				return true
			}
		}
		return false
	})
	var diags []Diagnostic
	var fatal []error
	for _, err := range permission.CheckMCPRuleNames(rules, known) {
		var ue *permission.UnknownToolError
		if errors.As(err, &ue) && ue.Rule.Behavior != permission.Allow && ue.Suggestion != "" {
			fatal = append(fatal, err)
			continue
		}
		what := "it applies to nothing in this session"
		if errors.As(err, &ue) && ue.Rule.Behavior == permission.Allow {
			what = "it allows nothing"
		}
		diags = append(diags, Diagnostic{Severity: SeverityWarning, Topic: TopicPermissions, Message: err.Error() + "; " + what})
	}
	if len(fatal) > 0 {
		return diags, fmt.Errorf("%w (a deny or ask rule that misnames an MCP server protects nothing; fix the name or remove the rule)", errors.Join(fatal...))
	}
	return diags, nil
}
