package llmtest_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
)

// oaiComplete runs params streamed or not and returns the message, finish
// reason and usage.
func oaiComplete(t *testing.T, c openai.Client, params openai.ChatCompletionNewParams, streamed bool) (openai.ChatCompletionMessage, string, openai.CompletionUsage) {
	t.Helper()
	if streamed {
		params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		acc, err := streamOpenAI(t, c, params)
		if err != nil {
			t.Fatal(err)
		}
		if len(acc.Choices) != 1 {
			t.Fatalf("choices = %+v", acc.Choices)
		}
		return acc.Choices[0].Message, acc.Choices[0].FinishReason, acc.Usage
	}
	res, err := c.Chat.Completions.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	return res.Choices[0].Message, res.Choices[0].FinishReason, res.Usage
}

func TestOpenAIText(t *testing.T) {
	for _, streamed := range []bool{false, true} {
		s := newServer(t)
		long := strings.Repeat("chunky text ", 8)
		s.Script("", llmtest.Text(long))
		params := oaiParams("hello")
		params.Messages = append([]openai.ChatCompletionMessageParamUnion{openai.SystemMessage("be terse")}, params.Messages...)
		params.MaxCompletionTokens = openai.Int(100)
		msg, finish, usage := oaiComplete(t, openaiClient(s), params, streamed)
		if msg.Content != long || finish != "stop" {
			t.Errorf("streamed=%v content %q finish %q", streamed, msg.Content, finish)
		}
		if usage.CompletionTokens != int64(len(long)/4) || usage.PromptTokens <= 0 || usage.TotalTokens != usage.PromptTokens+usage.CompletionTokens {
			t.Errorf("usage = %+v", usage)
		}
		r := s.Requests()[0]
		if r.Protocol != llmtest.OpenAI || r.Path != "/v1/chat/completions" || r.System != "be terse" || r.MaxTokens != 100 || r.Stream != streamed {
			t.Errorf("captured %+v", r)
		}
		if diff := cmp.Diff([]llm.Message{llm.UserText("hello")}, r.Messages); diff != "" {
			t.Errorf("messages (-want +got):\n%s", diff)
		}
		noViolations(t, s)
	}
}

func TestOpenAIToolCalls(t *testing.T) {
	for _, streamed := range []bool{false, true} {
		s := newServer(t)
		s.Script("",
			llmtest.ToolUses(
				llmtest.Call{Name: "Read", Input: map[string]string{"path": "/a/long/path/to/file.go"}},
				llmtest.Call{Name: "Grep", Input: map[string]string{"pattern": "func main"}},
			),
			llmtest.Text("two files"),
		)
		c := openaiClient(s)
		params := oaiParams("look around")
		params.Tools = []openai.ChatCompletionToolUnionParam{
			openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "Read", Parameters: shared.FunctionParameters{"type": "object"}}),
			openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "Grep", Parameters: shared.FunctionParameters{"type": "object"}}),
		}
		msg, finish, _ := oaiComplete(t, c, params, streamed)
		if finish != "tool_calls" || len(msg.ToolCalls) != 2 {
			t.Fatalf("streamed=%v finish %q calls %+v", streamed, finish, msg.ToolCalls)
		}
		type call struct{ ID, Name, Args string }
		var got []call
		for _, tc := range msg.ToolCalls {
			got = append(got, call{tc.ID, tc.Function.Name, tc.Function.Arguments})
		}
		want := []call{
			{llmtest.CallID("", 1), "Read", `{"path":"/a/long/path/to/file.go"}`},
			{llmtest.CallID("", 2), "Grep", `{"pattern":"func main"}`},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("streamed=%v calls (-want +got):\n%s", streamed, diff)
		}
		params.Messages = append(params.Messages, msg.ToParam(),
			openai.ToolMessage("contents of a", msg.ToolCalls[0].ID),
			openai.ToolMessage("grep output", msg.ToolCalls[1].ID))
		msg2, _, _ := oaiComplete(t, c, params, streamed)
		if msg2.Content != "two files" {
			t.Errorf("second = %q", msg2.Content)
		}
		r := s.Requests()[1]
		if diff := cmp.Diff([]string{"Read", "Grep"}, r.ToolNames()); diff != "" {
			t.Errorf("tools (-want +got):\n%s", diff)
		}
		results := r.LastToolResults()
		if len(results) != 2 || results[1].ToolUseID != llmtest.CallID("", 2) || results[1].ResultText() != "grep output" {
			t.Errorf("results = %+v", results)
		}
		if uses := r.Messages[1].ToolUses(); len(uses) != 2 || string(uses[0].Input) != `{"path":"/a/long/path/to/file.go"}` {
			t.Errorf("history uses = %+v", uses)
		}
		noViolations(t, s)
	}
}

func TestOpenAIRawStream(t *testing.T) {
	s := newServer(t)
	s.Script("", llmtest.Text("answer text here").WithThinking("reasoning goes here", "ignored"))
	body := mustMarshal(t, map[string]any{
		"model": "m", "stream": true, "stream_options": map[string]any{"include_usage": true}, "reasoning_effort": "high",
		"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "q"}}}},
	})
	res := post(t, s, "/v1/chat/completions", body)
	events := parseSSE(t, res.body)
	if last := events[len(events)-1]; last.data != "[DONE]" {
		t.Fatalf("last event %q", last.data)
	}
	var reasoning, content strings.Builder
	for _, e := range events[:len(events)-1] {
		if e.name != "" {
			t.Errorf("named event %q", e.name)
		}
		if field(t, e.data, "object") != "chat.completion.chunk" {
			t.Errorf("chunk %s", e.data)
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content          string `json:"content"`
					ReasoningContent string `json:"reasoning_content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(e.data), &chunk); err != nil {
			t.Fatal(err)
		}
		for _, c := range chunk.Choices {
			reasoning.WriteString(c.Delta.ReasoningContent)
			content.WriteString(c.Delta.Content)
		}
	}
	if reasoning.String() != "reasoning goes here" || content.String() != "answer text here" {
		t.Errorf("reasoning %q content %q", reasoning.String(), content.String())
	}
	usage := events[len(events)-2].data
	if field(t, usage, "usage", "completion_tokens") == nil || len(field(t, usage, "choices").([]any)) != 0 {
		t.Errorf("usage chunk %s", usage)
	}
	if !s.Requests()[0].Thinking {
		t.Error("reasoning_effort not seen as thinking")
	}
}
