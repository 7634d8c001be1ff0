package anthropic

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/internal/retry"
	"github.com/cadre-dev/cadre/llm/llmtest"
)

// newScripted returns a scripted server checked at the end of the test and a
// Model pointed at it.
func newScripted(t *testing.T, cfg Config) (*llmtest.Server, *Model, *sleeps) {
	t.Helper()
	s := llmtest.NewServer()
	t.Cleanup(s.Close)
	t.Cleanup(func() { s.Check(t) })
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	sl := &sleeps{}
	cfg.BaseURL = s.URL()
	cfg.APIKey = "test"
	cfg.HTTPClient = &http.Client{Transport: tr}
	if cfg.Sleep == nil {
		cfg.Sleep = sl.sleep
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, m, sl
}

var testTools = []llm.ToolSpec{
	{Name: "Read", Description: "Read a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}`)},
	{Name: "Glob", Description: "Find files.", InputSchema: json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string"}},"required":["pattern"]}`)},
}

// answerTools returns the user message answering every tool use of m.
func answerTools(m llm.Message) llm.Message {
	out := llm.Message{Role: llm.RoleUser}
	for _, u := range m.ToolUses() {
		out.Content = append(out.Content, llm.ToolResultBlock(u.ID, "result of "+u.Name+" "+string(u.Input), false))
	}
	return out
}

// TestScriptedConversation runs a small agent loop against llmtest: three
// parallel tool calls, their results, a final answer; the server checks
// every request's invariants and accounts the prompt cache.
func TestScriptedConversation(t *testing.T) {
	s, m, _ := newScripted(t, Config{})
	s.Script("task-conv",
		llmtest.ToolUses(
			llmtest.Call{Name: "Glob", Input: map[string]string{"pattern": "*.go"}},
			llmtest.Call{Name: "Read", Input: map[string]string{"file_path": "a.go"}},
			llmtest.Call{Name: "Read", Input: map[string]string{"file_path": "b.go"}},
		),
		llmtest.Text("Both files look fine."),
	)
	req := &llm.Request{Model: "claude-test", System: "You are a test agent.", Tools: testTools,
		Messages: []llm.Message{llm.UserText("task-conv: check the files")}}
	var usages []llm.Usage
	for turn := 0; ; turn++ {
		evs, err := collect(t, m, req)
		if err != nil {
			t.Fatal(err)
		}
		resp := done(t, evs)
		usages = append(usages, resp.Usage)
		req.Messages = append(req.Messages, resp.Message)
		if resp.StopReason != llm.StopToolUse {
			if resp.Message.Text() != "Both files look fine." {
				t.Errorf("final answer = %q", resp.Message.Text())
			}
			break
		}
		uses := resp.Message.ToolUses()
		var names []string
		for i, u := range uses {
			names = append(names, u.Name)
			if u.ID != llmtest.ToolUseID("task-conv", i+1) {
				t.Errorf("tool use %d id = %s", i, u.ID)
			}
		}
		if diff := cmp.Diff([]string{"Glob", "Read", "Read"}, names); diff != "" {
			t.Errorf("tool order (-want +got):\n%s", diff)
		}
		var inputs []string
		for _, u := range uses {
			inputs = append(inputs, string(u.Input))
		}
		if diff := cmp.Diff([]string{`{"pattern":"*.go"}`, `{"file_path":"a.go"}`, `{"file_path":"b.go"}`}, inputs); diff != "" {
			t.Errorf("tool inputs (-want +got):\n%s", diff)
		}
		req.Messages = append(req.Messages, answerTools(resp.Message))
	}
	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, r := range reqs {
		if r.Breakpoints != PlaceBreakpoints(&llm.Request{System: "x", Tools: testTools, Messages: r.Messages}).Count() {
			t.Errorf("request %d: %d breakpoints", i, r.Breakpoints)
		}
		if r.Usage != usages[i] {
			t.Errorf("request %d: server reported %+v, adapter returned %+v", i, r.Usage, usages[i])
		}
	}
	if reqs[1].Usage.CacheReadTokens == 0 {
		t.Errorf("second request read nothing from the cache: %+v", reqs[1].Usage)
	}
	if reqs[1].System != "You are a test agent." || len(reqs[1].Tools) != 2 {
		t.Errorf("decoded request: system %q, %d tools", reqs[1].System, len(reqs[1].Tools))
	}
}

func TestScriptedThinkingRoundTrip(t *testing.T) {
	s, m, _ := newScripted(t, Config{})
	s.Script("task-think",
		llmtest.Thinking("Plan: read it.", "sig-123").WithRedactedThinking("REDACTED==").WithToolUse("Read", map[string]string{"file_path": "x"}),
		llmtest.Text("done"),
	)
	req := &llm.Request{Model: "claude-test", Tools: testTools, Thinking: &llm.Thinking{BudgetTokens: 1024},
		Messages: []llm.Message{llm.UserText("task-think")}}
	evs, err := collect(t, m, req)
	if err != nil {
		t.Fatal(err)
	}
	first := done(t, evs).Message
	req.Messages = append(req.Messages, first, answerTools(first))
	if _, err := collect(t, m, req); err != nil {
		t.Fatal(err)
	}
	sent := s.Requests()[1]
	if !sent.Thinking {
		t.Error("thinking not requested")
	}
	if diff := cmp.Diff(first.Content[:2], sent.Messages[1].Content[:2]); diff != "" {
		t.Errorf("thinking blocks sent back (-want +got):\n%s", diff)
	}
	if first.Content[0].Signature != "sig-123" || first.Content[1].Data != "REDACTED==" {
		t.Errorf("thinking = %+v", first.Content[:2])
	}
}

func TestScriptedFaults(t *testing.T) {
	s, m, sl := newScripted(t, Config{MaxRetries: 10, RetryBase: time.Millisecond, RetryMax: time.Millisecond})
	s.Script("task-faults",
		llmtest.RateLimited(2*time.Second),
		llmtest.ServerError(500, "boom"),
		llmtest.ServerError(502, "bad gateway"),
		llmtest.ServerError(503, "unavailable"),
		llmtest.ServerError(504, "gateway timeout"),
		llmtest.Overloaded(),
		llmtest.Cut(),
		llmtest.StreamError("overloaded_error", "busy"),
		llmtest.StreamError("api_error", "internal"),
		llmtest.Text("finally"),
	)
	evs, err := collect(t, m, &llm.Request{Model: "claude-test", Messages: []llm.Message{llm.UserText("task-faults")}})
	if err != nil {
		t.Fatal(err)
	}
	if got := done(t, evs).Message.Text(); got != "finally" || texts(evs) != "finally" {
		t.Errorf("answer %q, deltas after last retry %q", got, texts(evs))
	}
	var statuses []int
	for _, r := range retries(evs) {
		statuses = append(statuses, r.Status)
	}
	if diff := cmp.Diff([]int{429, 500, 502, 503, 504, 529, 0, 529, 500}, statuses); diff != "" {
		t.Errorf("retry statuses (-want +got):\n%s", diff)
	}
	w := sl.all()
	if len(w) != 9 || w[0] < 2*time.Second {
		t.Fatalf("waits = %v; the first must honour retry-after 2s", w)
	}
	// Each retry event tells the truth: its attempt, the wait slept, why.
	for i, r := range retries(evs) {
		if r.Attempt != i+1 || r.Wait != w[i] || r.Err == "" {
			t.Errorf("retry %d = %+v, slept %v", i, r, w[i])
		}
	}
}

// TestScriptedNonRetryable: a client error ends the stream at once with
// the API's error, no retry and no events.
func TestScriptedNonRetryable(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		status int
		typ    string
	}{{400, "invalid_request_error"}, {401, "authentication_error"}, {403, "permission_error"}, {404, "not_found_error"}} {
		t.Run(c.typ, func(t *testing.T) {
			t.Parallel()
			s, m, _ := newScripted(t, Config{})
			s.Script("task-4xx", llmtest.HTTPError(c.status, "no: "+c.typ))
			evs, err := collect(t, m, &llm.Request{Model: "claude-test", Messages: []llm.Message{llm.UserText("task-4xx")}})
			var apiErr *llm.APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("err = %v, want *llm.APIError", err)
			}
			if diff := cmp.Diff(&llm.APIError{Status: c.status, Type: c.typ, Message: "no: " + c.typ}, apiErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if len(evs) != 0 || len(s.Requests()) != 1 {
				t.Errorf("%d events, %d requests", len(evs), len(s.Requests()))
			}
		})
	}
}

func TestScriptedMalformedToolInput(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		turn llmtest.Turn
		want llm.Block
	}{
		{"unterminated", llmtest.MalformedToolUse("Read", `{"file_path": "a.go"`), llm.Block{Name: "Read", Input: json.RawMessage(`{}`), InvalidInput: `{"file_path": "a.go"`}},
		{"not an object", llmtest.MalformedToolUse("Read", `[1,2]`), llm.Block{Name: "Read", Input: json.RawMessage(`{}`), InvalidInput: `[1,2]`}},
		{"no input", llmtest.ToolUse("Glob", nil), llm.Block{Name: "Glob", Input: json.RawMessage(`{}`)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s, m, _ := newScripted(t, Config{})
			s.Script("task-bad", c.turn)
			evs, err := collect(t, m, &llm.Request{Model: "claude-test", Tools: testTools, Messages: []llm.Message{llm.UserText("task-bad")}})
			if err != nil {
				t.Fatal(err)
			}
			u := done(t, evs).Message.ToolUses()
			c.want.Type, c.want.ID = llm.BlockToolUse, llmtest.ToolUseID("task-bad", 1)
			if len(u) != 1 {
				t.Fatalf("tool uses = %+v", u)
			}
			if diff := cmp.Diff(c.want, u[0]); diff != "" {
				t.Errorf("tool use (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScriptedRetriesExhausted(t *testing.T) {
	t.Parallel()
	s, m, sl := newScripted(t, Config{MaxRetries: 2, RetryBase: 100 * time.Millisecond, RetryMax: time.Second})
	s.Script("task-down", llmtest.ServerError(503, "down for maintenance"), llmtest.ServerError(503, "down for maintenance"), llmtest.ServerError(503, "down for maintenance"))
	evs, err := collect(t, m, &llm.Request{Model: "claude-test", Messages: []llm.Message{llm.UserText("task-down")}})
	if err == nil || !strings.Contains(err.Error(), "status 503") || !strings.Contains(err.Error(), "down for maintenance") {
		t.Fatalf("error %v does not name the last status and cause", err)
	}
	var apiErr *llm.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 503 {
		t.Errorf("error does not wrap the APIError: %v", err)
	}
	if n, r := len(s.Requests()), len(retries(evs)); n != 3 || r != 2 {
		t.Errorf("%d requests, %d retry events; want 3 and 2", n, r)
	}
	// Back-off grows: [50ms,100ms] then [100ms,200ms].
	w := sl.all()
	if len(w) != 2 || w[0] < 50*time.Millisecond || w[0] > 100*time.Millisecond || w[1] < 100*time.Millisecond || w[1] > 200*time.Millisecond {
		t.Errorf("waits = %v", w)
	}
}

func TestScriptedNoRetries(t *testing.T) {
	t.Parallel()
	s, m, _ := newScripted(t, Config{MaxRetries: -1})
	s.Script("task-once", llmtest.Overloaded())
	if _, err := collect(t, m, &llm.Request{Model: "claude-test", Messages: []llm.Message{llm.UserText("task-once")}}); err == nil || !strings.Contains(err.Error(), "status 529") {
		t.Fatalf("err = %v", err)
	}
	if n := len(s.Requests()); n != 1 {
		t.Fatalf("%d requests", n)
	}
}

// TestScriptedPlainAnswer checks what goes on the wire for a plain
// request: streaming, the default max_tokens, cache breakpoints on the
// system prompt and the last message, the key and extra headers.
func TestScriptedPlainAnswer(t *testing.T) {
	t.Parallel()
	s, m, _ := newScripted(t, Config{Headers: map[string]string{"X-Extra": "yes"}})
	s.Script("task-plain", llmtest.Text("Hello"))
	evs, err := collect(t, m, &llm.Request{Model: "claude-test", System: "be brief", Messages: []llm.Message{llm.UserText("task-plain: hi")}})
	if err != nil {
		t.Fatal(err)
	}
	resp := done(t, evs)
	if texts(evs) != "Hello" || resp.Message.Text() != "Hello" || resp.StopReason != llm.StopEndTurn || resp.ID == "" {
		t.Errorf("response %+v", resp)
	}
	r := s.Requests()[0]
	if r.Usage != resp.Usage {
		t.Errorf("usage: server %+v, adapter %+v", r.Usage, resp.Usage)
	}
	var body map[string]any
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatal(err)
	}
	if body["stream"] != true || body["model"] != "claude-test" || body["max_tokens"] != float64(32000) {
		t.Errorf("request = %v", body)
	}
	type obj = map[string]any
	wantSystem := []any{obj{"type": "text", "text": "be brief", "cache_control": obj{"type": "ephemeral"}}}
	if diff := cmp.Diff(wantSystem, body["system"]); diff != "" {
		t.Errorf("system (-want +got):\n%s", diff)
	}
	wantMsgs := []any{obj{"role": "user", "content": []any{obj{"type": "text", "text": "task-plain: hi", "cache_control": obj{"type": "ephemeral"}}}}}
	if diff := cmp.Diff(wantMsgs, body["messages"]); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	// SDK v2.15 sends the API key as a Bearer token.
	if r.Header.Get("Authorization") != "Bearer test" || r.Header.Get("X-Extra") != "yes" {
		t.Errorf("headers: authorization %q, x-extra %q", r.Header.Get("Authorization"), r.Header.Get("X-Extra"))
	}
}

// TestScriptedBadRequests: input the adapter cannot send is an error
// before any request.
func TestScriptedBadRequests(t *testing.T) {
	t.Parallel()
	s, m, _ := newScripted(t, Config{})
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
	if n := len(s.Requests()); n != 0 {
		t.Errorf("%d requests sent for bad input", n)
	}
}

// TestScriptedRealRetryAfter waits for real once: a 429 with retry-after 1 s
// and the default back-off must not come back sooner.
func TestScriptedRealRetryAfter(t *testing.T) {
	s, m, _ := newScripted(t, Config{Sleep: retry.Sleep})
	s.Script("task-wait", llmtest.RateLimited(time.Second), llmtest.Text("ok"))
	start := time.Now()
	if _, err := collect(t, m, &llm.Request{Model: "claude-test", Messages: []llm.Message{llm.UserText("task-wait")}}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("retried after %v, before retry-after", d)
	}
	reqs := s.Requests()
	if len(reqs) != 2 || reqs[1].Arrived.Sub(reqs[0].Finished) < time.Second {
		t.Errorf("second request came too early")
	}
}
