package transcript

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzScan: any bytes read as a transcript give entries and torn records
// or an error, never a panic; what Scan accepts, Messages turns into a
// conversation whose every tool call has a result.
func FuzzScan(f *testing.F) {
	good := `{"type":"user","sessionId":"s","timestamp":"x","message":{"role":"user","content":[{"type":"text","text":"a"}]}}`
	use := `{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}]}}`
	for _, seed := range []string{"", good, good + "\n" + use, good + "\n" + use + "\n" + `{"type":"us`, good + "\n{\"type\":\n" + good + "\n", "garbage\n", "[1]\n", "{} {}\n"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, torn, err := Scan(bytes.NewReader(data))
		if err != nil {
			if entries != nil || torn != nil {
				t.Fatal("results with an error")
			}
			return
		}
		lines := strings.Count(string(data), "\n") + 1
		for _, tr := range torn {
			if tr.Line < 1 || tr.Line > lines || tr.Bytes <= 0 {
				t.Fatalf("torn %+v of %d lines", tr, lines)
			}
		}
		msgs := Messages(entries)
		if again, n := CloseInterrupted(msgs); n != 0 || len(again) != len(msgs) {
			t.Fatalf("Messages left %d calls without results", n)
		}
	})
}
