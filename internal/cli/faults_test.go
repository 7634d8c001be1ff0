package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// Faults through the whole command: each run ends within its bound, says
// why on stderr (text) or in api_retry events (stream-json), and still
// prints a complete result. The deadline of each run is a safety net, not
// what the test measures: a hang would need 10 minutes (retry-after 600)
// or forever (a stall, no headers) to end.

// fault is what the front server does to one request.
type fault int

const (
	stall         fault = iota + 1 // headers and message_start, then silence
	noHeaders                      // never answers
	retryAfter600                  // 429 with retry-after: 600
)

// faultFront answers its first requests with faults and proxies the rest
// to s.
func faultFront(t *testing.T, s *llmtest.Server, faults ...fault) string {
	t.Helper()
	target, err := url.Parse(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		var f fault
		if len(faults) > 0 {
			f, faults = faults[0], faults[1:]
		}
		mu.Unlock()
		if f == 0 {
			proxy.ServeHTTP(w, r)
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		switch f {
		case stall:
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_stall\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":0}}}\n\n"))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		case noHeaders:
			<-r.Context().Done()
		case retryAfter600:
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", "600")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// runBounded runs cadre with a safety deadline.
func runBounded(t *testing.T, env map[string]string, args ...string) proc {
	t.Helper()
	cmd, out, errb, _ := cadreCmd(t, env, "", args...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("cadre did not end; stderr:\n%s", errb)
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return proc{out.String(), errb.String(), code}
}

// resultOf returns the result object of json or stream-json output.
func resultOf(t *testing.T, out string) map[string]any {
	t.Helper()
	var res map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if m["type"] == "result" {
			res = m
		}
	}
	if res == nil {
		t.Fatalf("no result in %q", out)
	}
	for _, k := range []string{"subtype", "is_error", "num_turns", "duration_ms", "duration_api_ms", "total_cost_usd", "usage", "modelUsage",
		"permission_denials", "subagent_stats", "session_id", "terminal_reason"} {
		if _, ok := res[k]; !ok {
			t.Fatalf("result lacks %s: %v", k, res)
		}
	}
	return res
}

func TestFaultsThroughTheCLI(t *testing.T) {
	t.Parallel()
	// The faulty server is silent forever, so a bound only has to be
	// short enough for the test to end soon; it is kept generous (seconds,
	// not milliseconds) so that on a busy machine a slow but working answer
	// is never taken for a fault, and the tests check what happened, not
	// when. The wait for headers of an answer that goes through stays
	// long in the stall tests; the silence inside a working stream is
	// bounded by the same generous idle bound.
	const bound = "4000"
	quick := map[string]string{"CADRE_STREAM_IDLE_TIMEOUT_MS": "60000", "CADRE_HEADER_TIMEOUT_MS": bound}
	stalls := map[string]string{"CADRE_STREAM_IDLE_TIMEOUT_MS": bound, "CADRE_HEADER_TIMEOUT_MS": "60000"}
	with := func(env map[string]string, extra map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range env {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}

	t.Run("a stalled stream is cut and retried, visibly", func(t *testing.T) {
		t.Parallel()
		s, env := server(t)
		s.Script("", llmtest.Text("recovered"))
		env = with(env, stalls)
		env["ANTHROPIC_BASE_URL"] = faultFront(t, s, stall)
		p := runBounded(t, env, "-p", "hi", "--output-format", "stream-json", "--verbose")
		if p.code != 0 {
			t.Fatalf("code %d stderr %s", p.code, p.stderr)
		}
		var retry map[string]any
		for _, l := range strings.Split(p.stdout, "\n") {
			if strings.Contains(l, `"subtype":"api_retry"`) {
				_ = json.Unmarshal([]byte(l), &retry)
			}
		}
		if retry == nil || retry["error_status"] != nil || retry["max_retries"] != float64(2) || retry["cadre"].(map[string]any)["cause"] != "stalled" {
			t.Fatalf("api_retry %v\n%s", retry, p.stdout)
		}
		if res := resultOf(t, p.stdout); res["result"] != "recovered" {
			t.Fatalf("result %v", res)
		}
	})

	t.Run("text mode says why it waits", func(t *testing.T) {
		t.Parallel()
		s, env := server(t)
		s.Script("", llmtest.Text("recovered"))
		env = with(env, stalls)
		env["ANTHROPIC_BASE_URL"] = faultFront(t, s, stall)
		p := runBounded(t, env, "-p", "hi")
		if p.code != 0 || p.stdout != "recovered\n" || !strings.Contains(p.stderr, "model request failed (the stream stalled), retry 1 of 2") {
			t.Fatalf("code %d stdout %q stderr %q", p.code, p.stdout, p.stderr)
		}
	})

	t.Run("a stream that always stalls ends with a result", func(t *testing.T) {
		t.Parallel()
		s, env := server(t)
		env = with(env, stalls)
		env["ANTHROPIC_BASE_URL"] = faultFront(t, s, stall, stall, stall)
		p := runBounded(t, env, "-p", "hi", "--output-format", "json")
		res := resultOf(t, p.stdout)
		if p.code != ExitFailed || res["is_error"] != true || res["subtype"] != "error_during_execution" || !strings.Contains(res["result"].(string), "stalled") {
			t.Fatalf("code %d result %v", p.code, res)
		}
	})

	t.Run("no headers", func(t *testing.T) {
		t.Parallel()
		s, env := server(t)
		env = with(env, quick)
		env["ANTHROPIC_BASE_URL"] = faultFront(t, s, noHeaders, noHeaders)
		p := runBounded(t, env, "-p", "hi", "--output-format", "json")
		res := resultOf(t, p.stdout)
		if p.code != ExitFailed || !strings.Contains(res["result"].(string), "no response headers after 4s") || !strings.Contains(p.stderr, "(no response), retry 1 of 1") {
			t.Fatalf("code %d result %v", p.code, res)
		}
	})

	t.Run("retry-after 600 is not waited for", func(t *testing.T) {
		t.Parallel()
		s, env := server(t)
		env["ANTHROPIC_BASE_URL"] = faultFront(t, s, retryAfter600)
		p := runBounded(t, env, "-p", "hi", "--output-format", "json")
		res := resultOf(t, p.stdout)
		if p.code != ExitFailed || !strings.Contains(res["result"].(string), "asked to retry after 10m0s") || res["api_error_status"] != float64(429) {
			t.Fatalf("code %d result %v", p.code, res)
		}
	})

	t.Run("connection refused", func(t *testing.T) {
		t.Parallel()
		addr := refusingAddr(t)
		p := runBounded(t, map[string]string{"ANTHROPIC_BASE_URL": "http://" + addr, "ANTHROPIC_API_KEY": "k"}, "-p", "hi", "--output-format", "json")
		res := resultOf(t, p.stdout)
		if p.code != ExitFailed || !strings.Contains(res["result"].(string), "connection refused") || !strings.Contains(p.stderr, "retry 2 of 2") {
			t.Fatalf("code %d result %v stderr %s", p.code, res, p.stderr)
		}
	})

	t.Run("unknown host", func(t *testing.T) {
		t.Parallel()
		const host = "cadre-test-host.invalid"
		if _, err := net.LookupHost(host); err == nil || !isNotFound(err) {
			t.Skipf("this machine's resolver does not answer NXDOMAIN for %s (%v)", host, err)
		}
		p := runBounded(t, map[string]string{"ANTHROPIC_BASE_URL": "http://" + host, "ANTHROPIC_API_KEY": "k"}, "-p", "hi", "--output-format", "json")
		res := resultOf(t, p.stdout)
		if p.code != ExitFailed || !strings.Contains(res["result"].(string), "cannot resolve host "+host) || strings.Contains(p.stderr, "retry") {
			t.Fatalf("code %d result %v stderr %s", p.code, res, p.stderr)
		}
	})
}

func isNotFound(err error) bool {
	e, ok := err.(*net.DNSError)
	return ok && e.IsNotFound
}

// refusingAddr is an address that refuses connections for the whole test:
// a socket bound to it that does not listen, so no other test's server
// can take the port meanwhile.
func refusingAddr(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
}
