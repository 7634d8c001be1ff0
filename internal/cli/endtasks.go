package cli

import (
	"context"
	"fmt"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
)

// endTasks stops the background tasks a failed print run leaves live
// (running or queued for a slot) and writes how each ended before the
// run's result: the process ends after it, and a task killed without a
// word would be started and never reported (S-15.3: every task's end is
// told once). A task that ends on its own meanwhile is reported as it
// ended. It returns res with the ends counted.
func endTasks(ctx context.Context, rt *cadre.Runtime, pr printer, res run.Result) (run.Result, error) {
	// The stops wait for each task to end; their events wait in the
	// session's hub meanwhile (lifecycle events are never dropped there),
	// and Idle writes them all once none is live.
	stopCtx := context.WithoutCancel(ctx)
	for _, t := range rt.Tasks() {
		if !t.Status.Terminal() {
			_ = rt.Stop(stopCtx, t.ID) // it may have ended on its own, or with its parent
		}
	}
	for ev := range rt.Idle(stopCtx) {
		if ev.Type == run.EventTaskCompleted && ev.Subagent != nil && ev.AgentID != "" {
			switch ev.Subagent.Status {
			case task.Completed:
				res.Subagents.Completed++
			case task.Killed:
				res.Subagents.Killed++
			default:
				res.Subagents.Failed++
			}
		}
		if err := pr.event(ev); err != nil {
			return res, fmt.Errorf("write output: %w", err)
		}
	}
	return res, nil
}
