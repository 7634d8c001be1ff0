package anthropic

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
	"github.com/cadre-dev/cadre/llm/internal/retry"
)

func TestPlainAnswer(t *testing.T) {
	f := newFake(t, new(sseBuilder).start(7, 100, 20).text(0, "Hel", "lo").end("end_turn", 3).serve())
	m, _ := newModel(t, f, Config{Headers: map[string]string{"X-Extra": "yes"}})
	evs, err := collect(t, m, simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	kinds := []llm.EventKind{}
	for _, ev := range evs {
		kinds = append(kinds, ev.Kind)
	}
	if diff := cmp.Diff([]llm.EventKind{llm.EventTextDelta, llm.EventTextDelta, llm.EventDone}, kinds); diff != "" {
		t.Errorf("event kinds (-want +got):\n%s", diff)
	}
	got := done(t, evs)
	want := &llm.Response{
		ID: "msg_1", Model: "claude-test",
		Message:    llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("Hello")}},
		StopReason: llm.StopEndTurn,
		Usage:      llm.Usage{InputTokens: 7, OutputTokens: 3, CacheReadTokens: 100, CacheWriteTokens: 20},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}

	reqs := f.requests()
	if len(reqs) != 1 {
		t.Fatalf("got %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r["stream"] != true || r["model"] != "claude-test" || r["max_tokens"] != float64(32000) {
		t.Errorf("request = %v", r)
	}
	wantSystem := []any{obj{"type": "text", "text": "be brief", "cache_control": obj{"type": "ephemeral"}}}
	if diff := cmp.Diff(wantSystem, r["system"]); diff != "" {
		t.Errorf("system (-want +got):\n%s", diff)
	}
	wantMsgs := []any{obj{"role": "user", "content": []any{obj{"type": "text", "text": "hi", "cache_control": obj{"type": "ephemeral"}}}}}
	if diff := cmp.Diff(wantMsgs, r["messages"]); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	h := f.headers[0]
	// SDK v2.15 sends the API key as a Bearer token.
	if h.Get("Authorization") != "Bearer test-key" || h.Get("X-Extra") != "yes" {
		t.Errorf("headers: authorization %q, x-extra %q", h.Get("Authorization"), h.Get("X-Extra"))
	}
}

func TestOneToolCall(t *testing.T) {
	f := newFake(t, new(sseBuilder).start(5, 0, 0).
		text(0, "Let me look.").
		toolUse(1, "toolu_1", "Read", `{"file_`, `path": "/tmp/a",`, ` "limit": 3}`).
		end("tool_use", 9).serve())
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
	if diff := cmp.Diff([]llm.Block{{Type: llm.BlockToolUse, ID: "toolu_1", Name: "Read"}}, starts); diff != "" {
		t.Errorf("tool use starts (-want +got):\n%s", diff)
	}
	got := done(t, evs)
	want := []llm.Block{
		llm.TextBlock("Let me look."),
		{Type: llm.BlockToolUse, ID: "toolu_1", Name: "Read", Input: json.RawMessage(`{"file_path":"/tmp/a","limit":3}`)},
	}
	if diff := cmp.Diff(want, got.Message.Content); diff != "" {
		t.Errorf("content (-want +got):\n%s", diff)
	}
	if got.StopReason != llm.StopToolUse {
		t.Errorf("stop = %q", got.StopReason)
	}
	tools := f.requests()[0]["tools"].([]any)
	wantTools := []any{obj{
		"name": "Read", "description": "read a file",
		"input_schema":  obj{"type": "object", "properties": obj{"file_path": obj{"type": "string"}}, "required": []any{"file_path"}},
		"cache_control": obj{"type": "ephemeral"},
	}}
	if diff := cmp.Diff(wantTools, tools); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

func TestParallelToolCalls(t *testing.T) {
	f := newFake(t, new(sseBuilder).start(5, 0, 0).
		toolUse(0, "toolu_a", "Glob", `{"pattern":"*.go"}`).
		toolUse(1, "toolu_b", "Grep", `{"pattern":`, `"x"}`).
		toolUse(2, "toolu_c", "Read", `{"file_path":"c"}`).
		end("tool_use", 9).serve())
	m, _ := newModel(t, f, Config{})
	evs, err := collect(t, m, simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	got := done(t, evs).Message.ToolUses()
	want := []llm.Block{
		{Type: llm.BlockToolUse, ID: "toolu_a", Name: "Glob", Input: json.RawMessage(`{"pattern":"*.go"}`)},
		{Type: llm.BlockToolUse, ID: "toolu_b", Name: "Grep", Input: json.RawMessage(`{"pattern":"x"}`)},
		{Type: llm.BlockToolUse, ID: "toolu_c", Name: "Read", Input: json.RawMessage(`{"file_path":"c"}`)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tool uses (-want +got):\n%s", diff)
	}
}

func TestThinkingRoundTrip(t *testing.T) {
	const sig = "EqQBCkgIARABGAIiQL+/sig==\n"
	f := newFake(t,
		new(sseBuilder).start(5, 0, 0).
			blockStart(0, obj{"type": "thinking", "thinking": "", "signature": ""}).
			delta(0, obj{"type": "thinking_delta", "thinking": "Let me "}).
			delta(0, obj{"type": "thinking_delta", "thinking": "think \"hard\"."}).
			delta(0, obj{"type": "signature_delta", "signature": sig}).
			blockStop(0).
			blockStart(1, obj{"type": "redacted_thinking", "data": "opaque+data/=="}).
			blockStop(1).
			toolUse(2, "toolu_1", "Bash", `{"command":"ls"}`).
			end("tool_use", 9).serve(),
		textReply("done"),
	)
	m, _ := newModel(t, f, Config{})
	req := simpleRequest()
	req.Thinking = &llm.Thinking{BudgetTokens: 2048}
	req.Effort = "high"
	evs, err := collect(t, m, req)
	if err != nil {
		t.Fatal(err)
	}
	var thinking string
	for _, ev := range evs {
		if ev.Kind == llm.EventThinkingDelta {
			thinking += ev.Text
		}
	}
	if thinking != `Let me think "hard".` {
		t.Errorf("thinking deltas = %q", thinking)
	}
	resp := done(t, evs)
	wantContent := []llm.Block{
		{Type: llm.BlockThinking, Thinking: `Let me think "hard".`, Signature: sig},
		{Type: llm.BlockRedactedThinking, Data: "opaque+data/=="},
		{Type: llm.BlockToolUse, ID: "toolu_1", Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)},
	}
	if diff := cmp.Diff(wantContent, resp.Message.Content); diff != "" {
		t.Fatalf("content (-want +got):\n%s", diff)
	}

	req.Messages = append(req.Messages, resp.Message, llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock("toolu_1", "a\nb", false)}})
	if _, err := collect(t, m, req); err != nil {
		t.Fatal(err)
	}
	r := f.requests()[1]
	if diff := cmp.Diff(obj{"type": "enabled", "budget_tokens": float64(2048)}, r["thinking"]); diff != "" {
		t.Errorf("thinking param (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(obj{"effort": "high"}, r["output_config"]); diff != "" {
		t.Errorf("output_config (-want +got):\n%s", diff)
	}
	msgs := r["messages"].([]any)
	wantAssistant := obj{"role": "assistant", "content": []any{
		obj{"type": "thinking", "thinking": `Let me think "hard".`, "signature": sig},
		obj{"type": "redacted_thinking", "data": "opaque+data/=="},
		obj{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": obj{"command": "ls"}, "cache_control": obj{"type": "ephemeral"}},
	}}
	if diff := cmp.Diff(wantAssistant, msgs[1]); diff != "" {
		t.Errorf("assistant message sent back (-want +got):\n%s", diff)
	}
	wantResult := obj{"role": "user", "content": []any{obj{
		"type": "tool_result", "tool_use_id": "toolu_1",
		"content":       []any{obj{"type": "text", "text": "a\nb"}},
		"cache_control": obj{"type": "ephemeral"},
	}}}
	if diff := cmp.Diff(wantResult, msgs[2]); diff != "" {
		t.Errorf("tool result (-want +got):\n%s", diff)
	}
	// The signature must travel byte for byte, escapes included.
	if !strings.Contains(string(f.rawBodies()[1]), `"signature":"EqQBCkgIARABGAIiQL+/sig==\n"`) {
		t.Errorf("signature not sent back verbatim:\n%s", f.rawBodies()[1])
	}
}

func TestFaultsRecovered(t *testing.T) {
	streamErr := func(typ string) reply {
		return new(sseBuilder).start(5, 0, 0).text(0, "lost").
			ev("error", obj{"type": "error", "error": obj{"type": typ, "message": "busy"}}).serve()
	}
	noStop := new(sseBuilder).start(5, 0, 0).text(0, "lost").serve()
	tests := []struct {
		name       string
		fault      reply
		wantStatus int
		minWait    time.Duration
	}{
		{"429 retry-after", status(429, "rate_limit_error", "slow down", "Retry-After", "3"), 429, 3 * time.Second},
		{"429 retry-after-ms", status(429, "rate_limit_error", "slow down", "Retry-After-Ms", "1500", "Retry-After", "1"), 429, 1500 * time.Millisecond},
		{"500", status(500, "api_error", "oops"), 500, 0},
		{"502", status(502, "api_error", "bad gateway"), 502, 0},
		{"503", status(503, "api_error", "unavailable"), 503, 0},
		{"504", status(504, "api_error", "timeout"), 504, 0},
		{"529", status(529, "overloaded_error", "Overloaded"), 529, 0},
		{"sse overloaded_error", streamErr("overloaded_error"), 529, 0},
		{"sse api_error", streamErr("api_error"), 500, 0},
		{"cut mid-event", cut(), 0, 0},
		{"end before message_stop", noStop, 0, 0},
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
			if len(waits) != 1 {
				t.Fatalf("waits = %v", waits)
			}
			if waits[0] < tt.minWait {
				t.Errorf("waited %v, want at least %v", waits[0], tt.minWait)
			}
			if rs[0].Wait != waits[0].String() {
				t.Errorf("retry event says wait %s, slept %v", rs[0].Wait, waits[0])
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
		{401, "authentication_error"},
		{400, "invalid_request_error"},
		{403, "permission_error"},
		{404, "not_found_error"},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, status(tt.code, tt.typ, "no: "+tt.typ), textReply("never"))
			m, _ := newModel(t, f, Config{})
			evs, err := collect(t, m, simpleRequest())
			var apiErr *llm.APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("err = %v, want *llm.APIError", err)
			}
			want := &llm.APIError{Status: tt.code, Type: tt.typ, Message: "no: " + tt.typ}
			if diff := cmp.Diff(want, apiErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if len(evs) != 0 {
				t.Errorf("events before the error: %+v", evs)
			}
			if n := len(f.requests()); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
		})
	}
}

func TestRetriesExhausted(t *testing.T) {
	fault := status(503, "api_error", "down for maintenance")
	f := newFake(t, fault, fault, fault, fault)
	m, s := newModel(t, f, Config{MaxRetries: 2, RetryBase: 100 * time.Millisecond, RetryMax: time.Second})
	evs, err := collect(t, m, simpleRequest())
	if err == nil {
		t.Fatal("no error")
	}
	if !strings.Contains(err.Error(), "status 503") || !strings.Contains(err.Error(), "down for maintenance") {
		t.Errorf("error %q does not name the last status and cause", err)
	}
	var apiErr *llm.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 503 {
		t.Errorf("error does not wrap the APIError: %v", err)
	}
	if n := len(f.requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
	if n := len(retries(evs)); n != 2 {
		t.Errorf("%d retry events, want 2", n)
	}
	// Back-off grows: [50ms,100ms] then [100ms,200ms].
	w := s.all()
	if len(w) != 2 || w[0] < 50*time.Millisecond || w[0] > 100*time.Millisecond || w[1] < 100*time.Millisecond || w[1] > 200*time.Millisecond {
		t.Errorf("waits = %v", w)
	}
}

func TestNoRetries(t *testing.T) {
	f := newFake(t, status(529, "overloaded_error", "Overloaded"), textReply("never"))
	m, _ := newModel(t, f, Config{MaxRetries: -1})
	if _, err := collect(t, m, simpleRequest()); err == nil || !strings.Contains(err.Error(), "status 529") {
		t.Fatalf("err = %v", err)
	}
}

func TestMalformedToolInput(t *testing.T) {
	f := newFake(t, new(sseBuilder).start(5, 0, 0).
		toolUse(0, "toolu_1", "Write", `{"file_path": "/a", "content": "unterminated`).
		toolUse(1, "toolu_2", "Write", `[1,2]`).
		toolUse(2, "toolu_3", "Glob").
		end("tool_use", 9).serve())
	m, _ := newModel(t, f, Config{})
	evs, err := collect(t, m, simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Block{
		{Type: llm.BlockToolUse, ID: "toolu_1", Name: "Write", Input: json.RawMessage(`{}`), InvalidInput: `{"file_path": "/a", "content": "unterminated`},
		{Type: llm.BlockToolUse, ID: "toolu_2", Name: "Write", Input: json.RawMessage(`{}`), InvalidInput: `[1,2]`},
		{Type: llm.BlockToolUse, ID: "toolu_3", Name: "Glob", Input: json.RawMessage(`{}`)},
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
		_, _ = w.Write(new(sseBuilder).start(1, 0, 0).text(0, "first").b.Bytes())
		w.(http.Flusher).Flush()
		<-r.Context().Done() // hold the stream open until the client leaves
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

func TestCancelDuringStream(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(new(sseBuilder).start(1, 0, 0).text(0, "first").b.Bytes())
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

func TestCancelDuringBackoff(t *testing.T) {
	f := newFake(t, status(429, "rate_limit_error", "slow down", "Retry-After", "3600"), textReply("never"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m, _ := newModel(t, f, Config{Sleep: retry.Sleep, MaxRetryAfter: 2 * time.Hour, RetryBudget: 2 * time.Hour})
	var last error
	for ev, err := range m.Stream(ctx, simpleRequest()) {
		if err != nil {
			last = err
			break
		}
		if ev.Kind == llm.EventRetry {
			if ev.Retry.Wait != "1h0m0s" {
				t.Errorf("wait = %s, want the server's hour", ev.Retry.Wait)
			}
			cancel() // the real timer would wait an hour
		}
	}
	if !errors.Is(last, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", last)
	}
}

func TestBadRequests(t *testing.T) {
	f := newFake(t)
	m, _ := newModel(t, f, Config{})
	tests := map[string]*llm.Request{
		"nil":        nil,
		"no model":   {Messages: []llm.Message{llm.UserText("x")}},
		"bad effort": {Model: "m", Effort: "extreme", Messages: []llm.Message{llm.UserText("x")}},
		"bad role":   {Model: "m", Messages: []llm.Message{{Role: "system", Content: []llm.Block{llm.TextBlock("x")}}}},
		"bad block":  {Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{{Type: "image"}}}}},
		"bad schema": {Model: "m", Tools: []llm.ToolSpec{{Name: "t", InputSchema: json.RawMessage(`{`)}}, Messages: []llm.Message{llm.UserText("x")}},
	}
	for name, req := range tests {
		if _, err := collect(t, m, req); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if n := len(f.requests()); n != 0 {
		t.Errorf("%d requests sent for bad input", n)
	}
}

func TestNewValidates(t *testing.T) {
	if _, err := New(Config{RetryBase: time.Second, RetryMax: time.Millisecond}); err == nil {
		t.Error("RetryMax < RetryBase accepted")
	}
	if _, err := New(Config{DefaultMaxTokens: -1}); err == nil {
		t.Error("negative DefaultMaxTokens accepted")
	}
	for _, u := range []string{"ftp://host", "::", "http://", "localhost:8080"} {
		if _, err := New(Config{BaseURL: u}); err == nil {
			t.Errorf("base URL %q accepted", u)
		}
	}
	if _, err := New(Config{}); err != nil {
		t.Errorf("zero Config: %v", err)
	}
}

func TestMaxTokens(t *testing.T) {
	tests := []struct {
		name   string
		req    llm.Request
		defMax int64
		want   int64
	}{
		{"default", llm.Request{Model: "claude-sonnet-4-5"}, 0, 32000},
		{"claude 3 haiku", llm.Request{Model: "claude-3-haiku-20240307"}, 0, 4096},
		{"claude 3.5 haiku", llm.Request{Model: "claude-3-5-haiku-latest"}, 0, 8192},
		{"claude 3.7 sonnet", llm.Request{Model: "claude-3-7-sonnet-latest"}, 0, 32000},
		{"config", llm.Request{Model: "claude-sonnet-4-5"}, 1000, 1000},
		{"request", llm.Request{Model: "claude-sonnet-4-5", MaxTokens: 77}, 1000, 77},
		{"thinking above default", llm.Request{Model: "claude-sonnet-4-5", Thinking: &llm.Thinking{BudgetTokens: 40000}}, 0, 72000},
	}
	for _, tt := range tests {
		p, err := buildParams(&tt.req, tt.defMax)
		if err != nil {
			t.Fatal(err)
		}
		if p.MaxTokens != tt.want {
			t.Errorf("%s: max_tokens = %d, want %d", tt.name, p.MaxTokens, tt.want)
		}
	}
}

func TestExhaustedOnCutStream(t *testing.T) {
	noStop := new(sseBuilder).start(5, 0, 0).text(0, "lost").serve()
	f := newFake(t, noStop, noStop)
	m, _ := newModel(t, f, Config{MaxRetries: 1, RetryBase: time.Millisecond, RetryMax: time.Millisecond})
	_, err := collect(t, m, simpleRequest())
	if err == nil || !errors.Is(err, errCut) || !strings.Contains(err.Error(), "giving up after 2 attempts") {
		t.Fatalf("err = %v", err)
	}
}
