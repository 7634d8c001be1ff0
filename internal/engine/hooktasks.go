package engine

import (
	"cmp"

	"github.com/cadre-dev/cadre/hooks"
	"github.com/cadre-dev/cadre/tool/builtin"
)

// Kinds of background work a Stop or SubagentStop hook sees in its input's
// background_tasks (S-14.2).
const (
	// hookTaskSubagent is a sub-agent still running below the agent.
	hookTaskSubagent = "subagent"
	// hookTaskShell is one of the agent's background shells still running.
	hookTaskShell = "shell"
)

// liveBackgroundTasks is the work a still agent leaves running when its
// model stops (the background_tasks of its Stop or SubagentStop input):
// every live task below it in the registry — its background children and
// theirs — and its own background shells still running. A foreground
// child cannot be running then (its parent waits for it), so these are
// the agent's background work.
func (hg hookGlue) liveBackgroundTasks() []hooks.BackgroundTask {
	a := hg.a
	var out []hooks.BackgroundTask
	for _, t := range a.run.rt.bg.reg.LiveBelow(a.name()) {
		out = append(out, hooks.BackgroundTask{ID: t.ID, Type: hookTaskSubagent, Status: string(t.Status),
			Description: t.Description, AgentType: t.AgentType})
	}
	if sh, ok := a.env.Shells.(*builtin.Shells); ok {
		for _, s := range sh.List() {
			if s.Status == builtin.ShellRunning {
				out = append(out, hooks.BackgroundTask{ID: s.ID, Type: hookTaskShell, Status: string(s.Status),
					Description: cmp.Or(s.Description, s.Command)})
			}
		}
	}
	return out
}
