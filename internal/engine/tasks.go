package engine

import (
	"context"
	"fmt"
	"iter"

	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
)

// TaskInfo is in event.go; the public task API of the session is here.

// Tasks lists every sub-agent task of the session, live or ended, in the
// order they started, with status and progress (S-7.2).
func (r *Runtime) Tasks() []task.Info { return r.bg.reg.List() }

// Task returns the task id.
func (r *Runtime) Task(id string) (task.Info, bool) { return r.bg.reg.Get(id) }

// RunningTasks counts the tasks that have not ended.
// Idle teammates with nothing to read are not counted (team.go).
func (r *Runtime) RunningTasks() int { return max(r.bg.reg.Live()-r.bg.team.resting(), 0) }

// PendingNotifications reports whether notifications wait for the main
// agent's next turn.
// Idle notices alone wait while a teammate is busy (team.go).
func (r *Runtime) PendingNotifications() bool { return r.bg.leadWakes() }

// RunNotifications is how the main agent hears from its background tasks
// while nobody prompts it (a headless run after its turn, an idle UI). It
// waits until a notification is queued for the main agent — streaming the
// events background agents send meanwhile — and then runs one turn of the
// main agent on every notification queued by then (EventInit ...
// EventResult, like Run). When no task is running and nothing is queued
// it yields nothing and returns at once, so a caller loops until it
// does:
//
//	for rt.RunningTasks() > 0 || rt.PendingNotifications() {
//		for ev, err := range rt.RunNotifications(ctx) { ... }
//	}
//
// Like Run, it must not run concurrently with Run.
func (r *Runtime) RunNotifications(ctx context.Context) iter.Seq2[run.Event, error] {
	return streamTurn(ctx, r, "", true)
}

// Stop stops the live task id (S-7.4): it cancels the agent, its
// descendants and their shells. A background task's parent then gets one
// "killed" notification; a foreground task's Agent call returns saying it
// was stopped. Stop returns once the task has ended.
func (r *Runtime) Stop(ctx context.Context, id string) error {
	if _, err := r.bg.reg.Stop(id); err != nil {
		return fmt.Errorf("cadre: stop: %w", err)
	}
	for {
		ch := r.bg.reg.Changed()
		if info, ok := r.bg.reg.Get(id); !ok || info.Status.Terminal() {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Background moves the running foreground sub-agent agentID to the
// background (S-7.4): its parent's Agent call returns at once with
// async_launched and the agent goes on; its end reaches the parent as a
// notification. It fails for an unknown agent and for one that has ended
// or already runs in the background.
func (r *Runtime) Background(_ context.Context, agentID string) error {
	r.bg.mu.Lock()
	h := r.bg.agents[agentID]
	r.bg.mu.Unlock()
	if h == nil || h.child == nil {
		return fmt.Errorf("cadre: background: no running agent %s", agentID)
	}
	if !r.bg.toBackground(h) {
		return fmt.Errorf("cadre: background: agent %s has ended or already runs in the background", agentID)
	}
	return nil
}
