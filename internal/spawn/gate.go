package spawn

import (
	"context"
	"slices"
	"sync"

	"github.com/cadre-dev/cadre/prompts"
)

// Limits bound sub-agent spawning for a session (S-5.7). Zero fields take
// the defaults.
type Limits struct {
	// MaxDepth is how deep sub-agents may nest: the main agent is depth 0,
	// its children depth 1; an agent at MaxDepth cannot spawn.
	MaxDepth int
	// MaxRunning bounds the sub-agents running at once; calls beyond it
	// wait in a queue.
	MaxRunning int
	// MaxTotal bounds the sub-agents started in one session.
	MaxTotal int
}

// Default limits.
const (
	DefaultMaxDepth   = 3
	DefaultMaxRunning = 20
	DefaultMaxTotal   = 1000
)

// WithDefaults returns l with every zero or negative field set to its
// default.
func (l Limits) WithDefaults() Limits {
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxRunning <= 0 {
		l.MaxRunning = DefaultMaxRunning
	}
	if l.MaxTotal <= 0 {
		l.MaxTotal = DefaultMaxTotal
	}
	return l
}

// Limit names the limit that refused a spawn.
type Limit int

// The limits that refuse; the running cap queues instead.
const (
	LimitDepth Limit = iota + 1
	LimitTotal
)

// Refusal is a spawn the gate turned down.
type Refusal struct {
	Limit Limit
	// Depth is the calling agent's depth (LimitDepth).
	Depth int
	// Max is the limit's value.
	Max int
}

// Message is what the model is told: which limit, and not to retry.
func (r *Refusal) Message() string {
	if r.Limit == LimitDepth {
		return prompts.DepthLimit(r.Depth, r.Max)
	}
	return prompts.TotalLimit(r.Max)
}

// Gate is the one place every spawn path asks to start a child (S-5.7,
// S-15.4). A child over the depth limit or the session total is refused;
// any other gets a Ticket, which holds one of the MaxRunning slots at once
// or waits for one in a FIFO queue. A parent that waits for its own
// children gives its slot back meanwhile (Ticket.Suspend) and takes one
// again, ahead of the queue, when they are done (Ticket.Resume): only
// agents that are working hold slots, so nested spawns cannot deadlock
// the queue. Safe for concurrent use; counters never go negative.
type Gate struct {
	limits Limits

	mu       sync.Mutex
	running  int       // slots held
	total    int       // tickets admitted, less those withdrawn before they ran
	resumers []*Ticket // tickets taking their slot back; served first
	queue    []*Ticket // tickets waiting for their first slot
}

// NewGate returns a gate with limits l (zero fields take the defaults).
func NewGate(l Limits) *Gate { return &Gate{limits: l.WithDefaults()} }

// Limits returns the gate's limits, defaults applied.
func (g *Gate) Limits() Limits { return g.limits }

// Counts are the gate's counters at one moment.
type Counts struct {
	// Running counts slots held.
	Running int
	// Queued counts tickets waiting for their first slot; Resuming those
	// waiting to take their slot back.
	Queued, Resuming int
	// Total counts tickets admitted in the session, less those withdrawn
	// before they ran.
	Total int
}

// Counts returns the counters.
func (g *Gate) Counts() Counts {
	g.mu.Lock()
	defer g.mu.Unlock()
	return Counts{Running: g.running, Queued: len(g.queue), Resuming: len(g.resumers), Total: g.total}
}

// ticketState is where a ticket is.
type ticketState int

const (
	stQueued    ticketState = iota // waiting for its first slot
	stHolding                      // holds a slot
	stSuspended                    // its holder waits for children; no slot
	stResuming                     // waiting to take a slot back
	stDone                         // released or withdrawn
)

// Ticket is one admitted spawn. Its owner must call Release on every exit
// path; Release is idempotent.
type Ticket struct {
	g        *Gate
	position int
	// Guarded by g.mu:
	state    ticketState
	ready    chan struct{} // closed when a wait (Wait, Resume) is over
	suspends int
}

// Admit asks to start a child of an agent at parentDepth. It refuses a
// spawn over the depth limit or the session total; otherwise the ticket
// holds a slot at once or waits in the queue (see Ticket.Queued and
// Ticket.Wait).
func (g *Gate) Admit(parentDepth int) (*Ticket, *Refusal) {
	if parentDepth >= g.limits.MaxDepth {
		return nil, &Refusal{Limit: LimitDepth, Depth: parentDepth, Max: g.limits.MaxDepth}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.total >= g.limits.MaxTotal {
		return nil, &Refusal{Limit: LimitTotal, Max: g.limits.MaxTotal}
	}
	g.total++
	t := &Ticket{g: g, ready: make(chan struct{})}
	if g.running < g.limits.MaxRunning {
		// While anyone waits every slot is held, so taking a free one
		// never jumps the queue.
		g.running++
		t.state = stHolding
		close(t.ready)
		return t, nil
	}
	g.queue = append(g.queue, t)
	t.position = len(g.queue)
	return t, nil
}

// freeSlot hands a slot that was just given up to the next waiter —
// resumers first, then the queue — or frees it. g.mu must be held.
func (g *Gate) freeSlot() {
	var next *Ticket
	switch {
	case len(g.resumers) > 0:
		next, g.resumers = g.resumers[0], g.resumers[1:]
	case len(g.queue) > 0:
		next, g.queue = g.queue[0], g.queue[1:]
	default:
		g.running--
		return
	}
	next.state = stHolding
	close(next.ready)
}

// remove takes t out of list.
func remove(list []*Ticket, t *Ticket) []*Ticket {
	if i := slices.Index(list, t); i >= 0 {
		return slices.Delete(list, i, i+1)
	}
	return list
}

// Queued reports whether the ticket had to wait for a slot when admitted.
func (t *Ticket) Queued() bool { return t.position > 0 }

// Position is the ticket's 1-based place in the queue when admitted; 0
// when it got a slot at once.
func (t *Ticket) Position() int { return t.position }

// Wait returns once the ticket holds a slot (at once if it got one when
// admitted). If ctx ends first the ticket is withdrawn — the spawn never
// ran, so it does not count toward the session total — and Wait returns
// ctx's error.
func (t *Ticket) Wait(ctx context.Context) error {
	g := t.g
	g.mu.Lock()
	ready := t.ready
	g.mu.Unlock()
	select {
	case <-ready:
		if err := ctx.Err(); err == nil {
			return nil
		}
	case <-ctx.Done():
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch t.state {
	case stQueued:
		g.queue = remove(g.queue, t)
	case stHolding:
		g.freeSlot()
	default:
		return ctx.Err()
	}
	t.state = stDone
	g.total--
	return ctx.Err()
}

// Release gives the ticket's slot to the next waiter, or takes the ticket
// out of the queue it waits in. It is idempotent and safe on a nil ticket.
func (t *Ticket) Release() {
	if t == nil {
		return
	}
	g := t.g
	g.mu.Lock()
	defer g.mu.Unlock()
	switch t.state {
	case stQueued:
		g.queue = remove(g.queue, t)
		g.total-- // it never ran
	case stHolding:
		g.freeSlot()
	case stResuming:
		g.resumers = remove(g.resumers, t)
		close(t.ready)
	}
	t.state = stDone
}

// Suspend gives the slot back while the ticket's holder waits for its own
// children (an agent blocked in Agent calls does no work). Calls nest:
// the slot is given back by the first and taken again by the Resume that
// matches the last. Safe on a nil ticket (the main agent has none).
func (t *Ticket) Suspend() {
	if t == nil {
		return
	}
	g := t.g
	g.mu.Lock()
	defer g.mu.Unlock()
	t.suspends++
	switch t.state {
	case stHolding:
		t.state = stSuspended
		g.freeSlot()
	case stResuming:
		// A Resume is waiting for a slot the holder no longer needs: end
		// that wait without one.
		g.resumers = remove(g.resumers, t)
		t.state = stSuspended
		close(t.ready)
	}
}

// Resume ends one Suspend; the last one takes a slot again, waiting ahead
// of queued newcomers when none is free. It returns ctx's error if ctx
// ends first (the ticket then holds no slot; Release still ends it), and
// returns early without a slot if Suspend is called again meanwhile.
// Safe on a nil ticket.
func (t *Ticket) Resume(ctx context.Context) error {
	if t == nil {
		return nil
	}
	g := t.g
	g.mu.Lock()
	if t.suspends > 0 {
		t.suspends--
	}
	if t.suspends > 0 || t.state != stSuspended {
		g.mu.Unlock()
		return nil
	}
	if g.running < g.limits.MaxRunning {
		g.running++
		t.state = stHolding
		g.mu.Unlock()
		return nil
	}
	t.state = stResuming
	t.ready = make(chan struct{})
	ready := t.ready
	g.resumers = append(g.resumers, t)
	g.mu.Unlock()
	select {
	case <-ready:
		return nil
	case <-ctx.Done():
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if t.state == stResuming {
		g.resumers = remove(g.resumers, t)
		t.state = stSuspended
	}
	return ctx.Err()
}
