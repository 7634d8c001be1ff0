package llm

import "testing"

func TestEffortValid(t *testing.T) {
	t.Parallel()
	for _, e := range Efforts() {
		if !e.Valid() {
			t.Errorf("%q is not valid", e)
		}
	}
	if n := len(Efforts()); n != 5 {
		t.Errorf("%d effort levels, want 5", n)
	}
	for _, e := range []Effort{"", "none", "minimal", "HIGH", "maximum"} {
		if e.Valid() {
			t.Errorf("%q is valid", e)
		}
	}
}
