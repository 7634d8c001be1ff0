package openai

import (
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
)

// A tool call whose streamed input passes llm.MaxToolInputBytes is not
// held: the block comes back with Input {} and InputOverLimit counting the
// bytes, and a call beside it keeps its input.
func TestToolInputOverLimitIsDropped(t *testing.T) {
	t.Parallel()
	s, m, _ := newScripted(t, Config{})
	huge := strings.Repeat("x", llm.MaxToolInputBytes+10)
	s.Script("task-huge", llmtest.ToolUses(
		llmtest.Call{Name: "Read", Input: map[string]string{"file_path": huge}},
		llmtest.Call{Name: "Glob", Input: map[string]string{"pattern": "*.go"}}))
	evs, err := collect(t, m, &llm.Request{Model: "gpt-test", Tools: testTools, Messages: []llm.Message{llm.UserText("task-huge")}})
	if err != nil {
		t.Fatal(err)
	}
	uses := done(t, evs).Message.ToolUses()
	if len(uses) != 2 {
		t.Fatalf("calls %+v", uses)
	}
	if string(uses[0].Input) != "{}" || uses[0].InputOverLimit <= llm.MaxToolInputBytes || uses[0].InvalidInput != "" {
		t.Fatalf("oversized call: input %.40s, over %d", uses[0].Input, uses[0].InputOverLimit)
	}
	if string(uses[1].Input) != `{"pattern":"*.go"}` || uses[1].InputOverLimit != 0 {
		t.Fatalf("the other call: %s %d", uses[1].Input, uses[1].InputOverLimit)
	}
}
