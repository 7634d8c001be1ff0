package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cadre-dev/cadre/llm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// reply answers one request of the fake server.
type reply func(w http.ResponseWriter, r *http.Request)

// fake is an httptest server that answers requests with queued replies in
// order and records every request.
type fake struct {
	t       *testing.T
	srv     *httptest.Server
	mu      sync.Mutex
	replies []reply
	bodies  [][]byte
	headers []http.Header
	paths   []string
}

func newFake(t *testing.T, replies ...reply) *fake {
	t.Helper()
	f := &fake{t: t, replies: replies}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	f.headers = append(f.headers, r.Header.Clone())
	f.paths = append(f.paths, r.URL.Path)
	var rep reply
	if len(f.replies) > 0 {
		rep = f.replies[0]
		f.replies = f.replies[1:]
	}
	f.mu.Unlock()
	if rep == nil {
		http.Error(w, `{"error":{"message":"fake: no reply left","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	rep(w, r)
}

func (f *fake) requests() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []map[string]any
	for _, b := range f.bodies {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			f.t.Fatalf("request body is not JSON: %v\n%s", err, b)
		}
		out = append(out, m)
	}
	return out
}

// sleeps records the back-off waits asked for instead of waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// newModel returns a Model pointed at f with a private transport that is
// closed at the end of the test, and the recorder of its back-off waits.
func newModel(t *testing.T, f *fake, cfg Config) (*Model, *sleeps) {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	s := &sleeps{}
	cfg.BaseURL = f.srv.URL + "/v1"
	cfg.HTTPClient = &http.Client{Transport: tr}
	if cfg.Sleep == nil {
		cfg.Sleep = s.sleep
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m, s
}

type obj = map[string]any

// sseBuilder writes Chat Completions chunks.
type sseBuilder struct{ b bytes.Buffer }

func (s *sseBuilder) data(v any) *sseBuilder {
	j, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	s.b.WriteString("data: ")
	s.b.Write(j)
	s.b.WriteString("\n\n")
	return s
}

func chunk(delta obj, finish any) obj {
	return obj{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test",
		"choices": []any{obj{"index": 0, "delta": delta, "finish_reason": finish}}}
}

func (s *sseBuilder) text(parts ...string) *sseBuilder {
	s.data(chunk(obj{"role": "assistant", "content": ""}, nil))
	for _, p := range parts {
		s.data(chunk(obj{"content": p}, nil))
	}
	return s
}

// call writes the first chunk of tool call i (id, name, maybe arguments).
func (s *sseBuilder) call(i int, id, name, args string) *sseBuilder {
	return s.data(chunk(obj{"tool_calls": []any{obj{"index": i, "id": id, "type": "function", "function": obj{"name": name, "arguments": args}}}}, nil))
}

// args writes more arguments of tool call i.
func (s *sseBuilder) args(i int, args string) *sseBuilder {
	return s.data(chunk(obj{"tool_calls": []any{obj{"index": i, "function": obj{"arguments": args}}}}, nil))
}

func (s *sseBuilder) finish(reason string) *sseBuilder {
	return s.data(chunk(obj{}, reason))
}

func (s *sseBuilder) usage(prompt, completion, cached int) *sseBuilder {
	return s.data(obj{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test", "choices": []any{},
		"usage": obj{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
			"prompt_tokens_details": obj{"cached_tokens": cached}}})
}

func (s *sseBuilder) done() *sseBuilder {
	s.b.WriteString("data: [DONE]\n\n")
	return s
}

func (s *sseBuilder) serve() reply {
	body := append([]byte(nil), s.b.Bytes()...)
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
	}
}

func textReply(parts ...string) reply {
	return new(sseBuilder).text(parts...).finish("stop").usage(10, 5, 0).done().serve()
}

// status returns a reply with an error status, OpenAI error JSON and headers.
func status(code int, errType, msg string, hdr ...string) reply {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(hdr); i += 2 {
			w.Header().Set(hdr[i], hdr[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		j, _ := json.Marshal(obj{"error": obj{"message": msg, "type": errType, "code": nil}})
		_, _ = w.Write(j)
	}
}

func collect(t *testing.T, m llm.Model, req *llm.Request) ([]llm.Event, error) {
	t.Helper()
	var evs []llm.Event
	for ev, err := range m.Stream(context.Background(), req) {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

func done(t *testing.T, evs []llm.Event) *llm.Response {
	t.Helper()
	if len(evs) == 0 || evs[len(evs)-1].Kind != llm.EventDone {
		t.Fatalf("stream did not end with EventDone: %+v", evs)
	}
	return evs[len(evs)-1].Response
}

// texts joins the text deltas after the last retry event.
func texts(evs []llm.Event) string {
	var sb strings.Builder
	for _, ev := range evs {
		switch ev.Kind {
		case llm.EventRetry:
			sb.Reset()
		case llm.EventTextDelta:
			sb.WriteString(ev.Text)
		}
	}
	return sb.String()
}

func retries(evs []llm.Event) []*llm.Retry {
	var out []*llm.Retry
	for _, ev := range evs {
		if ev.Kind == llm.EventRetry {
			out = append(out, ev.Retry)
		}
	}
	return out
}

func simpleRequest() *llm.Request {
	return &llm.Request{Model: "gpt-test", System: "be brief", Messages: []llm.Message{llm.UserText("hi")}}
}
