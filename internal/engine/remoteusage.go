package engine

// A remote subtree's tokens in the run's totals (issues 26 and 28): the
// run's Result.Usage counts every model request of the run, a remote
// agent's and those of the agents it started on the worker included, as
// its cost (ModelUsage, CostUSD: runState.note) does.

import "github.com/cadre-dev/cadre/run"

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
