package engine

// A remote subtree's tokens in the run's totals (issues 26 and 28): the
// run's Result.Usage counts every model request of the run, a remote
// agent's and those of the agents it started on the worker included, as
// its cost (ModelUsage, CostUSD: runState.note) does.

import (
	"slices"

	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/run"
)

// tally adds the usage of one forwarded event of the remote subtree to
// the run's: a model's answer, or a compaction's summary request
// (compact.go counts a local agent's the same way). Events of a
// re-attached agent are replayed from its first (executor.Attacher):
// they count in the resumed run, as its cost counts them (docs/remote.md
// says why).
func (rr remoteRun) tally(ev run.Event) {
	if ev.Type == run.EventAssistant || ev.Type == run.EventCompactBoundary {
		rr.a.run.addUsage(ev.Usage)
	}
}

// typeBudgets puts into req the budgets of the agent types the remote
// child may start, from this session's definitions (their `budget`): the
// worker reads no definitions, and a sub-agent it starts reserves its
// type's as a local one does (agentwf prepareChild). None when the child
// has no Agent tool.
func (rr remoteRun) typeBudgets(req *executor.SpawnRequest) {
	if !slices.Contains(req.Ceiling.Tools, AgentToolName) {
		return
	}
	for name, d := range rr.a.run.rt.defs {
		if d == nil || d.Budget.IsZero() || (req.Ceiling.AgentTypes != nil && !slices.Contains(req.Ceiling.AgentTypes, name)) {
			continue
		}
		if req.TypeBudgets == nil {
			req.TypeBudgets = map[string]executor.Budget{}
		}
		req.TypeBudgets[name] = executor.Budget(d.Budget)
	}
}
