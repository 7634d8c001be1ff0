package llmtest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
)

func TestAnthropicPromptCacheThroughSDK(t *testing.T) {
	s := newServer(t)
	s.ScriptFunc("", func(*llmtest.Request) llmtest.Turn { return llmtest.Text("ok") })
	c := anthropicClient(s)
	system := strings.Repeat("You are a careful agent. ", 40)
	params := func(sys string, msgs ...anthropic.MessageParam) anthropic.MessageNewParams {
		return anthropic.MessageNewParams{
			Model: "llmtest-model", MaxTokens: 100,
			System: []anthropic.TextBlockParam{{Text: sys, CacheControl: anthropic.NewCacheControlEphemeralParam()}},
			Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{
				Name: "Read", InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"path": map[string]any{"type": "string"}}},
			}}},
			Messages: msgs,
		}
	}
	usage := func(m *anthropic.Message) llm.Usage {
		return llm.Usage{InputTokens: m.Usage.InputTokens, CacheReadTokens: m.Usage.CacheReadInputTokens, CacheWriteTokens: m.Usage.CacheCreationInputTokens}
	}
	first := anthropic.NewUserMessage(anthropic.NewTextBlock("task one"))

	m1, err := c.Messages.New(context.Background(), params(system, first))
	if err != nil {
		t.Fatal(err)
	}
	u1 := usage(m1)
	if u1.CacheReadTokens != 0 || u1.CacheWriteTokens < int64(len(system)/4) || u1.InputTokens <= 0 {
		t.Fatalf("first usage %+v", u1)
	}

	// The same prefix again, streamed: it is read, nothing new is written.
	m2, err := streamAnthropic(t, c, params(system, first))
	if err != nil {
		t.Fatal(err)
	}
	u2 := usage(&m2)
	if u2.CacheReadTokens != u1.CacheWriteTokens || u2.CacheWriteTokens != 0 || u2.InputTokens != u1.InputTokens {
		t.Errorf("second usage %+v, first %+v", u2, u1)
	}

	// A growing conversation with a breakpoint on its last block reads the
	// earlier prefix and writes the new part.
	grown := params(system, first,
		anthropic.NewAssistantMessage(anthropic.NewTextBlock("ok")),
		anthropic.NewUserMessage(anthropic.ContentBlockParamUnion{OfText: &anthropic.TextBlockParam{Text: "task two", CacheControl: anthropic.NewCacheControlEphemeralParam()}}))
	m3, err := c.Messages.New(context.Background(), grown)
	if err != nil {
		t.Fatal(err)
	}
	u3 := usage(m3)
	if u3.CacheReadTokens != u1.CacheWriteTokens || u3.CacheWriteTokens <= 0 || u3.InputTokens != 0 {
		t.Errorf("grown usage %+v", u3)
	}

	// A changed system prompt (an earlier block) misses.
	m4, err := c.Messages.New(context.Background(), params(system+"!", first))
	if err != nil {
		t.Fatal(err)
	}
	if u4 := usage(m4); u4.CacheReadTokens != 0 || u4.CacheWriteTokens == 0 {
		t.Errorf("changed usage %+v", u4)
	}

	reqs := s.Requests()
	if reqs[1].Usage.CacheReadTokens != u2.CacheReadTokens || reqs[2].Breakpoints != 2 {
		t.Errorf("captured %+v / breakpoints %d", reqs[1].Usage, reqs[2].Breakpoints)
	}
	noViolations(t, s)
}

func TestTooManyBreakpointsThroughSDK(t *testing.T) {
	s := newServer(t)
	s.Script("", llmtest.Text("ok"))
	cached := func(s string) anthropic.ContentBlockParamUnion {
		return anthropic.ContentBlockParamUnion{OfText: &anthropic.TextBlockParam{Text: s, CacheControl: anthropic.NewCacheControlEphemeralParam()}}
	}
	params := userParams("x")
	params.System = []anthropic.TextBlockParam{{Text: "sys", CacheControl: anthropic.NewCacheControlEphemeralParam()}}
	params.Messages = []anthropic.MessageParam{anthropic.NewUserMessage(cached("a"), cached("b"), cached("c"), cached("d"))}
	c := anthropicClient(s)
	if _, err := c.Messages.New(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	wantViolation(t, s, "5 cache_control breakpoints")
}

func TestOpenAIAutomaticCache(t *testing.T) {
	s := newServer(t)
	s.ScriptFunc("", func(*llmtest.Request) llmtest.Turn { return llmtest.Text("ok") })
	c := openaiClient(s)
	p := oaiParams(strings.Repeat("a long shared prompt ", 20))
	_, _, u1 := oaiComplete(t, c, p, false)
	if u1.PromptTokensDetails.CachedTokens != 0 {
		t.Errorf("first cached %d", u1.PromptTokensDetails.CachedTokens)
	}
	_, _, u2 := oaiComplete(t, c, p, true)
	if u2.PromptTokensDetails.CachedTokens != u1.PromptTokens || u2.PromptTokens != u1.PromptTokens {
		t.Errorf("second usage %+v, first %+v", u2, u1)
	}
	if r := s.Requests()[1]; r.Usage.CacheReadTokens != u2.PromptTokensDetails.CachedTokens || r.Usage.InputTokens != 0 {
		t.Errorf("captured %+v", r.Usage)
	}
}

func TestTopLevelCacheControlAndMinimum(t *testing.T) {
	s := newServer(t, llmtest.WithMinCacheTokens(100))
	s.ScriptFunc("", func(*llmtest.Request) llmtest.Turn { return llmtest.Text("ok") })
	small := `{"model":"m","max_tokens":5,"cache_control":{"type":"ephemeral"},"messages":[{"role":"user","content":"short"}]}`
	large := `{"model":"m","max_tokens":5,"cache_control":{"type":"ephemeral"},"messages":[{"role":"user","content":"` + strings.Repeat("long ", 200) + `"}]}`
	for _, b := range []string{small, small, large, large} {
		if res := post(t, s, "/v1/messages", b); res.status != 200 {
			t.Fatalf("status %d", res.status)
		}
	}
	reqs := s.Requests()
	if reqs[0].Breakpoints != 1 {
		t.Errorf("top-level cache_control counted %d breakpoints", reqs[0].Breakpoints)
	}
	if u := reqs[1].Usage; u.CacheReadTokens != 0 || u.CacheWriteTokens != 0 {
		t.Errorf("a prefix under the minimum was cached: %+v", u)
	}
	if u2, u3 := reqs[2].Usage, reqs[3].Usage; u2.CacheWriteTokens < 250 || u3.CacheReadTokens != u2.CacheWriteTokens || u3.InputTokens != 0 {
		t.Errorf("large prefix: %+v then %+v", u2, u3)
	}
	noViolations(t, s)
}
