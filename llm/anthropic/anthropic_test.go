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
)

// These tests need control of the exact bytes on the wire (how a stream is
// split into events, a stream held open, a stream that ends early) or of
// what the adapter sends; the rest run against llmtest (llmtest_test.go).

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
	// The faults llmtest makes (status codes, stream errors, a cut
	// mid-event) are in TestScriptedFaults; these need exact bytes.
	noStop := new(sseBuilder).start(5, 0, 0).text(0, "lost").serve()
	tests := []struct {
		name       string
		fault      reply
		wantStatus int
		minWait    time.Duration
	}{
		{"429 retry-after only", status(429, "rate_limit_error", "slow down", "Retry-After", "3"), 429, 3 * time.Second},
		{"429 retry-after-ms wins", status(429, "rate_limit_error", "slow down", "Retry-After-Ms", "1500", "Retry-After", "1"), 429, 1500 * time.Millisecond},
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
			if rs[0].Wait != waits[0] {
				t.Errorf("retry event says wait %s, slept %v", rs[0].Wait, waits[0])
			}
			if n := len(f.requests()); n != 2 {
				t.Errorf("%d requests, want 2", n)
			}
		})
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
