package compact

// Breaker stops an agent whose context refills right after each
// compaction: Claude Code's thrash guard. A compaction that comes within
// Turns turns of the one before counts as a refill; Times refills in a
// row trip the breaker. The zero Breaker uses 3 and 3.
type Breaker struct {
	// Turns and Times are the guard's window and count; 0 means 3.
	Turns, Times int

	seen    bool // a compaction happened before
	last    int  // the turn of the last compaction
	refills int
}

// Compacted records a compaction at turn (the number of model requests
// the agent has made) and reports whether the breaker tripped: the
// context refilled within Turns turns Times times running.
func (b *Breaker) Compacted(turn int) bool {
	turns, times := b.Limits()
	if b.seen && turn-b.last <= turns {
		b.refills++
	} else {
		b.refills = 0
	}
	b.seen, b.last = true, turn
	return b.refills >= times
}

// Limits returns the window and count the breaker uses.
func (b *Breaker) Limits() (turns, times int) {
	turns, times = b.Turns, b.Times
	if turns == 0 {
		turns = 3
	}
	if times == 0 {
		times = 3
	}
	return turns, times
}
