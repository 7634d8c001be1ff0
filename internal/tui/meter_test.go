package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/run"
)

// TestContextMeter: each agent's context meter follows its latest answer
// and drops at a compaction (where the conversation shows its line); the
// main agent's is in the status bar, a child's in its tree row.
func TestContextMeter(t *testing.T) {
	t.Parallel()
	m := testModel(t, 120, 40, nil)
	typeText(m, "audit it")
	press(m, "enter")
	f := &feeder{m: m, at: t0}
	c1 := agentCall("toolu_a1", "Explore", "map the code", "Map it.")
	f.ev(initEvent(),
		run.Event{Type: run.EventAssistant, Message: assistant("", c1.Call), Usage: usage(3000, 120), Context: run.ContextUse{Tokens: 50_000, Window: 200_000, CompactAt: 167_000}},
		*c1,
		task("a1f0000000000001", "Explore", "map the code", "main", "toolu_a1", 1, "claude-haiku-4-5"),
		run.Event{Type: run.EventAssistant, AgentID: "a1f0000000000001", Message: assistant("looking"), Usage: usage(4100, 60), Context: run.ContextUse{Tokens: 6_000, Window: 8_000}},
	)
	f.tick(100 * time.Millisecond)
	child := m.tree.Get("a1f0000000000001")
	if child.Context != 6_000 || child.Window != 8_000 || m.tree.Main().Context != 50_000 {
		t.Fatalf("child %+v main %+v", child, m.tree.Main())
	}
	scr := screen(t, m)
	if !strings.Contains(scr, "ctx 50k/200k (25%)") {
		t.Fatalf("no main meter in the status bar:\n%s", scr)
	}
	if got := nodeStats(child, f.at); !strings.Contains(got, "ctx 6k/8k (75%)") {
		t.Fatalf("child row stats %q", got)
	}
	f.ev(run.Event{Type: run.EventCompactBoundary, AgentID: "a1f0000000000001", Compact: &run.Compaction{Trigger: "auto", PreTokens: 6_000, PostTokens: 1_200}})
	if child.Context != 1_200 {
		t.Fatalf("after compaction the child's meter shows %d", child.Context)
	}
	if got := nodeStats(child, f.at); !strings.Contains(got, "ctx 1.2k/8k (15%)") {
		t.Fatalf("child row stats after compaction %q", got)
	}
	f.ev(run.Event{Type: run.EventCompactBoundary, Compact: &run.Compaction{Trigger: "manual", PreTokens: 50_000, PostTokens: 4_000}})
	f.tick(100 * time.Millisecond)
	scr = screen(t, m)
	if !strings.Contains(scr, "ctx 4k/200k (2%)") || !strings.Contains(scr, "Conversation compacted (manual): 50,000 → 4,000 tokens") {
		t.Fatalf("main meter or compaction line missing after /compact:\n%s", scr)
	}
}
