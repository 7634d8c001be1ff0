package openai

import (
	"encoding/json"
	"errors"
	"net/http"
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
	if w := sl.all(); len(w) != 8 || w[0] < 2*time.Second {
		t.Errorf("waits = %v; the first must honour retry-after 2s", w)
	}
}

func TestScriptedUnauthorized(t *testing.T) {
	s, m, _ := newScripted(t, Config{})
	s.Script("task-401", llmtest.HTTPError(401, "Incorrect API key provided"))
	_, err := collect(t, m, &llm.Request{Model: "gpt-test", Messages: []llm.Message{llm.UserText("task-401")}})
	var apiErr *llm.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 401 || apiErr.Message != "Incorrect API key provided" {
		t.Fatalf("err = %#v", err)
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
