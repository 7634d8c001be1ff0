// Package hub carries the events of agents that may outlive a turn to
// the stream going on (a Run, RunNotifications or Idle), and keeps them,
// bounded, while no stream is attached.
package hub

import (
	"context"
	"slices"
	"sync"

	"github.com/cadre-dev/cadre/run"
)

// Item is one element of a run's merged event stream: an event, or the
// error that ends the stream.
type Item struct {
	Ev  run.Event
	Err error
}

// Hub is where events of agents that may outlive a turn go: to the stream
// of the Run (or RunNotifications, or Idle) going on. Between streams the
// events wait for the next stream, which gets them first and in order, so
// a consumer sees every task start, progress and end, and a task's
// messages and notification are not lost in the moment between two
// streams (an SDK session switches streams while children run). What
// waits stays bounded: streaming text pieces are dropped (the message they
// make up is kept), progress is kept only as each task's latest, and past
// maxHeld events the oldest that is not a task lifecycle event or a
// notification goes first (a task's state is always in the registry).
// Sends never meet a closed channel: a stream detaches (waiting for sends
// under way) before its channel is closed.
type Hub struct {
	mu   sync.RWMutex
	ch   chan Item
	held []run.Event // events sent while no stream was attached, or while attach flushed
	// flushing is true while attach sends what was held: every event
	// is held then, so the stream gets them in order.
	flushing bool
}

// maxHeld bounds the events a Hub keeps between streams.
const maxHeld = 2048

// Attach makes ch the stream events go to, first sending it what was
// held. It sends without the lock, so an agent's send never waits behind
// a consumer that waits for that agent.
func (h *Hub) Attach(ctx context.Context, ch chan Item) {
	for {
		h.mu.Lock()
		batch := h.held
		h.held = nil
		if len(batch) == 0 || ctx.Err() != nil {
			h.ch, h.flushing = ch, false
			h.mu.Unlock()
			return
		}
		h.flushing = true
		h.mu.Unlock()
		for _, ev := range batch {
			select {
			case ch <- Item{Ev: ev}:
			case <-ctx.Done():
			}
		}
	}
}

// Detach stops sending to the stream; sends under way finish first.
func (h *Hub) Detach() {
	h.mu.Lock()
	h.ch = nil
	h.mu.Unlock()
}

// Send delivers ev to the attached stream, or holds it when none is; it
// fails only when ctx ends first.
func (h *Hub) Send(ctx context.Context, ev run.Event) error {
	for {
		if sent, err := h.sendAttached(ctx, &ev); sent {
			return err
		}
		if h.hold(ev) {
			return ctx.Err()
		}
		// A stream attached meanwhile: send it there.
	}
}

// sendAttached sends ev to the attached stream and reports true with
// Send's result, or false when no stream is attached. The read lock is
// held while the send waits (Detach waits for it). A frame of its own: a
// defer inside Send's loop was a heap allocation per event.
func (h *Hub) sendAttached(ctx context.Context, ev *run.Event) (bool, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	ch := h.ch
	if ch == nil {
		return false, nil
	}
	select {
	case ch <- Item{Ev: *ev}:
		return true, nil
	case <-ctx.Done():
		return true, ctx.Err()
	}
}

// hold keeps ev for the next stream as the hub's doc says and reports
// true; false when a stream is attached (the caller sends ev there).
func (h *Hub) hold(ev run.Event) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ch != nil {
		return false
	}
	if h.flushing {
		h.held = append(h.held, ev)
		return true
	}
	switch ev.Type {
	case run.EventText, run.EventThinking:
		return true
	case run.EventTaskProgress, run.EventTaskCompleted:
		// Only the latest progress of a task is worth showing.
		h.held = slices.DeleteFunc(h.held, func(x run.Event) bool { return x.Type == run.EventTaskProgress && x.AgentID == ev.AgentID })
	}
	h.held = append(h.held, ev)
	if len(h.held) > maxHeld {
		if i := slices.IndexFunc(h.held, func(x run.Event) bool { return !keptAlways(x.Type) }); i >= 0 {
			h.held = slices.Delete(h.held, i, i+1)
		}
	}
	return true
}

// keptAlways reports whether a held event of type t survives the hub's
// bound: task lifecycle events and notifications.
func keptAlways(t run.EventType) bool {
	switch t {
	case run.EventTaskPending, run.EventTaskStarted, run.EventTaskProgress, run.EventTaskCompleted, run.EventNotification:
		return true
	}
	return false
}
