package spawn

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/llm"
)

func forkParent() llm.Request {
	use := func(id string) llm.Block {
		return llm.Block{Type: llm.BlockToolUse, ID: id, Name: "Agent", Input: json.RawMessage(`{"prompt":"` + id + `"}`)}
	}
	return llm.Request{
		Model: "m", System: "sys", Effort: "high", MaxTokens: 100, Thinking: &llm.Thinking{BudgetTokens: 10},
		Tools: []llm.ToolSpec{{Name: "Agent"}, {Name: "Read"}},
		Messages: []llm.Message{
			llm.UserText("plan it"),
			{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("forking"), use("t1"), {Type: llm.BlockToolUse, ID: "r1", Name: "Read", Input: json.RawMessage(`{}`)}, use("t2")}},
		},
	}
}

func TestBuildFork(t *testing.T) {
	parent := forkParent()
	in := ForkInput{Parent: parent, ToolUseID: "t2", Placeholder: "P", Rules: "RULES", Directive: "D2"}
	got, err := BuildFork(in)
	if err != nil {
		t.Fatal(err)
	}
	want := parent
	want.Messages = append(append([]llm.Message(nil), parent.Messages...), llm.Message{Role: llm.RoleUser, Content: []llm.Block{
		llm.ToolResultBlock("t1", "P", false), llm.ToolResultBlock("r1", "P", false), llm.ToolResultBlock("t2", "P", false),
		llm.TextBlock("RULES"), llm.TextBlock("D2"),
	}})
	want.CacheHints = []llm.CacheHint{{Message: 2, Block: 3}}
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}

	// A sibling's request is the same up to the directive.
	in.ToolUseID, in.Directive = "t1", "D1"
	sib, err := BuildFork(in)
	if err != nil {
		t.Fatal(err)
	}
	a, b := got.Messages[2].Content, sib.Messages[2].Content
	if diff := cmp.Diff(a[:len(a)-1], b[:len(b)-1]); diff != "" {
		t.Fatalf("siblings differ before the directive:\n%s", diff)
	}
	if diff := cmp.Diff(got.CacheHints, sib.CacheHints); diff != "" {
		t.Fatalf("siblings' hints differ:\n%s", diff)
	}

	// The parent's request is untouched, and appending to the fork's
	// messages cannot write into it.
	if diff := cmp.Diff(forkParent(), parent); diff != "" {
		t.Fatalf("parent changed:\n%s", diff)
	}
	_ = append(got.Messages[:2], llm.UserText("x"))
	_ = append(got.Tools[:1], llm.ToolSpec{Name: "x"})
	if parent.Tools[1].Name != "Read" || len(parent.Messages) != 2 {
		t.Fatal("fork shares writable slices with the parent")
	}
}

func TestBuildForkErrors(t *testing.T) {
	ok := ForkInput{Parent: forkParent(), ToolUseID: "t1", Placeholder: "P", Rules: "R", Directive: "D"}
	endsWithUser := ok
	endsWithUser.Parent.Messages = ok.Parent.Messages[:1]
	empty := ok
	empty.Parent.Messages = nil
	tests := []struct {
		name string
		in   ForkInput
		want string
	}{
		{"no conversation", empty, "no conversation"},
		{"last message is the user's", endsWithUser, "ends with a user message"},
		{"call not in the last message", func() ForkInput { x := ok; x.ToolUseID = "zz"; return x }(), `tool use "zz" is not`},
		{"call is not an Agent call id", func() ForkInput { x := ok; x.ToolUseID = ""; return x }(), `tool use "" is not`},
		{"empty directive", func() ForkInput { x := ok; x.Directive = ""; return x }(), "must not be empty"},
		{"empty rules", func() ForkInput { x := ok; x.Rules = ""; return x }(), "must not be empty"},
		{"empty placeholder", func() ForkInput { x := ok; x.Placeholder = ""; return x }(), "must not be empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := BuildFork(tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}
