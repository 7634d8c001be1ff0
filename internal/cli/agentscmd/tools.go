package agentscmd

import (
	"sort"
	"strings"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/tool"
)

// agentTools is what `agents show` says about a definition's tools: the
// tools it really runs with when the main agent of a session with the
// built-in tool set spawns it (cadre.ToolsFor), and its entries that it
// does not get, by why.
type agentTools struct {
	effective []string
	// mcp are MCP entries: granted only when their server is connected.
	mcp []string
	// unavailable are tool names cadre knows but does not give a
	// sub-agent here (team tools, interactive-only tools).
	unavailable []string
	// unknown match no tool cadre has.
	unknown []string
}

func toolsOf(d *agentdef.Definition) agentTools {
	at := cadre.ToolsFor(d, cadre.BuiltinToolNames())
	out := agentTools{effective: at.Tools}
	for _, raw := range at.Unknown {
		e := agentdef.ParseToolEntry(raw)
		_, known := tool.Lookup(tool.Canonical(e.Name))
		switch {
		case e.IsMCP():
			out.mcp = append(out.mcp, raw)
		case known:
			out.unavailable = append(out.unavailable, raw)
		default:
			out.unknown = append(out.unknown, raw)
		}
	}
	return out
}

// writeTools prints the tools lines of `agents show`.
func (t agentTools) write(line func(k, v string)) {
	eff := strings.Join(t.effective, ", ")
	if eff == "" {
		eff = "(none: the agent cannot be spawned)"
	}
	line("effective tools", eff)
	if len(t.mcp) > 0 {
		line("mcp tools", strings.Join(t.mcp, ", ")+" (granted when their server is connected)")
	}
	if len(t.unavailable) > 0 {
		line("unavailable tools", strings.Join(t.unavailable, ", ")+" (cadre does not give these to a sub-agent yet; dropped)")
	}
	if len(t.unknown) > 0 {
		line("unknown tools", strings.Join(t.unknown, ", ")+" (match no tool cadre has; dropped)")
	}
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
