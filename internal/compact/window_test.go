package compact

import "testing"

// TestWindowForPerModel: a per-model window by exact id, else by the
// longest key that begins the id, else the window for all, else the
// family's.
func TestWindowForPerModel(t *testing.T) {
	s := Settings{Window: 150_000, Windows: map[string]int64{"claude-": 100_000, "claude-haiku": 60_000, "claude-haiku-4-5": 50_000}}
	for model, want := range map[string]int64{
		"claude-haiku-4-5":          50_000,
		"claude-haiku-4-6-20261201": 60_000,
		"claude-sonnet-4-5":         100_000,
		"gpt-5":                     150_000,
	} {
		if got := s.WindowFor(model); got != want {
			t.Errorf("WindowFor(%q) = %d, want %d", model, got, want)
		}
	}
	if got := (Settings{Windows: map[string]int64{"gpt-": 9000}}).WindowFor("claude-opus-4"); got != 200_000 {
		t.Errorf("no matching key: %d, want the family's 200000", got)
	}
}
