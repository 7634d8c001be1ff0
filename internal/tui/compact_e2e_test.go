package tui_test

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
)

// TestTerminalUICompact: /compact TEXT in a real terminal compacts the
// main agent's conversation with the instructions: the conversation shows
// the compaction line, the status bar's context meter drops to the
// compacted size, and the next prompt continues from the summary alone.
func TestTerminalUICompact(t *testing.T) {
	bin, srv, p := setup(t)
	var summaries, compacted atomic.Int32
	srv.ScriptFunc("tui-compact", func(r *llmtest.Request) llmtest.Turn {
		first := ""
		if len(r.Messages) > 0 {
			first = r.Messages[0].Text()
		}
		switch {
		case len(r.Messages) >= 3 && strings.Contains(strings.ToLower(r.LastUserText()), "summary"):
			summaries.Add(1)
			return llmtest.Text("<summary>tui-compact: the user asked for the price list; it was given.</summary>")
		case strings.HasPrefix(first, "This conversation was compacted") || strings.Contains(first, "continued from a previous conversation"):
			compacted.Add(1)
			return llmtest.Text("Continuing from the **summary**.")
		}
		// A large context: the meter shows it, then its drop.
		return llmtest.Text("Here is the price list: apples 3, pears 4.").WithUsage(llm.Usage{InputTokens: 90_000, OutputTokens: 400})
	})

	tm := p.launch(t, bin)
	tm.waitFor("Ask anything", "default mode")
	tm.typeText("tui-compact: list the prices")
	tm.keys("Enter")
	tm.waitFor("Here is the price list: apples 3, pears 4.", "ctx 90.4k/200k (45%)")

	tm.typeText("/compact keep the prices of pears")
	tm.keys("Enter")
	// The line says the sizes before (estimated: a new turn has no answer
	// yet) and after; the meter shows the compacted size.
	screen := tm.waitFor("Conversation compacted (manual):", "tokens ──")
	if strings.Contains(screen, "ctx 90.4k/200k") || !strings.Contains(screen, "/200k (0%)") {
		t.Errorf("the context meter did not drop after the compaction:\n%s", screen)
	}

	tm.typeText("and now?")
	tm.keys("Enter")
	tm.waitFor("Continuing from the summary.")
	tm.keys("C-d")
	tm.waitFor("cadre exited 0")

	if summaries.Load() != 1 || compacted.Load() != 1 {
		t.Fatalf("%d summary requests, %d compacted requests; want 1 and 1", summaries.Load(), compacted.Load())
	}
	reqs := srv.RequestsFor("tui-compact")
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3 (answer, summary, continuation)", len(reqs))
	}
	if !strings.Contains(reqs[1].LastUserText(), "keep the prices of pears") {
		t.Errorf("the summary request lacks the /compact instructions:\n%s", reqs[1].LastUserText())
	}
	last := reqs[2]
	if len(last.Messages) != 1 || !strings.Contains(last.Messages[0].Text(), "the user asked for the price list") ||
		strings.Contains(last.Messages[0].Text(), "apples 3, pears 4") || !strings.Contains(last.Messages[0].Text(), "and now?") {
		t.Errorf("the continuation does not start from the summary alone: %d messages, first %q", len(last.Messages), last.Messages[0].Text())
	}
	if reqs[2].System != reqs[0].System {
		t.Error("the system prompt changed across the compaction")
	}
}
