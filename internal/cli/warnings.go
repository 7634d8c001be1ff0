package cli

import (
	"fmt"
	"io"

	"github.com/cadre-dev/cadre/run"
)

// warningPrinter writes each EventWarning (a task-journal or transcript
// write that failed, issue 22) to stderr, whatever the output format,
// then hands the event on.
type warningPrinter struct {
	next printer
	out  io.Writer
}

func (w *warningPrinter) event(ev run.Event) error {
	if ev.Type == run.EventWarning {
		fmt.Fprintf(w.out, "cadre: warning: %s\n", ev.Text)
	}
	return w.next.event(ev)
}

func (w *warningPrinter) fail(f failure) error { return w.next.fail(f) }

func (w *warningPrinter) inner() printer { return w.next }

// basePrinter is the printer under the wrappers that only add to it
// (--debug's, the warnings'), whose own methods (everyResult,
// interrupted) say what the output format does.
func basePrinter(pr printer) printer {
	for {
		w, ok := pr.(interface{ inner() printer })
		if !ok {
			return pr
		}
		pr = w.inner()
	}
}
