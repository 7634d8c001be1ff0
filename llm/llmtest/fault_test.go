package llmtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	oaioption "github.com/openai/openai-go/v3/option"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
)

func TestRateLimitHeaders(t *testing.T) {
	s := newServer(t)
	s.Script("", llmtest.RateLimited(2500*time.Millisecond), llmtest.Text("ok"))
	res := post(t, s, "/v1/messages", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`)
	if res.status != 429 || res.header.Get("retry-after") != "3" || res.header.Get("retry-after-ms") != "2500" {
		t.Errorf("status %d headers %v", res.status, res.header)
	}
	if field(t, string(res.body), "type") != "error" || field(t, string(res.body), "error", "type") != "rate_limit_error" {
		t.Errorf("body %s", res.body)
	}
	res = post(t, s, "/v1/messages", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`)
	if res.status != 200 {
		t.Errorf("retry got %d", res.status)
	}
	reqs := s.Requests()
	if reqs[0].Status != 429 || reqs[0].Turn != 1 || reqs[1].Turn != 2 {
		t.Errorf("turns %d %d status %d", reqs[0].Turn, reqs[1].Turn, reqs[0].Status)
	}
	if reqs[0].Usage != (llm.Usage{}) {
		t.Errorf("a 429 reported usage %+v", reqs[0].Usage)
	}
}

// The SDKs retry a fault by themselves; the retry gets the next turn.
func TestSDKRetryGetsNextTurn(t *testing.T) {
	s := newServer(t)
	s.Script("alpha", llmtest.RateLimited(time.Millisecond), llmtest.Overloaded().WithRetryAfter(time.Millisecond), llmtest.Text("third time lucky"))
	s.Script("omega", llmtest.ServerError(503, "busy").WithRetryAfter(time.Millisecond), llmtest.Text("second"))
	c := anthropicClient(s, option.WithMaxRetries(3))
	msg, err := c.Messages.New(context.Background(), userParams("agent alpha"))
	if err != nil {
		t.Fatal(err)
	}
	if msg.Content[0].Text != "third time lucky" || len(s.RequestsFor("alpha")) != 3 {
		t.Errorf("got %q after %d requests", msg.Content[0].Text, len(s.RequestsFor("alpha")))
	}
	oc := openaiClient(s, oaioption.WithMaxRetries(2))
	res, err := oc.Chat.Completions.New(context.Background(), oaiParams("agent omega"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Choices[0].Message.Content != "second" {
		t.Errorf("openai got %q", res.Choices[0].Message.Content)
	}
	noViolations(t, s)
}

func TestHTTPFaults(t *testing.T) {
	cases := []struct {
		turn    llmtest.Turn
		status  int
		anthTyp string
		oaiTyp  string
		message string
	}{
		{llmtest.ServerError(500, "boom"), 500, "api_error", "server_error", "boom"},
		{llmtest.ServerError(502, "bad gateway"), 502, "api_error", "server_error", "bad gateway"},
		{llmtest.ServerError(503, "unavailable"), 503, "api_error", "server_error", "unavailable"},
		{llmtest.ServerError(504, "timeout"), 504, "timeout_error", "server_error", "timeout"},
		{llmtest.Overloaded(), 529, "overloaded_error", "server_error", "Overloaded"},
		{llmtest.HTTPError(400, "bad request"), 400, "invalid_request_error", "invalid_request_error", "bad request"},
		{llmtest.HTTPError(401, "bad key"), 401, "authentication_error", "invalid_request_error", "bad key"},
		{llmtest.HTTPError(403, "forbidden"), 403, "permission_error", "permission_error", "forbidden"},
		{llmtest.HTTPError(404, "no model"), 404, "not_found_error", "invalid_request_error", "no model"},
		{llmtest.RateLimited(time.Second), 429, "rate_limit_error", "requests", "rate limited"},
	}
	for _, tc := range cases {
		s := newServer(t)
		s.Script("", tc.turn, tc.turn, tc.turn, tc.turn)

		// Anthropic, both forms, through the SDK.
		c := anthropicClient(s)
		_, err := c.Messages.New(context.Background(), userParams("x"))
		var aerr *anthropic.Error
		if !errors.As(err, &aerr) || aerr.StatusCode != tc.status {
			t.Errorf("%d: anthropic error %v", tc.status, err)
		} else {
			var body struct {
				Type  string `json:"type"`
				Error struct{ Type, Message string }
			}
			if err := json.Unmarshal([]byte(aerr.RawJSON()), &body); err != nil || body.Type != "error" || body.Error.Type != tc.anthTyp || !strings.Contains(body.Error.Message, tc.message) {
				t.Errorf("%d: anthropic body %s", tc.status, aerr.RawJSON())
			}
		}
		if _, err := streamAnthropic(t, c, userParams("x")); !errors.As(err, &aerr) || aerr.StatusCode != tc.status {
			t.Errorf("%d: anthropic stream error %v", tc.status, err)
		}

		// OpenAI, both forms, through the SDK.
		oc := openaiClient(s)
		_, err = oc.Chat.Completions.New(context.Background(), oaiParams("x"))
		var oerr *openai.Error
		if !errors.As(err, &oerr) || oerr.StatusCode != tc.status {
			t.Errorf("%d: openai error %v", tc.status, err)
		} else if oerr.Type != tc.oaiTyp || !strings.Contains(oerr.Message, tc.message) || oerr.Code == "" {
			t.Errorf("%d: openai error type %q code %q message %q", tc.status, oerr.Type, oerr.Code, oerr.Message)
		}
		if _, err := streamOpenAI(t, oc, oaiParams("x")); !errors.As(err, &oerr) || oerr.StatusCode != tc.status {
			t.Errorf("%d: openai stream error %v", tc.status, err)
		}
		if n := s.Remaining(""); n != 0 {
			t.Errorf("%d: %d fault turns left", tc.status, n)
		}
		noViolations(t, s)
	}
}

func TestCutStream(t *testing.T) {
	s := newServer(t)
	s.Script("", llmtest.Cut(), llmtest.Cut(), llmtest.Text("a longer answer that is cut").WithCut(), llmtest.Cut())

	msg, err := streamAnthropic(t, anthropicClient(s), userParams("x"))
	if err == nil {
		t.Errorf("anthropic stream ended without error: %+v", msg)
	}
	if _, err := streamOpenAI(t, openaiClient(s), oaiParams("x")); err == nil {
		t.Error("openai stream ended without error")
	}

	// On the wire: whole events, then half an event, then no more.
	res := post(t, s, "/v1/messages", `{"model":"m","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if res.err == nil {
		t.Error("raw read of a cut stream succeeded")
	}
	if !strings.HasPrefix(string(res.body), "event: message_start\n") || strings.HasSuffix(string(res.body), "\n\n") {
		t.Errorf("cut body %q", res.body)
	}

	// A non-streaming reply is cut in the middle of its JSON.
	c := anthropicClient(s)
	if _, err := c.Messages.New(context.Background(), userParams("x")); err == nil {
		t.Error("non-streaming cut succeeded")
	}
	if r := s.Requests()[0]; r.Finished.IsZero() || r.Status != 200 {
		t.Errorf("cut request not finished: %+v", r)
	}
}

func TestStreamErrorEvent(t *testing.T) {
	s := newServer(t)
	s.Script("", llmtest.StreamError("overloaded_error", "Overloaded"), llmtest.StreamError("overloaded_error", "Overloaded"),
		llmtest.StreamError("api_error", "internal"))
	_, err := streamAnthropic(t, anthropicClient(s), userParams("x"))
	if err == nil || !strings.Contains(err.Error(), "overloaded_error") {
		t.Errorf("anthropic: %v", err)
	}
	_, err = streamOpenAI(t, openaiClient(s), oaiParams("x"))
	if err == nil || !strings.Contains(err.Error(), "Overloaded") {
		t.Errorf("openai: %v", err)
	}
	// Without streaming the same fault is an HTTP error.
	res := post(t, s, "/v1/messages", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`)
	if res.status != 500 {
		t.Errorf("non-streaming status %d", res.status)
	}
}

func TestMalformedToolInput(t *testing.T) {
	const raw = `{"path": "a.go", "limit": `
	s := newServer(t)
	s.Script("", llmtest.MalformedToolUse("Read", raw), llmtest.MalformedToolUse("Read", raw), llmtest.MalformedToolUse("Read", raw))

	res := post(t, s, "/v1/messages", `{"model":"m","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	var joined strings.Builder
	for _, e := range parseSSE(t, res.body) {
		if e.name == "content_block_delta" {
			joined.WriteString(field(t, e.data, "delta", "partial_json").(string))
		}
	}
	if joined.String() != raw {
		t.Errorf("anthropic deltas joined to %q", joined.String())
	}

	acc, err := streamOpenAI(t, openaiClient(s), oaiParams("x"))
	if err != nil {
		t.Fatal(err)
	}
	if args := acc.Choices[0].Message.ToolCalls[0].Function.Arguments; args != raw || json.Valid([]byte(args)) {
		t.Errorf("openai arguments %q", args)
	}

	// Non-streamed Anthropic: the body itself is malformed.
	res = post(t, s, "/v1/messages", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`)
	if res.status != 200 || json.Valid(res.body) || !strings.Contains(string(res.body), raw) {
		t.Errorf("status %d body %s", res.status, res.body)
	}
}

func TestDelayAndLatency(t *testing.T) {
	s := newServer(t, llmtest.WithLatency(time.Millisecond))
	s.Script("", llmtest.Text("slow").WithDelay(time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	c := anthropicClient(s)
	done := make(chan error, 1)
	go func() {
		_, err := c.Messages.New(ctx, userParams("x"))
		done <- err
	}()
	for len(s.Requests()) == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled request: %v", err)
	}
}

func TestOpenAINonStreamingCutAndStreamError(t *testing.T) {
	s := newServer(t)
	s.Script("", llmtest.Cut(), llmtest.StreamError("overloaded_error", "Overloaded"))
	c := openaiClient(s)
	if _, err := c.Chat.Completions.New(context.Background(), oaiParams("x")); err == nil {
		t.Error("non-streaming cut succeeded")
	}
	_, err := c.Chat.Completions.New(context.Background(), oaiParams("x"))
	var oerr *openai.Error
	if !errors.As(err, &oerr) || oerr.StatusCode != 529 {
		t.Errorf("stream error without streaming: %v", err)
	}
}
