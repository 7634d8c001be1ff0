package anthropic

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
)

// TestStreamRequestBytesBounded guards what one model call of the bench
// request (20 tools, the array kept rendered) allocates on the client
// side, a local server's reading of it included: 234 KB when the tools
// were set through option.WithJSONSet (the array validated and compacted
// by encoding/json and the body copied once more on every request), 195
// KB with the body assembled once (bodyWithTools). Allocated bytes do not
// depend on the machine's load.
func TestStreamRequestBytesBounded(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates on its own")
	}
	ans := textReply("ok")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		ans(w, r)
	}))
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	m, err := New(Config{APIKey: "k", BaseURL: srv.URL, HTTPClient: &http.Client{Transport: tr}})
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
	const n = 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		call()
	}
	runtime.ReadMemStats(&after)
	per := (after.TotalAlloc - before.TotalAlloc) / n
	t.Logf("%d bytes allocated per model call", per)
	if per > 212_000 {
		t.Fatalf("%d bytes allocated per model call, want at most 212,000 (the tools array must not be encoded again per request)", per)
	}
}
