package anthropic

import (
	"encoding/json"
	"errors"
	"net/http"
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
	if w := sl.all(); len(w) != 9 || w[0] < 2*time.Second {
		t.Errorf("waits = %v; the first must honour retry-after 2s", w)
	}
}

func TestScriptedUnauthorized(t *testing.T) {
	s, m, _ := newScripted(t, Config{})
	s.Script("task-401", llmtest.HTTPError(401, "invalid x-api-key"))
	_, err := collect(t, m, &llm.Request{Model: "claude-test", Messages: []llm.Message{llm.UserText("task-401")}})
	var apiErr *llm.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 401 || apiErr.Message != "invalid x-api-key" || apiErr.Type != "authentication_error" {
		t.Fatalf("err = %#v", err)
	}
}

func TestScriptedMalformedToolInput(t *testing.T) {
	s, m, _ := newScripted(t, Config{})
	s.Script("task-bad", llmtest.MalformedToolUse("Read", `{"file_path": "a.go"`))
	evs, err := collect(t, m, &llm.Request{Model: "claude-test", Tools: testTools, Messages: []llm.Message{llm.UserText("task-bad")}})
	if err != nil {
		t.Fatal(err)
	}
	u := done(t, evs).Message.ToolUses()
	if len(u) != 1 || string(u[0].Input) != "{}" || u[0].InvalidInput != `{"file_path": "a.go"` {
		t.Fatalf("tool uses = %+v", u)
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
