package openai

import (
	"context"
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
	"github.com/cadre-dev/cadre/llm/llmtest"
)

// The bounds that keep a request from hanging, against real HTTP: a server
// that stalls mid-stream, one that never sends headers, an address that
// refuses connections and a host that does not resolve.

// misbehaviour is what the front server does to one request.
type misbehaviour int

const (
	// stallAfterStart sends headers and a first chunk, then nothing.
	stallAfterStart misbehaviour = iota + 1
	// withholdHeaders accepts the request and never answers.
	withholdHeaders
)

// front answers its first requests with the given misbehaviours, until the
// client gives up on them, and proxies the rest to the scripted server.
type front struct {
	mu    sync.Mutex
	todo  []misbehaviour
	hits  int
	proxy *httputil.ReverseProxy
	srv   *httptest.Server
}

func newFront(t *testing.T, s *llmtest.Server, todo ...misbehaviour) *front {
	t.Helper()
	target, err := url.Parse(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	f := &front{todo: todo, proxy: httputil.NewSingleHostReverseProxy(target)}
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
		_, _ = w.Write([]byte("data: {\"id\":\"chatcmpl-stall\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"par\"}}]}\n\n"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	case withholdHeaders:
		<-r.Context().Done()
	default:
		f.proxy.ServeHTTP(w, r)
	}
}

// boundedModel returns a Model for baseURL with tight bounds and waits
// that are recorded, not slept.
func boundedModel(t *testing.T, baseURL string, cfg Config) (*Model, *[]time.Duration) {
	t.Helper()
	var mu sync.Mutex
	waits := &[]time.Duration{}
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	cfg.BaseURL, cfg.APIKey, cfg.HTTPClient = baseURL+"/v1", "test", &http.Client{Transport: tr}
	cfg.Sleep = func(_ context.Context, d time.Duration) error {
		mu.Lock()
		*waits = append(*waits, d)
		mu.Unlock()
		return nil
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m, waits
}

// streamAll runs one request and returns its retries, the answer text and
// the error that ended it.
func streamAll(m *Model) (retries []llm.Retry, text string, err error) {
	req := &llm.Request{Model: "gpt-test", Messages: []llm.Message{llm.UserText("bounds: answer")}}
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

func TestStalledStreamIsCutAndRetried(t *testing.T) {
	s := llmtest.NewServer()
	t.Cleanup(s.Close)
	s.Script("", llmtest.Text("the answer after a stall"))
	f := newFront(t, s, stallAfterStart)
	m, _ := boundedModel(t, f.srv.URL, Config{IdleTimeout: 300 * time.Millisecond})
	retries, text, err := streamAll(m)
	if err != nil || text != "the answer after a stall" {
		t.Fatalf("text %q err %v", text, err)
	}
	if len(retries) == 0 || retries[0].Cause != "stalled" || retries[0].MaxRetries != 2 || !strings.Contains(retries[0].Err, "no event for 300ms") {
		t.Fatalf("retries %+v", retries)
	}
	s.Check(t)
}

func TestStalledEveryTimeGivesUp(t *testing.T) {
	s := llmtest.NewServer()
	t.Cleanup(s.Close)
	f := newFront(t, s, stallAfterStart, stallAfterStart, stallAfterStart)
	m, _ := boundedModel(t, f.srv.URL, Config{IdleTimeout: 100 * time.Millisecond})
	retries, _, err := streamAll(m)
	if err == nil || !strings.Contains(err.Error(), "giving up after 3 attempts") || !strings.Contains(err.Error(), "stalled") {
		t.Fatalf("err %v", err)
	}
	if len(retries) != 2 || f.hits != 3 {
		t.Fatalf("%d retries, %d requests", len(retries), f.hits)
	}
}

func TestNoHeadersIsRetriedOnce(t *testing.T) {
	s := llmtest.NewServer()
	t.Cleanup(s.Close)
	f := newFront(t, s, withholdHeaders, withholdHeaders)
	m, _ := boundedModel(t, f.srv.URL, Config{HeaderTimeout: 100 * time.Millisecond})
	retries, _, err := streamAll(m)
	if err == nil || !strings.Contains(err.Error(), "no response headers after 100ms") || !strings.Contains(err.Error(), "giving up after 2 attempts") {
		t.Fatalf("err %v", err)
	}
	if len(retries) != 1 || retries[0].Cause != "no_headers" || retries[0].Status != 0 {
		t.Fatalf("retries %+v", retries)
	}
}

func TestRetryAfterBeyondTheCapEndsAtOnce(t *testing.T) {
	s := llmtest.NewServer()
	t.Cleanup(s.Close)
	s.Script("", llmtest.RateLimited(600*time.Second), llmtest.Text("never"))
	m, waits := boundedModel(t, s.URL(), Config{})
	retries, _, err := streamAll(m)
	if err == nil || !strings.Contains(err.Error(), "asked to retry after 10m0s") || !strings.Contains(err.Error(), "429") {
		t.Fatalf("err %v", err)
	}
	if len(retries) != 0 || len(*waits) != 0 {
		t.Fatalf("retries %+v waits %v", retries, *waits)
	}
}

func TestConnectionRefusedGivesUpQuickly(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	m, waits := boundedModel(t, "http://"+addr, Config{})
	retries, _, err := streamAll(m)
	if err == nil || !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), "giving up after 3 attempts") {
		t.Fatalf("err %v", err)
	}
	var total time.Duration
	for _, w := range *waits {
		total += w
	}
	if len(retries) != 2 || total > 2*time.Second {
		t.Fatalf("retries %+v, waits %v", retries, *waits)
	}
}

func TestUnknownHostIsNotRetried(t *testing.T) {
	const host = "cadre-test-host.invalid"
	var dnsErr *net.DNSError
	if _, err := net.LookupHost(host); err == nil || !asDNSNotFound(err, &dnsErr) {
		t.Skipf("this machine's resolver does not answer NXDOMAIN for %s (%v)", host, err)
	}
	m, waits := boundedModel(t, "http://"+host, Config{})
	retries, _, err := streamAll(m)
	if err == nil || !strings.Contains(err.Error(), "cannot resolve host "+host) {
		t.Fatalf("err %v", err)
	}
	if len(retries) != 0 || len(*waits) != 0 {
		t.Fatalf("retries %+v waits %v", retries, *waits)
	}
}

func asDNSNotFound(err error, target **net.DNSError) bool {
	e, ok := err.(*net.DNSError)
	*target = e
	return ok && e.IsNotFound
}
