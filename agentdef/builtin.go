package agentdef

import (
	"embed"
	"encoding/json"
	"path"
	"slices"
	"sync"

	"github.com/cadre-dev/cadre/permission"
)

//go:embed builtin/*.md
var builtinFS embed.FS

// Builtins returns fresh copies of the built-in agents of S-4.5
// (general-purpose, Explore, Plan, verification), parsed from embedded
// Markdown by ParseFile. Explore and Plan are one-shot; Explore also omits
// the project instructions and git status.
//
// The embedded files are parsed once per process (they cannot change);
// every call returns deep copies a caller may change: parsing them took
// ~350 allocations and 34 KB in every Runtime (issue 24 point 4).
func Builtins() []*Definition {
	parsed := parsedBuiltins()
	out := make([]*Definition, len(parsed))
	for i, d := range parsed {
		out[i] = d.clone()
	}
	return out
}

// parsedBuiltins is parseBuiltins, run once: read-only, Builtins copies.
var parsedBuiltins = sync.OnceValue(parseBuiltins)

// clone is a deep copy of d: every slice and raw JSON value of its own.
func (d *Definition) clone() *Definition {
	c := *d
	c.Tools = slices.Clone(d.Tools)
	c.DisallowedTools = slices.Clone(d.DisallowedTools)
	if d.MCPServers != nil {
		c.MCPServers = make([]json.RawMessage, len(d.MCPServers))
		for i, m := range d.MCPServers {
			c.MCPServers[i] = slices.Clone(m)
		}
	}
	c.RequiredMCPServers = slices.Clone(d.RequiredMCPServers)
	c.Hooks = slices.Clone(d.Hooks)
	c.OutputSchema = slices.Clone(d.OutputSchema)
	c.Skills = slices.Clone(d.Skills)
	c.Shadows = slices.Clone(d.Shadows)
	c.Diagnostics = slices.Clone(d.Diagnostics)
	return &c
}

// parseBuiltins parses the embedded built-in definitions.
func parseBuiltins() []*Definition {
	names := []string{"general-purpose", "Explore", "Plan", "verification"}
	out := make([]*Definition, 0, len(names))
	for _, name := range names {
		data, err := builtinFS.ReadFile(path.Join("builtin", name+".md"))
		if err != nil {
			continue
		}
		def, _ := ParseFile("builtin:"+name, data, SourceBuiltin)
		if def == nil {
			continue
		}
		def.Path = "builtin:" + def.Name
		def.Diagnostics = nil
		switch def.Name {
		case "Explore":
			def.OneShot = true
			def.OmitInstructions = true
			def.OmitGitStatus = true
		case "Plan":
			// Issue 5: Explore and Plan both work from the code itself, so
			// both leave out the instructions file and git status.
			def.OneShot = true
			def.OmitInstructions = true
			def.OmitGitStatus = true
		}
		out = append(out, def)
	}
	return out
}

// ForkName is the agent type of the fork path (S-6).
const ForkName = "fork"

// Fork returns the definition of the fork path (S-6.1): data only. A fork
// inherits its parent's system prompt, exact tools, model and effort, runs
// in bubble mode, and is capped at 200 turns; the runtime supplies all of
// that from the parent, so Body is empty.
func Fork() *Definition {
	return &Definition{
		Name:           ForkName,
		Description:    "A copy of the current agent that inherits its whole conversation, system prompt, tools and model, and carries out one directive in the background.",
		Tools:          []ToolEntry{ParseToolEntry("*")},
		Model:          "inherit",
		PermissionMode: permission.ModeBubble,
		MaxTurns:       200,
		Source:         SourceBuiltin,
		Path:           "builtin:" + ForkName,
	}
}
