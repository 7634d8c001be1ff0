package engine

import (
	"strings"
	"sync"

	"github.com/cadre-dev/cadre/run"
)

// warnings is the session's log of record-keeping failures (issue 22,
// point 9): task-journal and transcript writes that failed without ending
// a run. The exactly-once promise of notifications rests on the task
// journal and a resume on the transcripts, so no such failure is dropped:
// each is logged once, and the next Result to be sent reports it,
// preceded by an EventWarning (so the CLI prints it on stderr). Logging
// never waits for a consumer, so it is safe wherever a write can fail,
// the consumer's own calls (Stop, Background) included.
type warnings struct {
	mu       sync.Mutex
	seen     map[string]bool
	list     []string
	reported int
}

// add logs msg once.
func (w *warnings) add(msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seen[msg] {
		return
	}
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	w.seen[msg] = true
	w.list = append(w.list, msg)
}

// mark notes msg as reported elsewhere (a run's own error), so it is not
// logged again.
func (w *warnings) mark(msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	w.seen[msg] = true
}

// take claims the warnings no earlier Result reported.
func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.list[w.reported:]
	w.reported = len(w.list)
	if len(out) == 0 {
		return nil
	}
	return append([]string(nil), out...)
}

// recordFailed logs a failed write of the session's record: what names
// the record ("task journal", "transcripts").
func (b *background) recordFailed(what string, err error) {
	msg := err.Error()
	if !strings.HasPrefix(msg, what) {
		msg = what + ": " + msg
	}
	b.warns.add(msg)
}

// sendWarnings sends the warnings no earlier Result reported as
// EventWarning, and returns them for the Result about to be sent.
func (s *runState) sendWarnings() []string {
	ws := s.rt.bg.warns.take()
	for _, w := range ws {
		s.sendFinal(run.Event{Type: run.EventWarning, Text: w})
	}
	return ws
}
