package cli

import (
	"bytes"
	"testing"

	"github.com/cadre-dev/cadre/run"
)

type recordingPrinter struct{ got []run.EventType }

func (r *recordingPrinter) event(ev run.Event) error { r.got = append(r.got, ev.Type); return nil }
func (r *recordingPrinter) fail(failure) error       { return nil }

// An EventWarning (a task-journal or transcript write that failed) is
// printed on stderr in every output format, and still handed on.
func TestWarningsGoToStderr(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	next := &recordingPrinter{}
	p := &warningPrinter{next: next, out: &stderr}
	for _, ev := range []run.Event{{Type: run.EventText, Text: "hi"}, {Type: run.EventWarning, Text: "task journal: closed"}} {
		if err := p.event(ev); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := stderr.String(), "cadre: warning: task journal: closed\n"; got != want {
		t.Errorf("stderr %q, want %q", got, want)
	}
	if len(next.got) != 2 {
		t.Errorf("handed on %v, want both events", next.got)
	}
}
