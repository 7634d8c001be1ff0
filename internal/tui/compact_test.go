package tui

import (
	"testing"

	"github.com/cadre-dev/cadre/run"
)

// TestCompactInTheUI: /compact goes to the runtime as a prompt (it
// compacts the conversation), and the conversation shows where a
// compaction happened, per agent.
func TestCompactInTheUI(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	m := testModel(t, 100, 30, rec)
	typeText(m, "/compact keep the API names")
	_, cmd := m.Update(keyMsg("enter"))
	runCmds(t, m, cmd)
	if len(rec.started) != 1 || rec.started[0] != "/compact keep the API names" {
		t.Fatalf("started %q", rec.started)
	}
	f := &feeder{m: m, at: t0}
	f.ev(run.Event{Type: run.EventCompacting, Compact: &run.Compaction{Trigger: "manual"}},
		run.Event{Type: run.EventCompactBoundary, Compact: &run.Compaction{Trigger: "manual", PreTokens: 190000, PostTokens: 2700}})
	has(t, view(t, m), "Compacting the conversation (manual)…", "Conversation compacted (manual): 190,000 → 2,700 tokens")
	if got := compactionText(run.EventContextWarning, &run.Compaction{PreTokens: 150000, Threshold: 167000}); got != "Context at 150,000 tokens; it will be compacted at 167,000." {
		t.Fatalf("warning %q", got)
	}
	if thousands(999) != "999" || thousands(1000) != "1,000" || thousands(1234567) != "1,234,567" {
		t.Fatal("thousands")
	}
}
