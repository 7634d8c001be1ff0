package agentscmd

import (
	"cmp"
	"slices"
	"sort"
	"strings"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/spawn"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/tool"
	"github.com/cadre-dev/cadre/tool/builtin"
)

// agentTools is what `agents show` says about a definition's tools: the
// tools it really runs with when the main agent of a session with the
// built-in tool set and no permission rules spawns it at depth 1, and its
// entries that name no tool of such a session, by why.
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
	parent := builtinToolNames()
	c := spawn.ComputeCeiling(spawn.CeilingInput{ParentTools: parent,
		ParentPerms: permission.Effective{Mode: permission.ModeBypassPermissions}, Def: d, Depth: 1, MaxDepth: spawn.DefaultMaxDepth})
	out := agentTools{effective: c.Tools}
	for _, e := range d.EffectiveTools() {
		if slices.ContainsFunc(parent, func(n string) bool { return spawn.EntryMatches(e, n) }) {
			continue
		}
		raw := cmp.Or(e.Raw, e.Name)
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

// builtinToolNames lists the main agent's tools of a session with the
// built-in tools and sub-agents on: the Agent tool, then the built-in
// tools and Skill.
func builtinToolNames() []string {
	names := []string{tool.Agent}
	for _, t := range builtin.Tools(builtin.Config{}) {
		names = append(names, t.Spec().Name)
	}
	return append(names, tool.Skill)
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
