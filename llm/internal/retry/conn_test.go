package retry

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
)

// TestHTTPClientBodiesArriveWhole posts bodies of several sizes around
// the copy buffer's, from readers with and without WriteTo and one that
// reads a byte at a time, through HTTPClient's reused connection: each
// arrives whole.
func TestHTTPClientBodiesArriveWhole(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	hc := HTTPClient()
	defer hc.CloseIdleConnections()
	for _, size := range []int{1, 4000, copyBufSize - 1, copyBufSize, copyBufSize + 1, 3*copyBufSize + 7} {
		want := []byte(strings.Repeat("0123456789abcdef", size/16+1)[:size])
		for name, body := range map[string]io.Reader{
			"reader":   bytes.NewReader(want),
			"readonly": iotest.HalfReader(bytes.NewReader(want)),
			"onebyte":  iotest.OneByteReader(bytes.NewReader(want)),
		} {
			if name == "onebyte" && size > 4000 {
				continue // a write per byte: slow, and nothing more to see
			}
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, body)
			if err != nil {
				t.Fatal(err)
			}
			req.ContentLength = int64(size)
			res, err := hc.Do(req)
			if err != nil {
				t.Fatalf("%s %d: %v", name, size, err)
			}
			got, err := io.ReadAll(res.Body)
			_ = res.Body.Close()
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s %d: echoed %d bytes (%v)", name, size, len(got), err)
			}
		}
	}
}

// TestCopyConnReusesItsBuffer checks that a body copied to the
// connection without WriteTo takes its buffer from the pool: no
// allocation of a copy buffer per body once one is kept.
func TestCopyConnReusesItsBuffer(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go func() { _, _ = io.Copy(io.Discard, b) }()
	c := &copyConn{Conn: a, bufs: &sync.Pool{}}
	data := bytes.Repeat([]byte("x"), 3*copyBufSize)
	send := func() {
		r := io.LimitReader(bytes.NewReader(data), int64(len(data)))
		if n, err := c.ReadFrom(r); err != nil || n != int64(len(data)) {
			t.Fatalf("copied %d of %d: %v", n, len(data), err)
		}
	}
	send()
	if raceEnabled {
		return // the race detector's sync.Pool drops items at random
	}
	const n = 10
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		send()
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per >= copyBufSize/4 {
		t.Fatalf("%d bytes allocated per body copied, want a reused buffer", per)
	}
}
