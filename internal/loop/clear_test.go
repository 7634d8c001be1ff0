package loop

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/tool"
)

// clearRun runs five large R calls in the 8,000-token window (warning at
// 4,000, compaction at 5,000): the fifth answer passes the warning.
func clearRun(t *testing.T, c *Compaction) (*fakeModel, []Event) {
	t.Helper()
	big := strings.Repeat("x", 3000) // ~750 tokens of result each
	var turns []func(*llm.Request) (*llm.Response, error)
	for i, size := range []int64{1000, 1500, 2000, 2500, 4100} {
		turns = append(turns, sized(size, use(fmt.Sprintf("t%d", i+1), "R", `{"text":"`+big+`"}`)))
	}
	turns = append(turns, sized(2000, llm.TextBlock("done")))
	m := &fakeModel{turns: turns}
	res, evs, err := run(t, context.Background(), Config{Model: m, Tools: tool.NewPool(echo("R", true)), Compaction: c}, "go")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "done" || len(m.reqs) != 6 {
		t.Fatalf("text %q after %d requests", res.Text, len(m.reqs))
	}
	for _, ev := range evs {
		if ev.Kind == CompactStart {
			t.Fatal("a full compaction ran")
		}
	}
	return m, evs
}

// clearedIn returns which tool results of req were cleared, in order.
func clearedIn(req *llm.Request) []bool {
	var out []bool
	for _, m := range req.Messages {
		for _, b := range m.Content {
			if b.Type == llm.BlockToolResult {
				out = append(out, strings.HasPrefix(b.ResultText(), prompts.ClearedToolResultPrefix))
			}
		}
	}
	return out
}

func TestClearResultsPastWarning(t *testing.T) {
	t.Parallel()
	c := compaction()
	c.ClearResults, c.ClearMinSavings = true, 1000
	m, _ := clearRun(t, c)
	for i, req := range m.reqs[:5] {
		if got := clearedIn(req); strings.Contains(fmt.Sprint(got), "true") {
			t.Fatalf("request %d cleared before the warning: %v", i+1, got)
		}
	}
	last := m.reqs[5]
	if got := fmt.Sprint(clearedIn(last)); got != "[true true false false false]" {
		t.Fatalf("cleared results of the last request: %s", got)
	}
	for _, b := range last.Messages[2].Content {
		if !strings.Contains(b.ResultText(), "/t/a.jsonl") {
			t.Fatalf("marker without the transcript: %q", b.ResultText())
		}
	}
	// The calls stay as they were.
	if uses := last.Messages[1].ToolUses(); len(uses) != 1 || uses[0].ID != "t1" || !strings.Contains(string(uses[0].Input), "xxx") {
		t.Fatalf("first call changed: %+v", uses)
	}
}

func TestClearResultsNeedsTheSaving(t *testing.T) {
	t.Parallel()
	// Off: nothing is cleared.
	m, _ := clearRun(t, compaction())
	if got := fmt.Sprint(clearedIn(m.reqs[5])); strings.Contains(got, "true") {
		t.Fatalf("clearing off, yet cleared: %s", got)
	}
	// On, with the default floor (20,000 tokens): this saving is too small.
	c := compaction()
	c.ClearResults = true
	m, _ = clearRun(t, c)
	if got := fmt.Sprint(clearedIn(m.reqs[5])); strings.Contains(got, "true") {
		t.Fatalf("cleared for less than the floor: %s", got)
	}
}
