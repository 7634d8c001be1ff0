package cadre

import (
	"cmp"

	"github.com/cadre-dev/cadre/hooks"
	"github.com/cadre-dev/cadre/task"
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
func (a *agent) liveBackgroundTasks() []hooks.BackgroundTask {
	var out []hooks.BackgroundTask
	for _, t := range liveBelow(a.run.rt.bg.reg.List(), a.name()) {
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

// liveBelow returns the live tasks of tasks (a registry's list) that
// descend from the agent named parent, in the list's order.
func liveBelow(tasks []task.Info, parent string) []task.Info {
	below := map[string]bool{parent: true}
	// Parents are usually listed before their children, but a resumed
	// agent is listed again at the end: repeat until the subtree stops
	// growing.
	for grown := true; grown; {
		grown = false
		for _, t := range tasks {
			if below[t.Parent] && !below[t.ID] {
				below[t.ID], grown = true, true
			}
		}
	}
	var out []task.Info
	for _, t := range tasks {
		if t.ID != parent && below[t.ID] && !t.Status.Terminal() {
			out = append(out, t)
		}
	}
	return out
}
