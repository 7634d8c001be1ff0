package agentscmd

import (
	"sort"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/tool"
)

// knownTool reports whether a tools entry names a tool cadre has: one in
// the tool registry (tool/names.go), an MCP tool or pattern, or "*".
func knownTool(name string) bool {
	if name == "*" || tool.IsMCP(name) {
		return true
	}
	_, ok := tool.Lookup(tool.Canonical(name))
	return ok
}

// splitKnown separates the entries that name a known tool from those that
// match nothing (dropped at spawn, S-4.3).
func splitKnown(es []agentdef.ToolEntry) (known, unknown []agentdef.ToolEntry) {
	for _, e := range es {
		if knownTool(e.Name) {
			known = append(known, e)
		} else {
			unknown = append(unknown, e)
		}
	}
	return known, unknown
}

// effectiveNote is the definition's tools note with the entries that
// match no tool left out.
func effectiveNote(d *agentdef.Definition) string {
	c := *d
	if c.Tools != nil {
		c.Tools, _ = splitKnown(c.Tools)
		if c.Tools == nil {
			c.Tools = []agentdef.ToolEntry{}
		}
	}
	return agentdef.ToolsNote(&c)
}

// sortDiagnostics orders diagnostics by file and line, keeping the order
// of those on one line.
func sortDiagnostics(ds []agentdef.Diagnostic) {
	sort.SliceStable(ds, func(i, j int) bool {
		if ds[i].File != ds[j].File {
			return ds[i].File < ds[j].File
		}
		return ds[i].Line < ds[j].Line
	})
}
