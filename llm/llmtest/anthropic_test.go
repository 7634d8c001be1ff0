package llmtest_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
)

func TestAnthropicText(t *testing.T) {
	for _, streamed := range []bool{false, true} {
		t.Run(map[bool]string{false: "json", true: "stream"}[streamed], func(t *testing.T) {
			s := newServer(t)
			long := strings.Repeat("héllo wörld ", 10)
			s.Script("", llmtest.Text(long))
			c := anthropicClient(s)
			params := userParams("say hello")
			params.System = []anthropic.TextBlockParam{{Text: "be brief"}}
			var msg anthropic.Message
			var err error
			if streamed {
				msg, err = streamAnthropic(t, c, params)
			} else {
				var m *anthropic.Message
				m, err = c.Messages.New(context.Background(), params)
				if m != nil {
					msg = *m
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(msg.Content) != 1 || msg.Content[0].Text != long {
				t.Fatalf("content = %+v", msg.Content)
			}
			if msg.StopReason != "end_turn" || msg.Model != "llmtest-model" || msg.Role != "assistant" {
				t.Errorf("stop %q model %q role %q", msg.StopReason, msg.Model, msg.Role)
			}
			if msg.Usage.OutputTokens != int64(len(long)/4) || msg.Usage.InputTokens <= 0 {
				t.Errorf("usage = %+v", msg.Usage)
			}
			reqs := s.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			r := reqs[0]
			if r.Protocol != llmtest.Anthropic || r.Path != "/v1/messages" || r.Stream != streamed || r.System != "be brief" ||
				r.MaxTokens != 512 || r.Model != "llmtest-model" || r.Turn != 1 || r.Status != 200 {
				t.Errorf("captured %+v", r)
			}
			if r.Header.Get("Anthropic-Version") == "" || !json.Valid(r.Body) {
				t.Errorf("header %v body %q", r.Header, r.Body)
			}
			if r.Finished.Before(r.Arrived) || r.Arrived.IsZero() {
				t.Errorf("times %v %v", r.Arrived, r.Finished)
			}
			if diff := cmp.Diff([]llm.Message{llm.UserText("say hello")}, r.Messages); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
			if r.Usage.OutputTokens != msg.Usage.OutputTokens || r.Usage.InputTokens != msg.Usage.InputTokens {
				t.Errorf("captured usage %+v, reported %+v", r.Usage, msg.Usage)
			}
			noViolations(t, s)
		})
	}
}

func TestAnthropicToolUseFromDeltas(t *testing.T) {
	s := newServer(t)
	input := map[string]any{"path": "/tmp/some/long/file/name.go", "limit": 10, "note": "ünïcödé"}
	s.Script("", llmtest.ToolUse("Read", input))
	body := mustMarshal(t, map[string]any{
		"model": "m", "max_tokens": 10, "stream": true,
		"messages": []any{map[string]any{"role": "user", "content": "read it"}},
	})
	res := post(t, s, "/v1/messages", body)
	if res.status != 200 || res.header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d header %v", res.status, res.header)
	}
	events := parseSSE(t, res.body)
	var names []string
	var partial strings.Builder
	deltas := 0
	for _, e := range events {
		names = append(names, e.name)
		if e.name == "content_block_delta" {
			if got := field(t, e.data, "delta", "type"); got != "input_json_delta" {
				t.Errorf("delta type %v", got)
			}
			partial.WriteString(field(t, e.data, "delta", "partial_json").(string))
			deltas++
		}
	}
	want := []string{"message_start", "ping", "content_block_start"}
	for range deltas {
		want = append(want, "content_block_delta")
	}
	want = append(want, "content_block_stop", "message_delta", "message_stop")
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if deltas < 2 {
		t.Errorf("input arrived in %d deltas, want several", deltas)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(partial.String()), &got); err != nil {
		t.Fatalf("joined input %q: %v", partial.String(), err)
	}
	if got["path"] != input["path"] || got["note"] != input["note"] {
		t.Errorf("input = %v", got)
	}
	start := events[2].data
	if field(t, start, "content_block", "id") != llmtest.ToolUseID("", 1) || field(t, start, "content_block", "name") != "Read" {
		t.Errorf("start = %s", start)
	}
	if field(t, events[len(events)-2].data, "delta", "stop_reason") != "tool_use" {
		t.Errorf("message_delta = %s", events[len(events)-2].data)
	}
	noViolations(t, s)
}

func TestAnthropicParallelToolUses(t *testing.T) {
	for _, streamed := range []bool{false, true} {
		s := newServer(t)
		s.Script("agent-x", llmtest.ToolUses(
			llmtest.Call{Name: "Read", Input: map[string]string{"path": "a.go"}},
			llmtest.Call{Name: "Grep", Input: map[string]string{"pattern": "func"}},
			llmtest.Call{ID: "toolu_custom", Name: "Glob", Input: json.RawMessage(`{"pattern":"*.go"}`)},
		), llmtest.ToolUse("Read", map[string]string{"path": "b.go"}))
		c := anthropicClient(s)
		params := userParams("you are agent-x")
		var msg anthropic.Message
		var err error
		if streamed {
			msg, err = streamAnthropic(t, c, params)
		} else {
			var m *anthropic.Message
			m, err = c.Messages.New(context.Background(), params)
			if m != nil {
				msg = *m
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		type use struct{ ID, Name, Input string }
		var got []use
		var results []anthropic.ContentBlockParamUnion
		for _, b := range msg.Content {
			u := b.AsToolUse()
			got = append(got, use{u.ID, u.Name, string(u.Input)})
			results = append(results, anthropic.NewToolResultBlock(u.ID, "ok", false))
		}
		want := []use{
			{llmtest.ToolUseID("agent-x", 1), "Read", `{"path":"a.go"}`},
			{llmtest.ToolUseID("agent-x", 2), "Grep", `{"pattern":"func"}`},
			{"toolu_custom", "Glob", `{"pattern":"*.go"}`},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("streamed=%v tool uses (-want +got):\n%s", streamed, diff)
		}
		params.Messages = append(params.Messages, msg.ToParam(), anthropic.NewUserMessage(results...))
		next, err := c.Messages.New(context.Background(), params)
		if err != nil {
			t.Fatal(err)
		}
		if id := next.Content[0].AsToolUse().ID; id != llmtest.ToolUseID("agent-x", 3) {
			t.Errorf("next id = %s", id)
		}
		r := s.RequestsFor("agent-x")[1]
		if n := len(r.Messages[2].Content); n != 3 || r.Messages[2].Content[0].Type != llm.BlockToolResult {
			t.Errorf("captured results = %+v", r.Messages[2])
		}
		noViolations(t, s)
	}
}

func TestAnthropicThinkingRoundTrip(t *testing.T) {
	for _, streamed := range []bool{false, true} {
		s := newServer(t)
		s.Script("",
			llmtest.Text("the answer").WithThinking("let me think it over carefully", "sig-abc123").WithRedactedThinking("opaque=="),
			llmtest.Text("done"),
		)
		c := anthropicClient(s)
		params := userParams("think")
		params.Thinking = anthropic.ThinkingConfigParamOfEnabled(2048)
		params.MaxTokens = 4096
		var msg anthropic.Message
		var err error
		if streamed {
			msg, err = streamAnthropic(t, c, params)
		} else {
			var m *anthropic.Message
			m, err = c.Messages.New(context.Background(), params)
			if m != nil {
				msg = *m
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(msg.Content) != 3 {
			t.Fatalf("content = %+v", msg.Content)
		}
		th := msg.Content[0].AsThinking()
		if th.Thinking != "let me think it over carefully" || th.Signature != "sig-abc123" {
			t.Errorf("thinking = %+v", th)
		}
		if rd := msg.Content[1].AsRedactedThinking(); rd.Data != "opaque==" {
			t.Errorf("redacted = %+v", rd)
		}
		if msg.Content[2].Text != "the answer" {
			t.Errorf("text = %q", msg.Content[2].Text)
		}
		params.Messages = append(params.Messages, msg.ToParam(), anthropic.NewUserMessage(anthropic.NewTextBlock("more")))
		if _, err := c.Messages.New(context.Background(), params); err != nil {
			t.Fatal(err)
		}
		r := s.Requests()[1]
		if !r.Thinking {
			t.Error("thinking not seen as requested")
		}
		want := []llm.Block{
			{Type: llm.BlockThinking, Thinking: "let me think it over carefully", Signature: "sig-abc123"},
			{Type: llm.BlockRedactedThinking, Data: "opaque=="},
			llm.TextBlock("the answer"),
		}
		if diff := cmp.Diff(want, r.Messages[1].Content); diff != "" {
			t.Errorf("streamed=%v sent back (-want +got):\n%s", streamed, diff)
		}
		noViolations(t, s)
	}
}

func TestAnthropicStopAndUsageOverride(t *testing.T) {
	s := newServer(t)
	u := llm.Usage{InputTokens: 7, OutputTokens: 9, CacheReadTokens: 5, CacheWriteTokens: 3}
	s.Script("", llmtest.Text("trunc").WithStop(llm.StopMaxTokens).WithUsage(u))
	msg, err := streamAnthropic(t, anthropicClient(s), userParams("x"))
	if err != nil {
		t.Fatal(err)
	}
	if msg.StopReason != "max_tokens" {
		t.Errorf("stop = %q", msg.StopReason)
	}
	got := llm.Usage{InputTokens: msg.Usage.InputTokens, OutputTokens: msg.Usage.OutputTokens, CacheReadTokens: msg.Usage.CacheReadInputTokens, CacheWriteTokens: msg.Usage.CacheCreationInputTokens}
	if got != u {
		t.Errorf("usage = %+v, want %+v", got, u)
	}
	if r := s.Requests()[0]; r.Usage != u {
		t.Errorf("captured usage = %+v", r.Usage)
	}
}

func TestCountTokensAndModels(t *testing.T) {
	s := newServer(t, llmtest.WithModels("model-b", "model-a"))
	c := anthropicClient(s)
	n, err := c.Messages.CountTokens(context.Background(), anthropic.MessageCountTokensParams{
		Model:    "m",
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(strings.Repeat("x", 400)))},
	})
	if err != nil {
		t.Fatal(err)
	}
	if n.InputTokens < 100 {
		t.Errorf("count = %d", n.InputTokens)
	}
	page, err := c.Models.List(context.Background(), anthropic.ModelListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 2 || page.Data[0].ID != "model-a" {
		t.Errorf("anthropic models = %+v", page.Data)
	}
	oc := openaiClient(s)
	opage, err := oc.Models.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(opage.Data) != 2 || opage.Data[1].ID != "model-b" || opage.Data[1].OwnedBy != "llmtest" {
		t.Errorf("openai models = %+v", opage.Data)
	}
	if s.Remaining("") != 0 || len(s.Requests()) != 3 || s.Requests()[0].Turn != 0 {
		t.Errorf("count_tokens consumed a turn: %+v", s.Requests()[0])
	}
	noViolations(t, s)
}
