package tool

import (
	"context"
	"sync"
)

// Sequence lets the calls of one batch, which run concurrently, each take
// one step in call order: call i's Turn.Await returns once every call
// before it has passed its turn (Turn.Done) or finished. The loop makes one
// per batch; the Agent tool takes its turn to join the spawn queue, so
// calls beyond the running cap start in the order they were made.
type Sequence struct {
	mu     sync.Mutex
	passed []bool
	next   int           // the first call that has not passed
	moved  chan struct{} // closed and replaced when next moves
}

// NewSequence returns a Sequence for n calls.
func NewSequence(n int) *Sequence {
	return &Sequence{passed: make([]bool, n), moved: make(chan struct{})}
}

// Pass marks call i's turn as taken (or the call as finished). Calling it
// again is harmless.
func (s *Sequence) Pass(i int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i < 0 || i >= len(s.passed) || s.passed[i] {
		return
	}
	s.passed[i] = true
	old := s.next
	for s.next < len(s.passed) && s.passed[s.next] {
		s.next++
	}
	if s.next != old {
		close(s.moved)
		s.moved = make(chan struct{})
	}
}

// wait blocks until every call before i has passed, or ctx ends.
func (s *Sequence) wait(ctx context.Context, i int) error {
	for {
		s.mu.Lock()
		ready, moved := s.next >= i, s.moved
		s.mu.Unlock()
		if ready {
			return nil
		}
		select {
		case <-moved:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Turn is a call's place among the calls of its batch; the zero Turn is
// a call outside any batch, which never waits.
type Turn struct {
	seq *Sequence
	i   int
}

// Turn returns the place of call i of the batch.
func (s *Sequence) Turn(i int) Turn { return Turn{s, i} }

// Await blocks until the calls made before this one (in the same batch)
// have taken their turn or finished; it returns at once outside a batch.
// The caller must call Done after its step.
func (t Turn) Await(ctx context.Context) error {
	if t.seq == nil {
		return nil
	}
	return t.seq.wait(ctx, t.i)
}

// Done passes this call's turn to the next call. Calling it again is
// harmless.
func (t Turn) Done() {
	if t.seq != nil {
		t.seq.Pass(t.i)
	}
}
