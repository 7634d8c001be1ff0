package telemetry

import (
	"strings"
	"testing"
)

// Child puts a span id into a W3C traceparent and leaves anything it
// cannot read as it was: whatever a spawn request carries, it never
// panics, and what it changes is the span id alone, to the id given.
func FuzzChild(f *testing.F) {
	f.Add("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "b7ad6b7169203331")
	f.Add("", "b7ad6b7169203331")
	f.Add("00-x-y", "short")
	f.Add("----", "0123456789abcdef")
	f.Fuzz(func(t *testing.T, parent, id string) {
		in := TraceContext{TraceParent: parent, TraceState: "k=v"}
		out := Child(in, id)
		if out.TraceState != in.TraceState {
			t.Fatalf("tracestate changed: %q", out.TraceState)
		}
		parts := strings.Split(parent, "-")
		if out == in {
			return // left as it was: nothing it could read
		}
		if len(parts) != 4 || len(id) != 16 || strings.Contains(id, "-") {
			t.Fatalf("Child(%q, %q) = %q, want it unchanged", parent, id, out.TraceParent)
		}
		got := strings.Split(out.TraceParent, "-")
		if len(got) != 4 || got[0] != parts[0] || got[1] != parts[1] || got[2] != id || got[3] != parts[3] {
			t.Fatalf("Child(%q, %q) = %q: only the span id may change", parent, id, out.TraceParent)
		}
	})
}

func TestChildNamesTheSpan(t *testing.T) {
	got := Child(TraceContext{TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}, "b7ad6b7169203331")
	if got.TraceParent != "00-4bf92f3577b34da6a3ce929d0e0e4736-b7ad6b7169203331-01" {
		t.Fatalf("traceparent %q", got.TraceParent)
	}
	if id := NewSpanID(); len(id) != 16 || id == NewSpanID() {
		t.Fatalf("span ids %q", id)
	}
}
