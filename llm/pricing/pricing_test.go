package pricing

import (
	"math"
	"testing"

	"github.com/cadre-dev/cadre/llm"
)

func TestCost(t *testing.T) {
	tests := []struct {
		model string
		u     llm.Usage
		want  float64
		known bool
	}{
		// Claude Code 2.1.328 reported total_cost_usd 0.1656417 for exactly
		// this usage of claude-sonnet-4-5.
		{"claude-sonnet-4-5", llm.Usage{InputTokens: 6, OutputTokens: 159, CacheReadTokens: 57379, CacheWriteTokens: 38940}, 0.1656417, true},
		{"claude-sonnet-4-5-20250929", llm.Usage{InputTokens: 1_000_000}, 3, true},
		{"claude-opus-4-1", llm.Usage{OutputTokens: 1_000_000}, 75, true},
		{"claude-opus-4-5", llm.Usage{OutputTokens: 1_000_000}, 25, true},
		{"claude-haiku-4-5", llm.Usage{CacheReadTokens: 1_000_000, CacheWriteTokens: 1_000_000}, 0.1 + 1.25, true},
		{"claude-opus-4", llm.Usage{InputTokens: 1_000_000}, 15, true},
		{"claude-opus-4-0", llm.Usage{InputTokens: 1_000_000}, 15, true},
		{"qwen3-coder:30b", llm.Usage{InputTokens: 1_000_000}, 0, false},
		{"claude-sonnetx", llm.Usage{InputTokens: 1}, 0, false},
	}
	tab := Default()
	for _, tt := range tests {
		got, known := tab.Cost(tt.model, tt.u)
		if known != tt.known || math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("Cost(%s, %+v) = %v, %v; want %v, %v", tt.model, tt.u, got, known, tt.want, tt.known)
		}
	}
}

func TestLookupPrefersTheLongestId(t *testing.T) {
	tab := Default()
	p, ok := tab.Lookup("claude-opus-4-5-20251101")
	if !ok || p.Input != 5 {
		t.Fatalf("opus 4.5 dated: %+v %v", p, ok)
	}
	p, ok = tab.Lookup("claude-3-5-haiku-20241022")
	if !ok || p.Input != 0.8 || p.MaxOutputTokens != 8192 {
		t.Fatalf("3.5 haiku dated: %+v %v", p, ok)
	}
}

func TestWithOverrides(t *testing.T) {
	base := Default()
	tab := base.With(Table{"claude-sonnet-4-5": {Input: 1, Output: 2}, "my-local-model": {Input: 0.1}})
	if p, _ := tab.Lookup("claude-sonnet-4-5"); p.Input != 1 {
		t.Fatalf("override not applied: %+v", p)
	}
	if _, ok := tab.Lookup("my-local-model"); !ok {
		t.Fatal("added model missing")
	}
	if p, _ := base.Lookup("claude-sonnet-4-5"); p.Input != 3 {
		t.Fatalf("With changed the base table: %+v", p)
	}
	if err := (Price{Input: -1}).Validate(); err == nil {
		t.Fatal("negative price accepted")
	}
}
