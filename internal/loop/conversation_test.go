package loop

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// TestToolsSeeTheConversation: a tool call sees the conversation up to the
// assistant message that made it (the Agent tool forks from it), and
// cannot append into the loop's own history.
func TestToolsSeeTheConversation(t *testing.T) {
	t.Parallel()
	call := use("t1", "Look", `{"text":"x"}`)
	m := &fakeModel{turns: []func(*llm.Request) (*llm.Response, error){answer(llm.TextBlock("looking"), call), answer(llm.TextBlock("ok"))}}
	var seen []llm.Message
	look := tool.Func(tool.FuncConfig{Name: "Look", Description: "Look", ReadOnly: true}, func(_ context.Context, env *tool.Env, _ echoIn) (tool.Output, error) {
		seen = env.Call.Conversation
		_ = append(seen, llm.UserText("must not reach the loop"))
		return tool.Output{Text: "seen"}, nil
	})
	hints := []llm.CacheHint{{Message: 0, Block: 0}}
	env := &tool.Env{Files: tool.NewFileState()}
	res, _, err := run(t, context.Background(), Config{Model: m, ModelID: "m", Tools: tool.NewPool(look), CacheHints: hints, Env: env}, "hi")
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Message{llm.UserText("hi"), {Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("looking"), call}}}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Fatalf("conversation the tool saw (-want +got):\n%s", diff)
	}
	if got := res.Messages[2]; got.Role != llm.RoleUser || got.Content[0].Type != llm.BlockToolResult {
		t.Fatalf("the tool's append reached the loop: %+v", got)
	}
	// Every request carries the hints.
	for i, req := range m.reqs {
		if diff := cmp.Diff(hints, req.CacheHints); diff != "" {
			t.Fatalf("request %d hints (-want +got):\n%s", i, diff)
		}
	}
	if env.Call.Conversation != nil || env.Call.ID != "" {
		t.Fatal("the call reached the agent's own Env; it belongs on the call's copy")
	}
}
