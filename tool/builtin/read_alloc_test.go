package builtin

import (
	"bufio"
	"fmt"
	"strings"
	"testing"
)

// TestSliceLinesAllocationsDoNotGrowPerLine guards that the lines Read
// shows share one arena: reading 400 lines costs a handful of
// allocations more than reading 10, not one per line (before: 1 per line).
func TestSliceLinesAllocationsDoNotGrowPerLine(t *testing.T) {
	var b strings.Builder
	for i := range 400 {
		fmt.Fprintf(&b, "line %d of the file, with some words in it\n", i)
	}
	text := b.String()
	allocs := func(limit int) float64 {
		return testing.AllocsPerRun(20, func() {
			lines, _, _, err := sliceLines(bufio.NewReaderSize(strings.NewReader(text), 4096), 1, limit, 2000)
			if err != nil || len(lines) != limit {
				t.Fatalf("%d lines, %v", len(lines), err)
			}
		})
	}
	few, many := allocs(10), allocs(400)
	t.Logf("10 lines: %.0f allocations, 400 lines: %.0f", few, many)
	if many-few > 12 {
		t.Fatalf("400 lines cost %.0f allocations more than 10: per-line allocations are back", many-few)
	}
}
