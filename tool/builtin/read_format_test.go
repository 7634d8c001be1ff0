package builtin

import (
	"fmt"
	"strings"
	"testing"
)

// TestWriteNumberedMatchesFmt: Read's line numbering writes what
// "%6d\t%s\n" writes, for short, six-digit and longer numbers.
func TestWriteNumberedMatchesFmt(t *testing.T) {
	for _, n := range []int{1, 9, 10, 99999, 100000, 999999, 1000000, 123456789} {
		var b strings.Builder
		writeNumbered(&b, n, "text\tmore")
		if want := fmt.Sprintf("%6d\t%s\n", n, "text\tmore"); b.String() != want {
			t.Errorf("line %d: got %q, want %q", n, b.String(), want)
		}
	}
}

// TestDisplayLineInvalidUTF8: a line that is not valid UTF-8 still shows
// its bad bytes as U+FFFD, as the rune round trip always did, and a valid
// line comes back unchanged.
func TestDisplayLineInvalidUTF8(t *testing.T) {
	if got := displayLine([]byte("ab\xffc\n"), 0, 100); got != "ab\uFFFDc" {
		t.Errorf("invalid UTF-8: got %q", got)
	}
	if got := displayLine([]byte("héllo\r\n"), 0, 100); got != "héllo" {
		t.Errorf("valid line: got %q", got)
	}
	if got := displayLine([]byte("héllo\n"), 0, 3); !strings.HasPrefix(got, "hél… [line truncated: 2 more characters]") {
		t.Errorf("cut line: got %q", got)
	}
}
