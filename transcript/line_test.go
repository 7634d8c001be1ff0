package transcript

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm"
)

// TestEncodeLineIsMarshalAndNewline: a transcript line is the bytes
// json.Marshal makes of the entry (HTML characters escaped alike) and one
// '\n', whatever the encoder reused for it held before, and the caller's
// slice is its own.
func TestEncodeLineIsMarshalAndNewline(t *testing.T) {
	entries := []Entry{
		{Type: "user", SessionID: "s", AgentID: "a1", Timestamp: "2026-12-06T10:00:00Z",
			Message: &llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock("<b>&</b> \u2028 \"q\"")}}},
		{Type: "assistant", Message: &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock(strings.Repeat("x", 100<<10))}}},
		{Type: EntryRunEnd, RunEnd: &RunEnd{}},
		{Type: "user", Message: &llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock("short")}}},
	}
	var lines [][]byte
	for _, e := range entries {
		want, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		got, err := encodeLine(e)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, append(want, '\n')) {
			t.Fatalf("line differs from json.Marshal and a newline:\n%.200s\n%.200s", got, want)
		}
		lines = append(lines, got)
	}
	for i, e := range entries {
		want, _ := json.Marshal(e)
		if !bytes.Equal(lines[i], append(want, '\n')) {
			t.Errorf("line %d changed after later lines were encoded", i)
		}
	}
	if _, err := encodeLine(func() {}); err == nil {
		t.Error("a value JSON cannot encode gave no error")
	}
}
