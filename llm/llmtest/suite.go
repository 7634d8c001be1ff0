package llmtest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/llm"
)

// AdapterOptions are what RunAdapterSuite asks of the llm.Model it tests;
// an adapter's constructor maps them onto its own Config.
type AdapterOptions struct {
	// URL is the server's root, without /v1: an adapter whose base URL
	// includes the version (OpenAI's) adds "/v1".
	URL string
	// HTTPClient carries the requests (the suite closes its idle
	// connections when the test ends).
	HTTPClient *http.Client
	// HeaderTimeout and IdleTimeout bound a response's headers and the
	// gap between stream events; zero leaves the adapter's default.
	HeaderTimeout, IdleTimeout time.Duration
	// MaxRetryAfter and RetryBudget bound the waits a server may ask for;
	// zero leaves the adapter's default.
	MaxRetryAfter, RetryBudget time.Duration
	// Sleep waits between attempts; nil means the adapter's real timer.
	Sleep func(ctx context.Context, d time.Duration) error
}

// RunAdapterSuite runs the tests every provider adapter of llm.Model must
// pass, against real HTTP speaking the adapter's wire protocol: a stream
// that stalls after it started is cut and retried, and given up after the
// retries; a server that never sends headers is retried once; a
// retry-after beyond the cap ends the request at once; a refused
// connection gives up quickly and an unknown host at once; a cancelled
// context ends a back-off; a tool call whose input passes
// llm.MaxToolInputBytes is dropped, not held. newModel builds the adapter
// from o (failing t if it cannot).
func RunAdapterSuite(t *testing.T, newModel func(t *testing.T, o AdapterOptions) llm.Model, wire Protocol) {
	t.Helper()
	a := &adapter{newModel: newModel, wire: wire}
	switch wire {
	case Anthropic:
		a.model = "claude-test"
	case OpenAI:
		a.model = "gpt-test"
	default:
		t.Fatalf("RunAdapterSuite: unknown wire protocol %q", wire)
	}
	t.Run("StalledStreamIsCutAndRetried", a.stalledStreamIsCutAndRetried)
	t.Run("StalledEveryTimeGivesUp", a.stalledEveryTimeGivesUp)
	t.Run("NoHeadersIsRetriedOnce", a.noHeadersIsRetriedOnce)
	t.Run("RetryAfterBeyondTheCapEndsAtOnce", a.retryAfterBeyondTheCapEndsAtOnce)
	t.Run("ConnectionRefusedGivesUpQuickly", a.connectionRefusedGivesUpQuickly)
	t.Run("UnknownHostIsNotRetried", a.unknownHostIsNotRetried)
	t.Run("CancelDuringBackoff", a.cancelDuringBackoff)
	t.Run("ToolInputOverLimitIsDropped", a.toolInputOverLimitIsDropped)
}

// adapter is one run of the suite.
type adapter struct {
	newModel func(t *testing.T, o AdapterOptions) llm.Model
	wire     Protocol
	model    string
}

// misbehaviour is what the front server does to one request.
type misbehaviour int

const (
	// stallAfterStart sends headers and the stream's first event, then
	// nothing.
	stallAfterStart misbehaviour = iota + 1
	// withholdHeaders accepts the request and never answers.
	withholdHeaders
)

// The first event of a stream, per protocol, after which a stalling front
// goes quiet.
const (
	anthropicFirstEvent = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_stall\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":0}}}\n\n"
	openAIFirstEvent    = "data: {\"id\":\"chatcmpl-stall\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"par\"}}]}\n\n"
)

// front answers its first requests with the given misbehaviours, until the
// client gives up on them, and proxies the rest to the scripted server.
type front struct {
	mu    sync.Mutex
	todo  []misbehaviour
	hits  int
	first string
	proxy *httputil.ReverseProxy
	srv   *httptest.Server
}

func (a *adapter) newFront(t *testing.T, s *Server, todo ...misbehaviour) *front {
	t.Helper()
	target, err := url.Parse(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	f := &front{todo: todo, first: anthropicFirstEvent, proxy: httputil.NewSingleHostReverseProxy(target)}
	if a.wire == OpenAI {
		f.first = openAIFirstEvent
	}
	f.proxy.FlushInterval = -1
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *front) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.hits++
	var m misbehaviour
	if len(f.todo) > 0 {
		m, f.todo = f.todo[0], f.todo[1:]
	}
	f.mu.Unlock()
	if m != 0 {
		// With the body read, the server watches the connection, so the
		// request's context ends when the client gives up.
		_, _ = io.Copy(io.Discard, r.Body)
	}
	switch m {
	case stallAfterStart:
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(f.first))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	case withholdHeaders:
		<-r.Context().Done()
	default:
		f.proxy.ServeHTTP(w, r)
	}
}

// requests counts the requests the front has seen.
func (f *front) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits
}

// waits records the waits between attempts instead of sleeping them.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) sleep(_ context.Context, d time.Duration) error {
	w.mu.Lock()
	w.d = append(w.d, d)
	w.mu.Unlock()
	return nil
}

func (w *waits) all() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.d...)
}

// bounded builds the adapter for url with o's bounds, its own transport
// and recorded waits (o.Sleep, when set, wins).
func (a *adapter) bounded(t *testing.T, url string, o AdapterOptions) (llm.Model, *waits) {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	w := &waits{}
	o.URL, o.HTTPClient = url, &http.Client{Transport: tr}
	if o.Sleep == nil {
		o.Sleep = w.sleep
	}
	return a.newModel(t, o), w
}

// streamAll runs one request and returns its retries, the answer text and
// the error that ended it.
func (a *adapter) streamAll(m llm.Model) (retries []llm.Retry, text string, err error) {
	req := &llm.Request{Model: a.model, Messages: []llm.Message{llm.UserText("bounds: answer")}}
	for ev, e := range m.Stream(context.Background(), req) {
		switch {
		case e != nil:
			return retries, text, e
		case ev.Kind == llm.EventRetry:
			retries = append(retries, *ev.Retry)
		case ev.Kind == llm.EventDone:
			text = ev.Response.Message.Text()
		}
	}
	return retries, text, nil
}

func (a *adapter) stalledStreamIsCutAndRetried(t *testing.T) {
	s := NewServer()
	t.Cleanup(s.Close)
	s.Script("", Text("the answer after a stall"))
	f := a.newFront(t, s, stallAfterStart)
	m, _ := a.bounded(t, f.srv.URL, AdapterOptions{IdleTimeout: 300 * time.Millisecond})
	retries, text, err := a.streamAll(m)
	if err != nil || text != "the answer after a stall" {
		t.Fatalf("text %q err %v", text, err)
	}
	if len(retries) == 0 || retries[0].Cause != llm.RetryStalled || retries[0].MaxRetries != 2 || !strings.Contains(retries[0].Err, "no event for 300ms") {
		t.Fatalf("retries %+v", retries)
	}
	s.Check(t)
}

func (a *adapter) stalledEveryTimeGivesUp(t *testing.T) {
	s := NewServer()
	t.Cleanup(s.Close)
	f := a.newFront(t, s, stallAfterStart, stallAfterStart, stallAfterStart)
	m, _ := a.bounded(t, f.srv.URL, AdapterOptions{IdleTimeout: 100 * time.Millisecond})
	retries, _, err := a.streamAll(m)
	if err == nil || !strings.Contains(err.Error(), "giving up after 3 attempts") || !strings.Contains(err.Error(), "stalled") {
		t.Fatalf("err %v", err)
	}
	if n := f.requests(); len(retries) != 2 || n != 3 {
		t.Fatalf("%d retries, %d requests", len(retries), n)
	}
}

func (a *adapter) noHeadersIsRetriedOnce(t *testing.T) {
	s := NewServer()
	t.Cleanup(s.Close)
	f := a.newFront(t, s, withholdHeaders, withholdHeaders)
	m, _ := a.bounded(t, f.srv.URL, AdapterOptions{HeaderTimeout: 100 * time.Millisecond})
	retries, _, err := a.streamAll(m)
	if err == nil || !strings.Contains(err.Error(), "no response headers after 100ms") || !strings.Contains(err.Error(), "giving up after 2 attempts") {
		t.Fatalf("err %v", err)
	}
	if len(retries) != 1 || retries[0].Cause != llm.RetryNoHeaders || retries[0].Status != 0 {
		t.Fatalf("retries %+v", retries)
	}
}

func (a *adapter) retryAfterBeyondTheCapEndsAtOnce(t *testing.T) {
	s := NewServer()
	t.Cleanup(s.Close)
	s.Script("", RateLimited(600*time.Second), Text("never"))
	m, w := a.bounded(t, s.URL(), AdapterOptions{})
	retries, _, err := a.streamAll(m)
	if err == nil || !strings.Contains(err.Error(), "asked to retry after 10m0s") || !strings.Contains(err.Error(), "429") {
		t.Fatalf("err %v", err)
	}
	if len(retries) != 0 || len(w.all()) != 0 {
		t.Fatalf("retries %+v waits %v", retries, w.all())
	}
}

func (a *adapter) connectionRefusedGivesUpQuickly(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	m, w := a.bounded(t, "http://"+addr, AdapterOptions{})
	retries, _, err := a.streamAll(m)
	if err == nil || !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), "giving up after 3 attempts") {
		t.Fatalf("err %v", err)
	}
	var total time.Duration
	for _, d := range w.all() {
		total += d
	}
	if len(retries) != 2 || total > 2*time.Second {
		t.Fatalf("retries %+v, waits %v", retries, w.all())
	}
}

func (a *adapter) unknownHostIsNotRetried(t *testing.T) {
	const host = "cadre-test-host.invalid"
	var dnsErr *net.DNSError
	if _, err := net.LookupHost(host); err == nil || !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Skipf("this machine's resolver does not answer NXDOMAIN for %s (%v)", host, err)
	}
	m, w := a.bounded(t, "http://"+host, AdapterOptions{})
	retries, _, err := a.streamAll(m)
	if err == nil || !strings.Contains(err.Error(), "cannot resolve host "+host) {
		t.Fatalf("err %v", err)
	}
	if len(retries) != 0 || len(w.all()) != 0 {
		t.Fatalf("retries %+v waits %v", retries, w.all())
	}
}

// cancelDuringBackoff: a server asks for an hour's wait, the adapter's
// real timer starts it, and cancelling the context ends the request.
func (a *adapter) cancelDuringBackoff(t *testing.T) {
	t.Parallel()
	s := NewServer()
	t.Cleanup(s.Close)
	t.Cleanup(func() { s.Check(t) })
	s.Script("task-hour", RateLimited(time.Hour))
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	m := a.newModel(t, AdapterOptions{URL: s.URL(), HTTPClient: &http.Client{Transport: tr}, MaxRetryAfter: 2 * time.Hour, RetryBudget: 2 * time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var last error
	for ev, err := range m.Stream(ctx, &llm.Request{Model: a.model, Messages: []llm.Message{llm.UserText("task-hour")}}) {
		if err != nil {
			last = err
			break
		}
		if ev.Kind == llm.EventRetry {
			if ev.Retry.Wait != time.Hour {
				t.Errorf("wait = %s, want the server's hour", ev.Retry.Wait)
			}
			cancel() // the real timer would wait an hour
		}
	}
	if !errors.Is(last, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", last)
	}
}

// toolInputOverLimitIsDropped: a tool call whose streamed input passes
// llm.MaxToolInputBytes is not held: the block comes back with Input {}
// and InputOverLimit counting the bytes, and a call beside it keeps its
// input.
func (a *adapter) toolInputOverLimitIsDropped(t *testing.T) {
	t.Parallel()
	s := NewServer()
	t.Cleanup(s.Close)
	t.Cleanup(func() { s.Check(t) })
	m, _ := a.bounded(t, s.URL(), AdapterOptions{})
	huge := strings.Repeat("x", llm.MaxToolInputBytes+10)
	s.Script("task-huge", ToolUses(
		Call{Name: "Read", Input: map[string]string{"file_path": huge}},
		Call{Name: "Glob", Input: map[string]string{"pattern": "*.go"}}))
	tools := []llm.ToolSpec{
		{Name: "Read", Description: "Read a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}`)},
		{Name: "Glob", Description: "Find files.", InputSchema: json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string"}},"required":["pattern"]}`)},
	}
	var resp *llm.Response
	for ev, err := range m.Stream(context.Background(), &llm.Request{Model: a.model, Tools: tools, Messages: []llm.Message{llm.UserText("task-huge")}}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == llm.EventDone {
			resp = ev.Response
		}
	}
	if resp == nil {
		t.Fatal("the stream ended without EventDone")
	}
	uses := resp.Message.ToolUses()
	if len(uses) != 2 {
		t.Fatalf("calls %+v", uses)
	}
	if string(uses[0].Input) != "{}" || uses[0].InputOverLimit <= llm.MaxToolInputBytes || uses[0].InvalidInput != "" {
		t.Fatalf("oversized call: input %.40s, over %d", uses[0].Input, uses[0].InputOverLimit)
	}
	if string(uses[1].Input) != `{"pattern":"*.go"}` || uses[1].InputOverLimit != 0 {
		t.Fatalf("the other call: %s %d", uses[1].Input, uses[1].InputOverLimit)
	}
}
