package prompts

import (
	"strings"
	"testing"
	"time"
)

// TestReportRenderTrailer pins the report's trailer lines: the agent id
// with its transcript, then tokens, tool uses (singular for one) and
// milliseconds.
func TestReportRenderTrailer(t *testing.T) {
	for _, c := range []struct {
		r    Report
		want string
	}{
		{Report{AgentID: "a1", AgentType: "general-purpose", Text: "x", TranscriptPath: "/s/agent-a1.jsonl", Tokens: 1234, ToolUses: 3, Duration: 1500 * time.Millisecond},
			"\nagent_id: a1 (transcript: /s/agent-a1.jsonl)\nusage: 1234 tokens, 3 tool uses, 1500 ms"},
		{Report{AgentID: "a2", AgentType: "Plan", Text: "x", ToolUses: 1}, "\nagent_id: a2\nusage: 0 tokens, 1 tool use, 0 ms"},
		{Report{AgentID: "a3", AgentType: "t", Text: "x", ToolUses: 0, Tokens: -1}, "\nagent_id: a3\nusage: -1 tokens, 0 tool uses, 0 ms"},
	} {
		got := c.r.Render()
		if !strings.HasSuffix(got, c.want) {
			t.Errorf("report ends %q, want %q", got[strings.LastIndex(got, "</agent-report>"):], c.want)
		}
		if head := "Report from sub-agent " + c.r.AgentID + " (" + c.r.AgentType + "): model output"; !strings.HasPrefix(got, head) {
			t.Errorf("report starts %q, want %q", got[:len(head)], head)
		}
	}
}

// TestReportRenderContinue: a report with Continue set ends with the
// SendMessage line, after everything else, and is otherwise the report
// without it; a one-shot report has no such line.
func TestReportRenderContinue(t *testing.T) {
	r := Report{AgentID: "a1", AgentType: "general-purpose", Text: "done", TranscriptPath: "/s/agent-a1.jsonl", Tokens: 5, ToolUses: 2,
		Worktree: &ReportWorktree{Path: "/w", Branch: "b", State: "kept"}}
	plain := r.Render()
	r.Continue = "a1"
	if got, want := r.Render(), plain+"\n"+ContinueWithSendMessage("a1"); got != want {
		t.Errorf("report with Continue:\n%s\nwant:\n%s", got, want)
	}
	one := Report{AgentID: "a2", AgentType: "Explore", Text: "x", OneShot: true}
	plain = one.Render()
	one.Continue = "a2"
	if got := one.Render(); got != plain {
		t.Errorf("one-shot report with Continue: %q, want %q", got, plain)
	}
}
