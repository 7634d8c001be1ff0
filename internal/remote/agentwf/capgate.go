package agentwf

import (
	"context"
	"sync"

	"go.temporal.io/sdk/worker"
)

// capGate holds a worker's --max-agents across its two queues. An agent
// whose tree the worker holds is one of its agents from its checkout to
// its finish, and its calls can go nowhere else; so the shared queue —
// checkouts, and the calls of agents without a tree — takes a call only
// while the trees held plus the shared queue's calls (reserved or
// running) are under the cap. The own queue needs no slot of its own: at
// most one call per tree runs at once (a sub-agent in its parent's tree
// runs while its parent waits), so its calls never outnumber the trees.
// Running calls of both queues together thus never exceed the cap, and
// an idle poll of one queue never holds a slot the other one needs.
type capGate struct {
	max int

	mu     sync.Mutex
	trees  int
	shared int
	// room is closed, and replaced, whenever a slot may have come free.
	room chan struct{}
}

func newCapGate(max int) *capGate { return &capGate{max: max, room: make(chan struct{})} }

// treeAdded and treeRemoved count the trees the worker holds.
func (g *capGate) treeAdded() {
	g.mu.Lock()
	g.trees++
	g.mu.Unlock()
}

func (g *capGate) treeRemoved() {
	g.mu.Lock()
	g.trees--
	g.wake()
	g.mu.Unlock()
}

// wake tells the waiters a slot may be free; g.mu is held.
func (g *capGate) wake() {
	close(g.room)
	g.room = make(chan struct{})
}

// take reserves a shared-queue slot if there is room.
func (g *capGate) take() (ok bool, room <-chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.trees+g.shared < g.max {
		g.shared++
		return true, nil
	}
	return false, g.room
}

func (g *capGate) give() {
	g.mu.Lock()
	g.shared--
	g.wake()
	g.mu.Unlock()
}

// sharedSlots is the shared queue's activity slot supplier.
type sharedSlots struct{ g *capGate }

func (s sharedSlots) ReserveSlot(ctx context.Context, _ worker.SlotReservationInfo) (*worker.SlotPermit, error) {
	for {
		ok, room := s.g.take()
		if ok {
			return &worker.SlotPermit{}, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-room:
		}
	}
}

func (s sharedSlots) TryReserveSlot(worker.SlotReservationInfo) *worker.SlotPermit {
	if ok, _ := s.g.take(); ok {
		return &worker.SlotPermit{}
	}
	return nil
}

func (sharedSlots) MarkSlotUsed(worker.SlotMarkUsedInfo) {}

func (s sharedSlots) ReleaseSlot(worker.SlotReleaseInfo) { s.g.give() }

func (s sharedSlots) MaxSlots() int { return s.g.max }
