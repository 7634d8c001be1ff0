package engine

import (
	"testing"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/compact"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/run"
)

// TestAssistantEventsCarryContext: every answer's event says how full the
// agent's context is against its own window — the main agent's from the
// per-model setting (by id prefix), a child's from its definition's
// autoCompactWindow — for the TUI's context meter.
func TestAssistantEventsCarryContext(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	def, diags := agentdef.ParseFile("/defs/small.md", []byte("---\nname: small\ndescription: a small window\nautoCompactWindow: 8000\n---\nWork.\n"), agentdef.SourceProject)
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("small", "METER-CHILD: look")), llmtest.Text("main done"))
	h.srv.Script("METER-CHILD", llmtest.Text("child done"))
	cfg := h.config()
	cfg.Background = BackgroundOff
	cfg.Agents = append(agentdef.Builtins(), def)
	cfg.Compaction.Windows = map[string]int64{"claude-sonnet": 50_000, "gpt-": 9_000}
	evs, _, rt := mustRun(t, cfg, "MAIN: go")
	defer rt.Close()
	seen := map[string]int{}
	for _, ev := range evs {
		if ev.Type != run.EventAssistant {
			continue
		}
		want := int64(50_000)
		if ev.AgentID != "" {
			want = 8_000
		}
		c := ev.Context
		if c.Window != want || c.Tokens != compact.Size(ev.Usage) || c.Tokens == 0 || c.CompactAt <= 0 || c.CompactAt >= c.Window {
			t.Fatalf("agent %q: context %+v (usage %+v), want window %d", ev.AgentID, c, ev.Usage, want)
		}
		seen[ev.AgentID]++
	}
	if seen[""] != 2 || len(seen) != 2 {
		t.Fatalf("assistant events by agent %v", seen)
	}
}
