package engine

import (
	"context"
	"iter"

	"github.com/cadre-dev/cadre/internal/engine/hub"
	"github.com/cadre-dev/cadre/run"
)

// Idle streams what background agents send while the main agent has no
// turn running (their messages, task events and notifications), so a
// program that waits for its user can still show them. It returns when a
// notification waits for the main agent (then RunNotifications runs it at
// once), when no task is running, or when ctx ends; it never runs the
// main agent, so cancelling ctx (a user message arrived) loses nothing:
//
//	for rt.RunningTasks() > 0 && !rt.PendingNotifications() {
//		for ev := range rt.Idle(waitCtx) { ... }
//	}
//
// Like RunNotifications, it must not run concurrently with Run.
func (r *Runtime) Idle(ctx context.Context) iter.Seq[run.Event] {
	return func(yield func(run.Event) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		events := make(chan hub.Item, 64)
		go func() {
			defer close(events)
			// Events of background agents reach this stream while it
			// waits; it is detached (sends under way finish) before the
			// channel closes, as a run's is.
			r.bg.hub.Attach(ctx, events)
			defer r.bg.hub.Detach()
			r.bg.waitForNotes(ctx)
		}()
		for it := range events {
			if it.Err != nil {
				continue
			}
			if !yield(it.Ev) {
				cancel()
				for range events {
					// Drain until the waiter has detached.
				}
				return
			}
		}
	}
}
