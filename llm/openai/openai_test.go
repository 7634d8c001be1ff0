package openai

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/llm"
)

// These tests need control of the exact bytes on the wire (how argument
// pieces are split and interleaved, error codes, a stream held open or
// ending early); the rest run against llmtest (llmtest_test.go).

func TestOneToolCall(t *testing.T) {
	f := newFake(t, new(sseBuilder).text("Looking.").
		call(0, "call_abc", "Read", "").args(0, `{"file_path":`).args(0, ` "/tmp/a"}`).
		finish("tool_calls").usage(10, 5, 0).done().serve())
	m, _ := newModel(t, f, Config{})
	req := simpleRequest()
	req.Tools = []llm.ToolSpec{{Name: "Read", Description: "read a file", InputSchema: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}`)}}
	evs, err := collect(t, m, req)
	if err != nil {
		t.Fatal(err)
	}
	var starts []llm.Block
	for _, ev := range evs {
		if ev.Kind == llm.EventToolUseStart {
			starts = append(starts, *ev.ToolUse)
		}
	}
	if diff := cmp.Diff([]llm.Block{{Type: llm.BlockToolUse, ID: "call_abc", Name: "Read"}}, starts); diff != "" {
		t.Errorf("starts (-want +got):\n%s", diff)
	}
	resp := done(t, evs)
	want := []llm.Block{
		llm.TextBlock("Looking."),
		{Type: llm.BlockToolUse, ID: "call_abc", Name: "Read", Input: json.RawMessage(`{"file_path":"/tmp/a"}`)},
	}
	if diff := cmp.Diff(want, resp.Message.Content); diff != "" {
		t.Errorf("content (-want +got):\n%s", diff)
	}
	if resp.StopReason != llm.StopToolUse {
		t.Errorf("stop = %s", resp.StopReason)
	}
	wantTools := []any{obj{"type": "function", "function": obj{
		"name": "Read", "description": "read a file",
		"parameters": obj{"type": "object", "properties": obj{"file_path": obj{"type": "string"}}, "required": []any{"file_path"}},
	}}}
	if diff := cmp.Diff(wantTools, f.requests()[0]["tools"]); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

func TestParallelToolCalls(t *testing.T) {
	// Three calls whose argument pieces arrive interleaved.
	f := newFake(t, new(sseBuilder).
		call(0, "call_a", "Glob", `{"pat`).
		call(1, "call_b", "Grep", "").
		call(2, "call_c", "Read", `{"file_path":"c"}`).
		args(1, `{"pattern":"x"}`).
		args(0, `tern":"*.go"}`).
		finish("tool_calls").usage(10, 5, 0).done().serve())
	m, _ := newModel(t, f, Config{})
	evs, err := collect(t, m, simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Block{
		{Type: llm.BlockToolUse, ID: "call_a", Name: "Glob", Input: json.RawMessage(`{"pattern":"*.go"}`)},
		{Type: llm.BlockToolUse, ID: "call_b", Name: "Grep", Input: json.RawMessage(`{"pattern":"x"}`)},
		{Type: llm.BlockToolUse, ID: "call_c", Name: "Read", Input: json.RawMessage(`{"file_path":"c"}`)},
	}
	if diff := cmp.Diff(want, done(t, evs).Message.Content); diff != "" {
		t.Errorf("content (-want +got):\n%s", diff)
	}
}

func TestHistoryTranslation(t *testing.T) {
	f := newFake(t, textReply("ok"))
	m, _ := newModel(t, f, Config{})
	req := &llm.Request{Model: "gpt-test", System: "sys", Effort: "low", Messages: []llm.Message{
		llm.UserText("do it"),
		{Role: llm.RoleAssistant, Content: []llm.Block{
			{Type: llm.BlockThinking, Thinking: "hmm", Signature: "sig"},
			llm.TextBlock("Running two."),
			{Type: llm.BlockToolUse, ID: "call_1", Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)},
			{Type: llm.BlockToolUse, ID: "call_2", Name: "Read", Input: json.RawMessage(`{}`), InvalidInput: `{"x`},
		}},
		{Role: llm.RoleUser, Content: []llm.Block{
			llm.ToolResultBlock("call_1", "a\nb", false),
			llm.TextBlock("also, hurry"),
			llm.ToolResultBlock("call_2", "no such file", true),
			llm.TextBlock("please"),
		}},
		{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockRedactedThinking, Data: "x"}}},
		llm.UserText("go on"),
	}}
	if _, err := collect(t, m, req); err != nil {
		t.Fatal(err)
	}
	r := f.requests()[0]
	want := []any{
		obj{"role": "system", "content": "sys"},
		obj{"role": "user", "content": "do it"},
		obj{"role": "assistant", "content": "Running two.", "tool_calls": []any{
			obj{"id": "call_1", "type": "function", "function": obj{"name": "Bash", "arguments": `{"command":"ls"}`}},
			obj{"id": "call_2", "type": "function", "function": obj{"name": "Read", "arguments": `{}`}},
		}},
		obj{"role": "tool", "tool_call_id": "call_1", "content": "a\nb"},
		obj{"role": "tool", "tool_call_id": "call_2", "content": "Error: no such file"},
		obj{"role": "user", "content": []any{obj{"type": "text", "text": "also, hurry"}, obj{"type": "text", "text": "please"}}},
		obj{"role": "user", "content": "go on"},
	}
	if diff := cmp.Diff(want, r["messages"]); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if r["reasoning_effort"] != "low" {
		t.Errorf("reasoning_effort = %v", r["reasoning_effort"])
	}
}

func TestMaxTokensField(t *testing.T) {
	tests := []struct {
		base, field, want string
	}{
		{"", "", FieldMaxCompletionTokens},
		{"https://api.openai.com/v1", "", FieldMaxCompletionTokens},
		{"http://localhost:11434/v1", "", FieldMaxTokens},
		{"https://openrouter.ai/api/v1", "", FieldMaxTokens},
		{"http://localhost:8000/v1", FieldMaxCompletionTokens, FieldMaxCompletionTokens},
	}
	for _, tt := range tests {
		m, err := New(Config{BaseURL: tt.base, MaxTokensField: tt.field})
		if err != nil {
			t.Fatal(err)
		}
		if m.maxField != tt.want {
			t.Errorf("%q %q: field %s, want %s", tt.base, tt.field, m.maxField, tt.want)
		}
		p, err := buildParams(&llm.Request{Model: "x", MaxTokens: 9}, m.maxField)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(p)
		if !strings.Contains(string(b), `"`+tt.want+`":9`) {
			t.Errorf("%q: body %s lacks %s", tt.base, b, tt.want)
		}
	}
	for _, cfg := range []Config{{MaxTokensField: "tokens"}, {BaseURL: "::"}, {RetryBase: time.Second, RetryMax: time.Millisecond}} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}

func TestUsageMapping(t *testing.T) {
	tests := []struct {
		name  string
		usage obj
		want  llm.Usage
	}{
		{"plain", obj{"prompt_tokens": 50, "completion_tokens": 9}, llm.Usage{InputTokens: 50, OutputTokens: 9}},
		{"cached", obj{"prompt_tokens": 50, "completion_tokens": 9, "prompt_tokens_details": obj{"cached_tokens": 32}},
			llm.Usage{InputTokens: 18, OutputTokens: 9, CacheReadTokens: 32}},
		{"cache write", obj{"prompt_tokens": 50, "completion_tokens": 9, "prompt_tokens_details": obj{"cached_tokens": 10, "cache_write_tokens": 30}},
			llm.Usage{InputTokens: 10, OutputTokens: 9, CacheReadTokens: 10, CacheWriteTokens: 30}},
		{"inconsistent", obj{"prompt_tokens": 5, "completion_tokens": 1, "prompt_tokens_details": obj{"cached_tokens": 32}},
			llm.Usage{InputTokens: 0, OutputTokens: 1, CacheReadTokens: 32}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := new(sseBuilder).text("x").finish("stop")
			s.data(obj{"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": []any{}, "usage": tt.usage}).done()
			f := newFake(t, s.serve())
			m, _ := newModel(t, f, Config{})
			evs, err := collect(t, m, simpleRequest())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, done(t, evs).Usage); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestFinishReasons(t *testing.T) {
	tests := []struct {
		finish string
		calls  bool
		want   llm.StopReason
	}{
		{"stop", false, llm.StopEndTurn},
		{"tool_calls", true, llm.StopToolUse},
		{"length", false, llm.StopMaxTokens},
		{"length", true, llm.StopMaxTokens},
		{"content_filter", false, llm.StopRefusal},
		{"stop", true, llm.StopToolUse}, // servers that say stop after tool calls
		{"eos", false, llm.StopEndTurn},
	}
	for _, tt := range tests {
		if got := stopReason(tt.finish, tt.calls); got != tt.want {
			t.Errorf("stopReason(%q, %v) = %s, want %s", tt.finish, tt.calls, got, tt.want)
		}
	}
}

func TestReasoningDeltas(t *testing.T) {
	s := new(sseBuilder)
	s.data(chunk(obj{"role": "assistant", "reasoning_content": "thinking..."}, nil))
	s.data(chunk(obj{"reasoning": " more"}, nil))
	f := newFake(t, s.text("answer").finish("stop").done().serve())
	m, _ := newModel(t, f, Config{})
	evs, err := collect(t, m, simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	var thinking string
	for _, ev := range evs {
		if ev.Kind == llm.EventThinkingDelta {
			thinking += ev.Text
		}
	}
	if thinking != "thinking... more" {
		t.Errorf("thinking = %q", thinking)
	}
	if diff := cmp.Diff([]llm.Block{llm.TextBlock("answer")}, done(t, evs).Message.Content); diff != "" {
		t.Errorf("content (-want +got):\n%s", diff)
	}
}

func TestFaultsRecovered(t *testing.T) {
	// The faults llmtest makes (status codes, an error chunk, a cut
	// mid-event) are in TestScriptedFaults; these need exact bytes.
	noFinish := new(sseBuilder).text("lost").done().serve()
	tests := []struct {
		name       string
		fault      reply
		wantStatus int
		minWait    time.Duration
	}{
		{"429 retry-after only", status(429, "rate_limit_exceeded", "slow down", "Retry-After", "3"), 429, 3 * time.Second},
		{"429 retry-after-ms only", status(429, "rate_limit_exceeded", "slow down", "Retry-After-Ms", "1500"), 429, 1500 * time.Millisecond},
		{"end before finish_reason", noFinish, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, tt.fault, textReply("ok"))
			m, s := newModel(t, f, Config{RetryBase: time.Millisecond, RetryMax: 2 * time.Millisecond})
			evs, err := collect(t, m, simpleRequest())
			if err != nil {
				t.Fatal(err)
			}
			if got := done(t, evs).Message.Text(); got != "ok" {
				t.Errorf("answer = %q", got)
			}
			if got := texts(evs); got != "ok" {
				t.Errorf("deltas after the retry = %q", got)
			}
			rs := retries(evs)
			if len(rs) != 1 || rs[0].Attempt != 1 || rs[0].Status != tt.wantStatus || rs[0].Err == "" {
				t.Fatalf("retry events = %+v", rs)
			}
			waits := s.all()
			if len(waits) != 1 || waits[0] < tt.minWait {
				t.Errorf("waits = %v, want one of at least %v", waits, tt.minWait)
			}
			if n := len(f.requests()); n != 2 {
				t.Errorf("%d requests, want 2", n)
			}
		})
	}
}

func TestNonRetryable(t *testing.T) {
	tests := []struct {
		code int
		typ  string
	}{
		// The statuses llmtest answers are in TestScriptedNonRetryable;
		// these are error codes it does not send.
		{401, "invalid_api_key"},
		{404, "model_not_found"},
		{429, "insufficient_quota"},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, status(tt.code, tt.typ, "no: "+tt.typ), textReply("never"))
			m, _ := newModel(t, f, Config{})
			_, err := collect(t, m, simpleRequest())
			var apiErr *llm.APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("err = %v, want *llm.APIError", err)
			}
			if diff := cmp.Diff(&llm.APIError{Status: tt.code, Type: tt.typ, Message: "no: " + tt.typ}, apiErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if n := len(f.requests()); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
		})
	}
}

func TestStreamedClientError(t *testing.T) {
	f := newFake(t, new(sseBuilder).data(obj{"error": obj{"message": "context too long", "type": "invalid_request_error", "code": 400}}).serve())
	m, _ := newModel(t, f, Config{})
	_, err := collect(t, m, simpleRequest())
	var apiErr *llm.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || apiErr.Message != "context too long" {
		t.Fatalf("err = %v", err)
	}
}

func TestMalformedArguments(t *testing.T) {
	f := newFake(t, new(sseBuilder).
		call(0, "call_1", "Write", `{"file_path": "/a", "content": "unterminated`).
		call(1, "call_2", "Glob", "").
		call(2, "", "Read", `"just a string"`).
		finish("tool_calls").done().serve())
	m, _ := newModel(t, f, Config{})
	evs, err := collect(t, m, simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Block{
		{Type: llm.BlockToolUse, ID: "call_1", Name: "Write", Input: json.RawMessage(`{}`), InvalidInput: `{"file_path": "/a", "content": "unterminated`},
		{Type: llm.BlockToolUse, ID: "call_2", Name: "Glob", Input: json.RawMessage(`{}`)},
		// No id from the server: one is made from the answer id and index.
		{Type: llm.BlockToolUse, ID: "call_chatcmpl-1_2", Name: "Read", Input: json.RawMessage(`{}`), InvalidInput: `"just a string"`},
	}
	if diff := cmp.Diff(want, done(t, evs).Message.Content); diff != "" {
		t.Errorf("content (-want +got):\n%s", diff)
	}
}

func TestConsumerBreakCancelsRequest(t *testing.T) {
	gone := make(chan struct{})
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(new(sseBuilder).text("first").b.Bytes())
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(gone)
	})
	m, _ := newModel(t, f, Config{})
	for ev, err := range m.Stream(context.Background(), simpleRequest()) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == llm.EventTextDelta {
			break
		}
	}
	select {
	case <-gone:
	case <-time.After(10 * time.Second):
		t.Fatal("server never saw the request cancelled")
	}
}

// BenchmarkBuildParams converts a 50-message conversation with 20 tools and
// marshals it, as one request costs.
func BenchmarkBuildParams(b *testing.B) {
	req := &llm.Request{Model: "gpt-test", System: "You are a careful engineer."}
	for i := range 20 {
		req.Tools = append(req.Tools, llm.ToolSpec{Name: "tool" + string(rune('a'+i)), Description: "does a thing",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)})
	}
	req.Messages = append(req.Messages, llm.UserText("fix the test"))
	for len(req.Messages) < 50 {
		req.Messages = append(req.Messages,
			llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("reading"),
				{Type: llm.BlockToolUse, ID: "call_x", Name: "toola", Input: json.RawMessage(`{"path":"/a"}`)}}},
			llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock("call_x", "package main\n", false)}})
	}
	b.ReportAllocs()
	for b.Loop() {
		p, err := buildParams(req, FieldMaxTokens)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(p); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCallsReusingIndex covers servers that send each call whole with index
// 0: distinct ids mean distinct calls, in arrival order.
func TestCallsReusingIndex(t *testing.T) {
	s := new(sseBuilder)
	s.data(chunk(obj{"role": "assistant", "tool_calls": []any{
		obj{"index": 0, "id": "call_x", "type": "function", "function": obj{"name": "Read", "arguments": `{"file_path":"a"}`}},
		obj{"index": 0, "id": "call_y", "type": "function", "function": obj{"name": "Glob", "arguments": `{"pattern":"*"}`}},
	}}, nil))
	s.call(1, "call_z", "Read", `{"file_path":`).args(1, `"z"}`)
	f := newFake(t, s.finish("stop").done().serve())
	m, _ := newModel(t, f, Config{})
	evs, err := collect(t, m, simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	resp := done(t, evs)
	want := []llm.Block{
		{Type: llm.BlockToolUse, ID: "call_x", Name: "Read", Input: json.RawMessage(`{"file_path":"a"}`)},
		{Type: llm.BlockToolUse, ID: "call_y", Name: "Glob", Input: json.RawMessage(`{"pattern":"*"}`)},
		{Type: llm.BlockToolUse, ID: "call_z", Name: "Read", Input: json.RawMessage(`{"file_path":"z"}`)},
	}
	if diff := cmp.Diff(want, resp.Message.Content); diff != "" {
		t.Errorf("content (-want +got):\n%s", diff)
	}
	if resp.StopReason != llm.StopToolUse {
		t.Errorf("stop = %s", resp.StopReason)
	}
}

func TestCancelDuringStream(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(new(sseBuilder).text("first").b.Bytes())
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	m, _ := newModel(t, f, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var last error
	for ev, err := range m.Stream(ctx, simpleRequest()) {
		if err != nil {
			last = err
			break
		}
		if ev.Kind == llm.EventTextDelta {
			cancel()
		}
	}
	if !errors.Is(last, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", last)
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("%d requests after cancel, want 1 (no retry)", n)
	}
}

// TestCacheHintSplitsUserText: a cache hint on a text block ends its user
// message there, so a fork's shared rules and its own directive travel as
// two user messages; without the hint they are one.
func TestCacheHintSplitsUserText(t *testing.T) {
	msgs := []llm.Message{
		llm.UserText("do it"),
		{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockToolUse, ID: "c1", Name: "Agent", Input: json.RawMessage(`{}`)}}},
		{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock("c1", "forked", false), llm.TextBlock("RULES"), llm.TextBlock("DIRECTIVE")}},
	}
	for _, tt := range []struct {
		name  string
		hints []llm.CacheHint
		want  []any
	}{
		{"no hint", nil, []any{obj{"role": "user", "content": []any{obj{"type": "text", "text": "RULES"}, obj{"type": "text", "text": "DIRECTIVE"}}}}},
		{"hint on the rules", []llm.CacheHint{{Message: 2, Block: 1}}, []any{obj{"role": "user", "content": "RULES"}, obj{"role": "user", "content": "DIRECTIVE"}}},
		{"hint on the last block splits nothing", []llm.CacheHint{{Message: 2, Block: 2}},
			[]any{obj{"role": "user", "content": []any{obj{"type": "text", "text": "RULES"}, obj{"type": "text", "text": "DIRECTIVE"}}}}},
		{"hint on a tool result splits nothing", []llm.CacheHint{{Message: 2, Block: 0}},
			[]any{obj{"role": "user", "content": []any{obj{"type": "text", "text": "RULES"}, obj{"type": "text", "text": "DIRECTIVE"}}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := buildParams(&llm.Request{Model: "m", Messages: msgs, CacheHints: tt.hints}, FieldMaxTokens)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			var r obj
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			got := r["messages"].([]any)[3:]
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
