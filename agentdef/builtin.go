package agentdef

import (
	"embed"
	"path"

	"github.com/cadre-dev/cadre/permission"
)

//go:embed builtin/*.md
var builtinFS embed.FS

// Builtins returns fresh copies of the built-in agents of S-4.5
// (general-purpose, Explore, Plan, verification), parsed from embedded
// Markdown by ParseFile. Explore and Plan are one-shot; Explore also omits
// the project instructions and git status.
func Builtins() []*Definition {
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
