package engine

import (
	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/tool"
)

// readOnlyAgent reports whether an agent is read-only by construction
// (S-10.5, issue 9): the built-in Explore and Plan, and any agent none of
// whose tools can change files but Bash — its Bash then runs under
// plan-mode rules (only commands the checker classifies read-only),
// whatever the parent's mode, bypassPermissions included. Tools that
// change nothing on disk (the shell's companions, the todo list, the
// Agent tool, whose children inherit the restriction) do not count. A
// definition that limits Bash to named commands (`Bash(npm test:*)`) has
// said which commands it runs; that narrowing holds instead.
func readOnlyAgent(def *agentdef.Definition, pool *tool.Pool, bashNarrowed bool) bool {
	if def.Source == agentdef.SourceBuiltin && (def.Name == "Explore" || def.Name == "Plan") {
		return true
	}
	if bashNarrowed {
		return false
	}
	for _, t := range pool.Tools() {
		switch t.Spec().Name {
		case tool.Bash, tool.KillShell, tool.TodoWrite, tool.ExitPlanMode, AgentToolName, tool.Task:
			continue
		}
		if !t.ReadOnly() {
			return false
		}
	}
	return true
}
