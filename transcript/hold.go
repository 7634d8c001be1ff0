package transcript

import (
	"sync/atomic"
	"time"
)

// Hold keeps the files of one starting agent unwritten until its first
// model request is out, and while other agents starting with it still
// build theirs (issue 24: creating a sub-agent's two files was the
// largest CPU item between its parent's answer and its children's first
// requests, on a machine where every core is busy building requests).
//
// Until Release, the journal keeps the ops for the hold's paths in memory,
// in order. After Release they are written when no other hold waits for
// its request any more (the burst of starting agents is over), or at the
// latest holdWait after the first release the others still wait behind
// (an agent that answered goes on writing its lines as they come).
// Sync and Close write every held op first, and Written those of the
// files it is asked about, so what they promise does not change; and a
// journal holding more than maxHeldOps ops writes them all.
//
// What a hold gives up: a process killed while an agent waits for its
// first answer leaves no file of that agent. Nothing is lost that a
// resume needs: the agent's prompt and type are in its parent's
// transcript (the Agent call), and the agent had said nothing yet. An
// agent that answered within its burst can lose up to holdWait of lines
// more than a line queued without a hold.
//
// Release is safe to call more than once and from any goroutine; a nil
// Hold does nothing.
type Hold struct {
	j *Journal
	// released is set by the first Release.
	released atomic.Bool

	// Owned by the journal's goroutine:
	paths []string
	ops   []journalOp
	// done is set once the goroutine saw the release.
	done bool
}

// maxHeldOps bounds the ops a journal keeps for holds; more are written.
const maxHeldOps = 4096

// holdWait bounds how long a released hold's ops wait for the other
// holds: about a burst of starting agents on a loaded machine, well under
// a model's first answer.
const holdWait = time.Second

// Hold starts holding the ops for paths (an agent's transcript and
// metadata) until Release. On a closed journal it holds nothing.
func (j *Journal) Hold(paths ...string) *Hold {
	h := &Hold{j: j, paths: paths}
	if err := j.send(journalOp{hold: h}); err != nil {
		h.released.Store(true)
	}
	return h
}

// Release lets the held ops be written (see Hold). The agent's first
// request is out, or it ended without one.
func (h *Hold) Release() {
	if h == nil || h.released.Swap(true) {
		return
	}
	// A closed journal wrote everything held already.
	_ = h.j.send(journalOp{hold: h, unhold: true})
}

// Released reports whether Release was called.
func (h *Hold) Released() bool { return h == nil || h.released.Load() }

// holds is the journal goroutine's record of the holds.
type holds struct {
	// by maps a held path to its hold.
	by map[string]*Hold
	// all are the registered holds, in no order.
	all map[*Hold]struct{}
	// waiting counts the registered holds not released yet.
	waiting int
	// ops counts the ops kept.
	ops int
	// timer runs while released holds wait for the others: they are
	// written when it fires.
	timer *time.Timer
}

// holdOp registers or releases a hold.
func (fs *files) holdOp(op journalOp) {
	hs := &fs.held
	h := op.hold
	if op.unhold {
		if _, ok := hs.all[h]; !ok || h.done {
			return
		}
		h.done = true
		hs.waiting--
		switch {
		case hs.waiting == 0:
			fs.flushAll() // every starting agent's request is out
		case hs.timer == nil && fs.j.holdWait > 0:
			hs.timer = time.NewTimer(fs.j.holdWait)
		}
		return
	}
	if hs.by == nil {
		hs.by, hs.all = map[string]*Hold{}, map[*Hold]struct{}{}
	}
	for _, p := range h.paths {
		if other := hs.by[p]; other != nil {
			// The path's earlier hold (an agent continued at once):
			// its ops go first.
			fs.writeHeld(other)
			if hs.by[p] == other {
				delete(hs.by, p)
			}
		}
	}
	for _, p := range h.paths {
		hs.by[p] = h
	}
	hs.all[h] = struct{}{}
	hs.waiting++
}

// kept reports whether op waits with its path's hold.
func (fs *files) kept(op journalOp) bool {
	hs := &fs.held
	h := hs.by[op.path]
	if h == nil {
		return false
	}
	h.ops = append(h.ops, op)
	hs.ops++
	if hs.ops > maxHeldOps {
		fs.flushAll()
	}
	return true
}

// writeHeld writes h's kept ops in order; a released hold is then forgotten.
func (fs *files) writeHeld(h *Hold) {
	hs := &fs.held
	ops := h.ops
	h.ops = nil
	hs.ops -= len(ops)
	for _, op := range ops {
		fs.do(op)
	}
	if h.done {
		for _, p := range h.paths {
			if hs.by[p] == h {
				delete(hs.by, p)
			}
		}
		delete(hs.all, h)
	}
}

// writeHeldFor writes the ops held for paths (their holds' ops).
func (fs *files) writeHeldFor(paths []string) {
	for _, p := range paths {
		if h := fs.held.by[p]; h != nil {
			fs.writeHeld(h)
		}
	}
	fs.stopTimer()
}

// flushAll writes every kept op.
func (fs *files) flushAll() {
	for h := range fs.held.all {
		fs.writeHeld(h)
	}
	fs.stopTimer()
}

// writeReleased writes the ops of the released holds.
func (fs *files) writeReleased() {
	for h := range fs.held.all {
		if h.done {
			fs.writeHeld(h)
		}
	}
}

// stopTimer stops the timer once no released hold waits.
func (fs *files) stopTimer() {
	hs := &fs.held
	if hs.timer == nil {
		return
	}
	for h := range hs.all {
		if h.done {
			return
		}
	}
	hs.timer.Stop()
	hs.timer = nil
}
