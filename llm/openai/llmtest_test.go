package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/llm"
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
	cfg.BaseURL = s.URL() + "/v1"
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

func answerTools(m llm.Message) llm.Message {
	out := llm.Message{Role: llm.RoleUser}
	for _, u := range m.ToolUses() {
		out.Content = append(out.Content, llm.ToolResultBlock(u.ID, "result of "+u.Name+" "+string(u.Input), false))
	}
	return out
}

func TestScriptedConversation(t *testing.T) {
	s, m, _ := newScripted(t, Config{})
	s.Script("task-conv",
		llmtest.ToolUses(
			llmtest.Call{Name: "Glob", Input: map[string]string{"pattern": "*.go"}},
			llmtest.Call{Name: "Read", Input: map[string]string{"file_path": "a.go"}},
			llmtest.Call{Name: "Read", Input: map[string]string{"file_path": "b.go"}},
		),
		llmtest.Thinking("considering", "").WithText("Both files look fine."),
	)
	req := &llm.Request{Model: "gpt-test", System: "You are a test agent.", Tools: testTools, MaxTokens: 1000,
		Messages: []llm.Message{llm.UserText("task-conv: check the files")}}
	var usages []llm.Usage
	var thinking string
	for {
		evs, err := collect(t, m, req)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if ev.Kind == llm.EventThinkingDelta {
				thinking += ev.Text
			}
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
		var got []llm.Block
		for _, u := range resp.Message.ToolUses() {
			got = append(got, llm.Block{Name: u.Name, Input: u.Input})
		}
		want := []llm.Block{
			{Name: "Glob", Input: json.RawMessage(`{"pattern":"*.go"}`)},
			{Name: "Read", Input: json.RawMessage(`{"file_path":"a.go"}`)},
			{Name: "Read", Input: json.RawMessage(`{"file_path":"b.go"}`)},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("tool calls (-want +got):\n%s", diff)
		}
		if id := resp.Message.ToolUses()[0].ID; id != llmtest.CallID("task-conv", 1) {
			t.Errorf("first call id = %s", id)
		}
		req.Messages = append(req.Messages, answerTools(resp.Message))
	}
	if thinking != "considering" {
		t.Errorf("reasoning deltas = %q", thinking)
	}
	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, r := range reqs {
		if r.Usage != usages[i] {
			t.Errorf("request %d: server reported %+v, adapter returned %+v", i, r.Usage, usages[i])
		}
		if r.MaxTokens != 1000 || r.System != "You are a test agent." || len(r.Tools) != 2 {
			t.Errorf("request %d decoded as max %d, system %q, %d tools", i, r.MaxTokens, r.System, len(r.Tools))
		}
	}
	if reqs[1].Usage.CacheReadTokens == 0 {
		t.Errorf("second request read nothing from the cache: %+v", reqs[1].Usage)
	}
	// The history the server decoded is the history we hold (thinking aside).
	if diff := cmp.Diff(req.Messages[:3], reqs[1].Messages); diff != "" {
		t.Errorf("decoded history (-want +got):\n%s", diff)
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
		llmtest.StreamError("server_error", "internal"),
		llmtest.Text("finally"),
	)
	evs, err := collect(t, m, &llm.Request{Model: "gpt-test", Messages: []llm.Message{llm.UserText("task-faults")}})
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
	if diff := cmp.Diff([]int{429, 500, 502, 503, 504, 529, 0, 500}, statuses); diff != "" {
		t.Errorf("retry statuses (-want +got):\n%s", diff)
	}
	w := sl.all()
	if len(w) != 8 || w[0] < 2*time.Second {
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
// the API's error and no retry.
func TestScriptedNonRetryable(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		status int
		typ    string
	}{{400, "invalid_request_error"}, {401, "invalid_request_error"}, {403, "permission_error"}, {404, "invalid_request_error"}} {
		t.Run(fmt.Sprint(c.status), func(t *testing.T) {
			t.Parallel()
			s, m, _ := newScripted(t, Config{})
			s.Script("task-4xx", llmtest.HTTPError(c.status, "no: "+c.typ))
			evs, err := collect(t, m, &llm.Request{Model: "gpt-test", Messages: []llm.Message{llm.UserText("task-4xx")}})
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

func TestScriptedRetriesExhausted(t *testing.T) {
	t.Parallel()
	s, m, _ := newScripted(t, Config{MaxRetries: 2, RetryBase: time.Millisecond, RetryMax: time.Millisecond})
	s.Script("task-down", llmtest.ServerError(502, "upstream died"), llmtest.ServerError(502, "upstream died"), llmtest.ServerError(502, "upstream died"))
	evs, err := collect(t, m, &llm.Request{Model: "gpt-test", Messages: []llm.Message{llm.UserText("task-down")}})
	if err == nil || !strings.Contains(err.Error(), "status 502") || !strings.Contains(err.Error(), "upstream died") {
		t.Fatalf("err = %v", err)
	}
	if n, r := len(s.Requests()), len(retries(evs)); n != 3 || r != 2 {
		t.Errorf("%d requests, %d retry events; want 3 and 2", n, r)
	}
}

// TestScriptedPlainAnswer checks what goes on the wire for a plain
// request: the path, streaming with usage, max_tokens, the system message
// first, the key and extra headers.
func TestScriptedPlainAnswer(t *testing.T) {
	t.Parallel()
	s, m, _ := newScripted(t, Config{Headers: map[string]string{"HTTP-Referer": "https://cadre.dev"}})
	s.Script("task-plain", llmtest.Text("Hello"))
	evs, err := collect(t, m, &llm.Request{Model: "gpt-test", System: "be brief", MaxTokens: 500, Messages: []llm.Message{llm.UserText("task-plain: hi")}})
	if err != nil {
		t.Fatal(err)
	}
	resp := done(t, evs)
	if texts(evs) != "Hello" || resp.Message.Text() != "Hello" || resp.StopReason != llm.StopEndTurn || resp.ID == "" {
		t.Errorf("response %+v", resp)
	}
	r := s.Requests()[0]
	if r.Usage != resp.Usage || r.Path != "/v1/chat/completions" {
		t.Errorf("usage: server %+v, adapter %+v; path %s", r.Usage, resp.Usage, r.Path)
	}
	var body map[string]any
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatal(err)
	}
	type obj = map[string]any
	wantReq := obj{
		"model":          "gpt-test",
		"stream":         true,
		"stream_options": obj{"include_usage": true},
		"max_tokens":     float64(500),
		"messages": []any{
			obj{"role": "system", "content": "be brief"},
			obj{"role": "user", "content": "task-plain: hi"},
		},
	}
	if diff := cmp.Diff(wantReq, body); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
	// No key configured: a local server gets a placeholder.
	if r.Header.Get("Authorization") != "Bearer no-key" || r.Header.Get("HTTP-Referer") != "https://cadre.dev" {
		t.Errorf("headers: %v", r.Header)
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
		"bad effort": {Model: "m", Effort: "extreme"},
		"bad role":   {Model: "m", Messages: []llm.Message{{Role: "system"}}},
		"bad block":  {Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{{Type: "image"}}}}},
		"bad schema": {Model: "m", Tools: []llm.ToolSpec{{Name: "t", InputSchema: json.RawMessage(`{`)}}},
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

func TestScriptedMalformedArguments(t *testing.T) {
	s, m, _ := newScripted(t, Config{})
	s.Script("task-bad", llmtest.MalformedToolUse("Read", `{"file_path": "a.go"`))
	evs, err := collect(t, m, &llm.Request{Model: "gpt-test", Tools: testTools, Messages: []llm.Message{llm.UserText("task-bad")}})
	if err != nil {
		t.Fatal(err)
	}
	u := done(t, evs).Message.ToolUses()
	if len(u) != 1 || string(u[0].Input) != "{}" || u[0].InvalidInput != `{"file_path": "a.go"` {
		t.Fatalf("tool uses = %+v", u)
	}
}
