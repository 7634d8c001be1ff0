package compact

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/google/go-cmp/cmp"
)

func TestCompute(t *testing.T) {
	tests := []struct {
		name           string
		window, maxOut int64
		pct            float64
		want           Thresholds
	}{
		{"claude 200k, 32k answers", 200_000, 32_000, 0, Thresholds{Window: 200_000, Effective: 180_000, Compact: 167_000, Warn: 147_000}},
		{"small answer bound reserves less", 200_000, 8_192, 0, Thresholds{Window: 200_000, Effective: 191_808, Compact: 178_808, Warn: 158_808}},
		{"adapter chooses: full reserve", 200_000, 0, 0, Thresholds{Window: 200_000, Effective: 180_000, Compact: 167_000, Warn: 147_000}},
		{"percent lowers", 200_000, 32_000, 50, Thresholds{Window: 200_000, Effective: 180_000, Compact: 90_000, Warn: 70_000}},
		{"percent cannot raise", 200_000, 32_000, 99, Thresholds{Window: 200_000, Effective: 180_000, Compact: 167_000, Warn: 147_000}},
		{"8k test window scales the margins", 8_000, 32_000, 0, Thresholds{Window: 8_000, Effective: 6_000, Compact: 5_000, Warn: 4_000}},
		{"no window", 0, 32_000, 0, Thresholds{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compute(tt.window, tt.maxOut, tt.pct)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("(-want +got)\n%s", diff)
			}
			if tt.window > 0 && !(0 <= got.Warn && got.Warn < got.Compact && got.Compact < got.Effective && got.Effective < got.Window) {
				t.Fatalf("thresholds out of order: %+v", got)
			}
		})
	}
}

func TestWindow(t *testing.T) {
	tests := map[string]int64{
		"claude-sonnet-4-5-20250929": 200_000,
		"claude-opus-4-5[1m]":        1_000_000,
		"gpt-4o-mini":                128_000,
		"gpt-4.1-nano":               1_047_576,
		"gpt-4":                      8_192,
		"gpt-5-codex":                400_000,
		"some-local-model":           DefaultWindow,
	}
	for model, want := range tests {
		if got := Window(model); got != want {
			t.Errorf("Window(%q) = %d, want %d", model, got, want)
		}
	}
	s := Settings{Window: 8000, Windows: map[string]int64{"m2": 9000}}
	if s.WindowFor("claude-x") != 8000 || s.WindowFor("m2") != 9000 || (Settings{}).WindowFor("claude-x") != 200_000 {
		t.Fatal("overrides not applied")
	}
	if !(Settings{}).Auto() || (Settings{DisableAuto: true}).Auto() || (Settings{Disable: true}).Auto() {
		t.Fatal("Auto switches")
	}
}

func TestPromptTooLong(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{&llm.APIError{Status: 400, Type: "invalid_request_error", Message: "prompt is too long: 210000 tokens > 200000 maximum"}, true},
		{fmt.Errorf("model request (turn 3): %w", &llm.APIError{Status: 400, Message: "This model's maximum context length is 128000 tokens"}), true},
		{&llm.APIError{Status: 400, Type: "context_length_exceeded", Message: "too big"}, true},
		{&llm.APIError{Status: 400, Type: "invalid_request_error", Message: "tools: unknown field"}, false},
		{&llm.APIError{Status: 500, Message: "prompt is too long"}, false},
		{errors.New("prompt is too long"), false},
		{nil, false},
	}
	for _, tt := range tests {
		if got := PromptTooLong(tt.err); got != tt.want {
			t.Errorf("PromptTooLong(%v) = %v", tt.err, got)
		}
	}
}

func user(blocks ...llm.Block) llm.Message { return llm.Message{Role: llm.RoleUser, Content: blocks} }
func asst(blocks ...llm.Block) llm.Message {
	return llm.Message{Role: llm.RoleAssistant, Content: blocks}
}

func TestSummaryRequest(t *testing.T) {
	base := llm.Request{Model: "m", System: "sys", Tools: []llm.ToolSpec{{Name: "Read"}}, MaxTokens: 100}
	use := llm.Block{Type: llm.BlockToolUse, ID: "t1", Name: "Read", Input: []byte(`{}`)}
	msgs := []llm.Message{user(llm.TextBlock("task")), asst(use), user(llm.ToolResultBlock("t1", "x", false))}
	req := SummaryRequest(base, msgs, "keep the numbers")
	if req.System != "sys" || len(req.Tools) != 1 || req.Model != "m" || req.MaxTokens != 100 {
		t.Fatalf("base changed: %+v", req)
	}
	if len(req.Messages) != 3 {
		t.Fatalf("instructions not joined to the last user message: %d messages", len(req.Messages))
	}
	last := req.Messages[2].Content
	if len(last) != 2 || last[0].Type != llm.BlockToolResult || last[1].Text != prompts.CompactInstructions("keep the numbers") {
		t.Fatalf("last message: %+v", last)
	}
	if len(msgs[2].Content) != 1 {
		t.Fatal("the caller's messages were changed")
	}
	// After an answer, the instructions are a message of their own.
	req = SummaryRequest(base, msgs[:2], "")
	if len(req.Messages) != 3 || req.Messages[2].Role != llm.RoleUser {
		t.Fatalf("no user message added: %+v", req.Messages)
	}
}

func TestTrim(t *testing.T) {
	use := func(id string) llm.Message {
		return asst(llm.Block{Type: llm.BlockToolUse, ID: id, Name: "Read", Input: []byte(`{}`)})
	}
	res := func(id string) llm.Message { return user(llm.ToolResultBlock(id, "x", false)) }
	msgs := []llm.Message{user(llm.TextBlock("task")), use("1"), res("1"), use("2"), res("2"), asst(llm.TextBlock("ok")), user(llm.TextBlock("more")), use("3"), res("3")}
	got := Trim(msgs)
	if len(got) >= len(msgs) || got[0].Content[0].Text != "task" {
		t.Fatalf("not trimmed: %d", len(got))
	}
	for i := 1; i < len(got); i++ {
		if got[i].Role == got[i-1].Role {
			t.Fatalf("roles do not alternate at %d", i)
		}
	}
	// No safe cut: unchanged.
	only := []llm.Message{user(llm.TextBlock("t")), use("1"), res("1"), use("2"), res("2")}
	if len(Trim(only)) != len(only) {
		t.Fatal("cut between a call and its result")
	}
}

func TestSummary(t *testing.T) {
	tests := map[string]string{
		"<analysis>thinking</analysis>\n<summary>\n1. Request: x\n</summary>": "1. Request: x",
		"<analysis>thinking</analysis> plain":                                 "plain",
		"just text":                                                           "just text",
		"<summary>unterminated":                                               "unterminated",
	}
	for in, want := range tests {
		if got := Summary(in); got != want {
			t.Errorf("Summary(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRebuild(t *testing.T) {
	var files []File
	for i := range 7 {
		files = append(files, File{Path: fmt.Sprintf("/w/f%d.go", i), Content: "package f"})
	}
	files[0].Content = strings.Repeat("é", MaxFileBytes) // 2 bytes a rune: must be cut on a boundary
	msgs := Rebuild("the summary", "/t/x.jsonl", Keep{
		Files:  files,
		Todos:  []prompts.CompactTodo{{Content: "a", Status: "pending"}},
		Tasks:  []prompts.CompactTask{{ID: "b1", Kind: "agent", Status: "running", Description: "d"}},
		Skills: []Skill{{Name: "pdf", Body: "b"}},
		Extra:  []string{"team: red", ""},
	})
	if len(msgs) != 1 || msgs[0].Role != llm.RoleUser {
		t.Fatalf("want one user message, got %+v", msgs)
	}
	var texts []string
	for _, b := range msgs[0].Content {
		texts = append(texts, b.Text)
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{"the summary", "/t/x.jsonl", "/w/f4.go", "pdf", "[pending] a", "b1 (agent, running)", "team: red", prompts.CompactContinue()} {
		if !strings.Contains(all, want) {
			t.Errorf("rebuilt conversation lacks %q", want)
		}
	}
	if strings.Contains(all, "/w/f5.go") {
		t.Error("more than MaxFiles files kept")
	}
	if !strings.Contains(texts[1], "cut short") || len(texts[1]) > MaxFileBytes+500 {
		t.Errorf("big file not capped: %d bytes", len(texts[1]))
	}
	if len(texts) != 1+MaxFiles+4+1 {
		t.Errorf("%d blocks", len(texts))
	}
	if texts[len(texts)-1] != prompts.CompactContinue() {
		t.Error("continuation not last")
	}
}

func TestBreaker(t *testing.T) {
	var b Breaker
	// Far apart: never trips.
	for turn := 10; turn <= 100; turn += 10 {
		if b.Compacted(turn) {
			t.Fatalf("tripped at %d with compactions 10 turns apart", turn)
		}
	}
	// Refilling within three turns, three times running, trips it.
	var c Breaker
	trips := []bool{}
	for _, turn := range []int{5, 7, 9, 12} {
		trips = append(trips, c.Compacted(turn))
	}
	if diff := cmp.Diff([]bool{false, false, false, true}, trips); diff != "" {
		t.Fatalf("(-want +got)\n%s", diff)
	}
	// A long stretch resets the count.
	var d Breaker
	for _, turn := range []int{1, 2, 3, 20, 21, 22} {
		if d.Compacted(turn) {
			t.Fatalf("tripped at %d", turn)
		}
	}
}

func TestScans(t *testing.T) {
	call := func(id, name, input string) llm.Block {
		return llm.Block{Type: llm.BlockToolUse, ID: id, Name: name, Input: []byte(input)}
	}
	msgs := []llm.Message{
		user(llm.TextBlock("task")),
		asst(call("1", "Read", `{"file_path":"/a"}`), call("2", "Read", `{"file_path":"/b"}`), call("s", "Skill", `{"skill":"pdf"}`)),
		user(llm.ToolResultBlock("1", "a", false), llm.ToolResultBlock("2", "no such file", true), llm.ToolResultBlock("s", "Use fill.py", false)),
		asst(call("3", "Read", `{"file_path":"/c"}`), call("4", "Read", `{"file_path":"/a"}`), call("5", "Edit", `{"file_path":"/d"}`)),
		user(llm.ToolResultBlock("3", "c", false), llm.ToolResultBlock("4", "a", false), llm.ToolResultBlock("5", "ok", false)),
	}
	if diff := cmp.Diff([]string{"/a", "/c"}, RecentReads(msgs, "Read", 5)); diff != "" {
		t.Errorf("RecentReads (-want +got)\n%s", diff)
	}
	if diff := cmp.Diff([]string{"/a"}, RecentReads(msgs, "Read", 1)); diff != "" {
		t.Errorf("RecentReads capped (-want +got)\n%s", diff)
	}
	if diff := cmp.Diff([]Skill{{Name: "pdf", Body: "Use fill.py"}}, InvokedSkills(msgs, "Skill")); diff != "" {
		t.Errorf("InvokedSkills (-want +got)\n%s", diff)
	}
}
