package compact

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/prompts"
)

// clearConv builds a conversation of tool calls whose results are the
// given sizes in bytes, each call its own turn.
func clearConv(names []string, sizes []int) []llm.Message {
	msgs := []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock("go")}}}
	for i, n := range sizes {
		id := "call" + string(rune('a'+i))
		msgs = append(msgs,
			llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockToolUse, ID: id, Name: names[i], Input: json.RawMessage(`{}`)}}},
			llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock(id, strings.Repeat("x", n), i%2 == 1)}})
	}
	return msgs
}

func TestClearOldResults(t *testing.T) {
	big := 4000 // 1,000 tokens
	tests := []struct {
		name    string
		names   []string
		sizes   []int
		keep    func(string) bool
		cleared []bool // per result
	}{
		{name: "the latest three kept", names: []string{"Read", "Bash", "Read", "Grep", "Read"}, sizes: []int{big, big, big, big, big},
			cleared: []bool{true, true, false, false, false}},
		{name: "small results kept", names: []string{"Read", "Bash", "Read", "Grep", "Read"}, sizes: []int{big, 100, big, big, big},
			cleared: []bool{true, false, false, false, false}},
		{name: "kept tools", names: []string{"Skill", "Bash", "Agent", "Grep", "Read", "Read"}, sizes: []int{big, big, big, big, big, big},
			keep: func(n string) bool { return n == "Skill" || n == "Agent" }, cleared: []bool{false, true, false, false, false, false}},
		{name: "too few results", names: []string{"Read", "Read"}, sizes: []int{big, big}, cleared: []bool{false, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs := clearConv(tt.names, tt.sizes)
			before, _ := json.Marshal(msgs)
			out, plan := ClearOldResults(msgs, KeepRecentResults, MinClearResultTokens, "/t/x.jsonl", tt.keep)
			if after, _ := json.Marshal(msgs); string(after) != string(before) {
				t.Fatal("the input conversation was modified")
			}
			if len(out) != len(msgs) {
				t.Fatalf("%d messages, want %d", len(out), len(msgs))
			}
			var n int
			var saved int64
			for i, want := range tt.cleared {
				res := out[2+2*i].Content[0]
				call := out[1+2*i].Content[0]
				if call.Type != llm.BlockToolUse || call.ID != res.ToolUseID {
					t.Fatalf("result %d: call %+v, result for %s", i, call, res.ToolUseID)
				}
				got := strings.HasPrefix(res.ResultText(), prompts.ClearedToolResultPrefix)
				if got != want {
					t.Errorf("result %d cleared = %v, want %v", i, got, want)
				}
				if res.IsError != (i%2 == 1) {
					t.Errorf("result %d lost its error flag", i)
				}
				if got {
					n++
					marker := prompts.ClearedToolResult("/t/x.jsonl", Estimate(strings.Repeat("x", tt.sizes[i])))
					if res.ResultText() != marker || !strings.Contains(marker, "/t/x.jsonl") {
						t.Errorf("result %d: %q", i, res.ResultText())
					}
					saved += Estimate(strings.Repeat("x", tt.sizes[i])) - Estimate(marker)
				} else if &out[2+2*i].Content[0] != &msgs[2+2*i].Content[0] {
					t.Errorf("result %d kept but copied", i)
				}
			}
			if plan.Cleared != n || plan.Saved != saved {
				t.Fatalf("plan %+v, want %d cleared saving %d", plan, n, saved)
			}
			// Clearing again finds nothing new.
			if _, again := ClearOldResults(out, KeepRecentResults, MinClearResultTokens, "/t/x.jsonl", tt.keep); again.Cleared != 0 || again.Saved != 0 {
				t.Fatalf("second clearing %+v", again)
			}
		})
	}
}

func TestClearedMarkerWithoutTranscript(t *testing.T) {
	m := prompts.ClearedToolResult("", 1234)
	if !strings.HasPrefix(m, prompts.ClearedToolResultPrefix) || strings.Contains(m, "transcript") || !strings.Contains(m, "1234") {
		t.Fatalf("marker %q", m)
	}
}
