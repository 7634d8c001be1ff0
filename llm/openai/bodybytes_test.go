package openai

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cadre-dev/cadre/llm/internal/allocguard"
	"github.com/cadre-dev/cadre/llm/internal/retry"
)

// TestStreamRequestBytesBounded guards what one model call of the bench
// request (20 tools) allocates on the client side, through the client a
// Model gets by default, a local server's reading of it included: 304 KB
// when the SDK encoded the tools on every request and copied the body to
// set "stream":true, ~80 KB with the tools array kept and the body sent
// in parts (79.3-79.4 KB; 148-159 KB under the race detector in six
// runs). As llm/anthropic's guard of the same name, it runs under the
// race detector with a bound of its own (sync.Pool drops a quarter of
// what it is given there) and takes the lowest of five rounds' means.
func TestStreamRequestBytesBounded(t *testing.T) {
	ans := textReply("ok")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		ans(w, r)
	}))
	defer srv.Close()
	hc := retry.HTTPClient()
	defer hc.CloseIdleConnections()
	m, err := New(Config{APIKey: "k", BaseURL: srv.URL, HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	req := benchRequest()
	call := func() {
		for _, err := range m.Stream(context.Background(), req) {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	call() // the connection, the rendered tools array
	per := allocguard.BytesPerCall(call, 5, 20)
	bound := allocguard.Bound(88_000, 175_000)
	t.Logf("%d bytes allocated per model call (race detector: %v; bound %d)", per, allocguard.RaceEnabled(), bound)
	if per > bound {
		t.Fatalf("%d bytes allocated per model call, want at most %d (the body must not be copied whole, nor the tools array encoded again, per request)", per, bound)
	}
}
