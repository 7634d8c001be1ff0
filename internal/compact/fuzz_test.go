package compact

import (
	"strings"
	"testing"
)

// FuzzSummary: whatever the model answers, reading the summary never
// panics and returns a part of the answer.
func FuzzSummary(f *testing.F) {
	for _, s := range []string{"<analysis>a</analysis><summary>s</summary>", "<summary>", "</summary><summary>", "<analysis>", "plain", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, answer string) {
		got := Summary(answer)
		if strings.Contains(answer, "<summary>") {
			if !strings.Contains(answer, got) {
				t.Fatalf("Summary(%q) = %q, not a part of it", answer, got)
			}
		}
		if len(got) > len(answer) {
			t.Fatalf("Summary grew the answer: %q", got)
		}
	})
}
