package engine

import (
	"slices"

	"github.com/cadre-dev/cadre/tool"
)

// One stable order for every agent's tool list (issue 24, DESIGN.md
// "request bytes are deterministic"): a sub-agent is offered its parent's
// tools in the parent's order (spawn.go takes them from the parent's pool
// by the ceiling's names), and the tools only the main agent has come
// last. The tools before them are the prefix the main agent's requests
// share with its children's: the main agent's requests close it with a
// cache marker (llm.Request.SharedTools), so a child's first request
// reads it from the cache its parent wrote.

// mainOnlyTools are the tools only the main agent is offered: the task
// tools (a child cannot stop, read or message tasks) and the
// coordinator's ListAgents. A new main-only tool is added here so that it
// goes after the shared prefix.
var mainOnlyTools = []string{tool.TaskStop, tool.TaskOutput, tool.SendMessage, tool.ListAgents}

func isMainOnly(name string) bool { return slices.Contains(mainOnlyTools, name) }

// mainOnlyLast returns p with the main-only tools moved after the others,
// each group in its own order.
func mainOnlyLast(p *tool.Pool) *tool.Pool {
	ts := p.Tools()
	i := slices.IndexFunc(ts, func(t tool.Tool) bool { return isMainOnly(t.Spec().Name) })
	if i < 0 || !slices.ContainsFunc(ts[i:], func(t tool.Tool) bool { return !isMainOnly(t.Spec().Name) }) {
		return p // already in order
	}
	var shared, own []tool.Tool
	for _, t := range ts {
		if isMainOnly(t.Spec().Name) {
			own = append(own, t)
		} else {
			shared = append(shared, t)
		}
	}
	return tool.NewPool(append(shared, own...)...)
}

// sharedTools is how many leading tools of the pool a's requests offer
// (offered, deferred.go) its sub-agents share: for the main agent, the
// tools before its own, all of them when it has none (tools it loads later
// go after them, deferred.go); 0 (no marker of its own) for every other
// agent, whose whole list is what its children share.
func (su toolSetup) sharedTools(offered *tool.Pool) int {
	a := su.a
	if a.id != "" {
		return 0
	}
	i := slices.IndexFunc(offered.Tools(), func(t tool.Tool) bool { return isMainOnly(t.Spec().Name) })
	if i < 0 && su.defers() {
		return offered.Len()
	}
	return max(i, 0)
}
