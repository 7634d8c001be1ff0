package anthropic

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
// order and records every request body.
type fake struct {
	t       *testing.T
	srv     *httptest.Server
	mu      sync.Mutex
	replies []reply
	bodies  [][]byte
	headers []http.Header
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
	var rep reply
	if len(f.replies) > 0 {
		rep = f.replies[0]
		f.replies = f.replies[1:]
	}
	f.mu.Unlock()
	if rep == nil {
		http.Error(w, `{"type":"error","error":{"type":"api_error","message":"fake: no reply left"}}`, http.StatusBadRequest)
		return
	}
	rep(w, r)
}

// requests returns the decoded bodies received so far.
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

// rawBodies returns the request bodies received so far.
func (f *fake) rawBodies() [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]byte(nil), f.bodies...)
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
	cfg.BaseURL = f.srv.URL
	cfg.HTTPClient = &http.Client{Transport: tr}
	if cfg.APIKey == "" {
		cfg.APIKey = "test-key"
	}
	if cfg.Sleep == nil {
		cfg.Sleep = s.sleep
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m, s
}

// sseBuilder writes Anthropic SSE events.
type sseBuilder struct{ b bytes.Buffer }

func (s *sseBuilder) ev(name string, data any) *sseBuilder {
	j, err := json.Marshal(data)
	if err != nil {
		panic(err)
	}
	s.b.WriteString("event: " + name + "\ndata: ")
	s.b.Write(j)
	s.b.WriteString("\n\n")
	return s
}

type obj = map[string]any

func (s *sseBuilder) start(inTok, cacheRead, cacheWrite int) *sseBuilder {
	return s.ev("message_start", obj{"type": "message_start", "message": obj{
		"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
		"content": []any{}, "stop_reason": nil,
		"usage": obj{"input_tokens": inTok, "output_tokens": 1, "cache_read_input_tokens": cacheRead, "cache_creation_input_tokens": cacheWrite},
	}})
}

func (s *sseBuilder) blockStart(i int, block obj) *sseBuilder {
	return s.ev("content_block_start", obj{"type": "content_block_start", "index": i, "content_block": block})
}

func (s *sseBuilder) delta(i int, d obj) *sseBuilder {
	return s.ev("content_block_delta", obj{"type": "content_block_delta", "index": i, "delta": d})
}

func (s *sseBuilder) blockStop(i int) *sseBuilder {
	return s.ev("content_block_stop", obj{"type": "content_block_stop", "index": i})
}

func (s *sseBuilder) text(i int, parts ...string) *sseBuilder {
	s.blockStart(i, obj{"type": "text", "text": ""})
	for _, p := range parts {
		s.delta(i, obj{"type": "text_delta", "text": p})
	}
	return s.blockStop(i)
}

func (s *sseBuilder) toolUse(i int, id, name string, jsonParts ...string) *sseBuilder {
	s.blockStart(i, obj{"type": "tool_use", "id": id, "name": name, "input": obj{}})
	for _, p := range jsonParts {
		s.delta(i, obj{"type": "input_json_delta", "partial_json": p})
	}
	return s.blockStop(i)
}

func (s *sseBuilder) end(stop string, outTok int) *sseBuilder {
	s.ev("message_delta", obj{"type": "message_delta", "delta": obj{"stop_reason": stop, "stop_sequence": nil}, "usage": obj{"output_tokens": outTok}})
	return s.ev("message_stop", obj{"type": "message_stop"})
}

// serve returns a reply that writes the built stream.
func (s *sseBuilder) serve() reply {
	body := append([]byte(nil), s.b.Bytes()...)
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
	}
}

func textReply(parts ...string) reply {
	return new(sseBuilder).start(10, 0, 0).text(0, parts...).end("end_turn", 5).serve()
}

// status returns a reply with an error status, JSON body and headers.
func status(code int, errType, msg string, hdr ...string) reply {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(hdr); i += 2 {
			w.Header().Set(hdr[i], hdr[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		j, _ := json.Marshal(obj{"type": "error", "error": obj{"type": errType, "message": msg}})
		_, _ = w.Write(j)
	}
}

// collect ranges over a stream and returns its events and final error.
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

// done returns the response of the EventDone that must end evs.
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
	return &llm.Request{Model: "claude-test", System: "be brief", Messages: []llm.Message{llm.UserText("hi")}}
}
