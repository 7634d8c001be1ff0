// Package retry is what the provider adapters share: the retry policy
// (which failures are worth another attempt, how long to wait — jittered
// exponential back-off, never less than the server's retry-after), the
// bounds that keep a request from hanging (a wait for headers, an idle
// stream, a retry-after too long to honour, an overall budget of waiting,
// a connection nobody answers), the attempt loop that tells the consumer
// about each retry, and the plumbing of their HTTP clients (default client,
// base URL check, header order).
package retry

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/internal/budget"
)

// Policy is the retry schedule of one model client.
type Policy struct {
	// Retries is how many times a failed attempt is retried.
	Retries int
	// Base and Max bound the exponential back-off.
	Base, Max time.Duration
	// Bounds keep one request from hanging.
	Bounds
	// Sleep waits between attempts; tests pass a recorder.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Bounds are the limits that end a request which would otherwise hang.
// Zero fields take the package defaults (see WithDefaults).
type Bounds struct {
	// HeaderTimeout bounds the wait for the response headers of one
	// attempt. An attempt that gets none is retried once.
	HeaderTimeout time.Duration
	// IdleTimeout bounds the silence between two events of a stream
	// (headers arrived, then nothing): the stalled attempt is cut and
	// retried, at most twice.
	IdleTimeout time.Duration
	// MaxRetryAfter is the longest retry-after honoured: a server asking
	// for a longer wait ends the request at once, with a message naming
	// the wait it asked for, instead of leaving the run silent for it.
	MaxRetryAfter time.Duration
	// Budget bounds the total time one request spends waiting between
	// its attempts.
	Budget time.Duration
}

// Defaults of Bounds. A stream can be quiet for minutes while the model
// thinks without streaming its thoughts, so the idle bound is generous;
// servers send headers as soon as they accept a request.
const (
	DefaultHeaderTimeout = 60 * time.Second
	DefaultIdleTimeout   = 3 * time.Minute
	DefaultMaxRetryAfter = 60 * time.Second
	DefaultBudget        = 3 * time.Minute
)

// WithDefaults returns b with every zero field set from def, and def's
// zero fields from the package defaults. Negative durations are errors.
func (b Bounds) WithDefaults(def Bounds) (Bounds, error) {
	fields := []struct {
		name     string
		v        *time.Duration
		def, pkg time.Duration
	}{
		{"HeaderTimeout", &b.HeaderTimeout, def.HeaderTimeout, DefaultHeaderTimeout},
		{"IdleTimeout", &b.IdleTimeout, def.IdleTimeout, DefaultIdleTimeout},
		{"MaxRetryAfter", &b.MaxRetryAfter, def.MaxRetryAfter, DefaultMaxRetryAfter},
		{"RetryBudget", &b.Budget, def.Budget, DefaultBudget},
	}
	for _, f := range fields {
		switch {
		case *f.v < 0:
			return Bounds{}, fmt.Errorf("negative %s %v", f.name, *f.v)
		case *f.v == 0 && f.def > 0:
			*f.v = f.def
		case *f.v == 0:
			*f.v = f.pkg
		}
	}
	return b, nil
}

// Delay returns the wait before retry number attempt (1-based): a random
// duration in [d/2, d] where d doubles from Base up to Max, and never less
// than what the server asked for.
func (p Policy) Delay(attempt int, retryAfter time.Duration) time.Duration {
	d := p.Base
	for i := 1; i < attempt && d < p.Max; i++ {
		d *= 2
	}
	d = min(d, p.Max)
	if half := d / 2; half > 0 {
		d = half + rand.N(half+1)
	}
	return max(d, retryAfter)
}

// Sleep waits for d or until ctx is done.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// After reads retry-after-ms (milliseconds) or retry-after (seconds or an
// HTTP date) from h; 0 when absent or unreadable.
func After(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 && s < 1e9 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// RetryableStatus reports whether an HTTP status is worth another attempt:
// 408, 409, 429, 500, 502, 503, 504 and 529 (overloaded).
func RetryableStatus(status int) bool {
	switch status {
	case http.StatusRequestTimeout, http.StatusConflict, http.StatusTooManyRequests,
		http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable,
		http.StatusGatewayTimeout, 529:
		return true
	}
	return false
}

// Cause says why an attempt failed; it decides how often the failure is
// retried and how long the wait before the next attempt is.
type Cause int

// Causes of a failed attempt.
const (
	// CauseStatus is an HTTP error status or an error event in the stream.
	CauseStatus Cause = iota
	// CauseCut is a stream that ended before the answer was complete.
	CauseCut
	// CauseStalled is a stream that went silent past the idle timeout.
	CauseStalled
	// CauseNoHeaders is a server that sent no headers within the header
	// timeout. Retried once.
	CauseNoHeaders
	// CauseRefused is a connection refused: nothing listens at the
	// address. Retried twice, quickly, so a wrong URL fails in seconds.
	CauseRefused
	// CauseDNS is a host name that does not resolve. Never retried.
	CauseDNS
	// CauseNetwork is any other transport error (reset, EOF, TLS, a DNS
	// timeout).
	CauseNetwork
)

// String names the cause in events and messages.
func (c Cause) String() string {
	switch c {
	case CauseStatus:
		return "status"
	case CauseCut:
		return "cut"
	case CauseStalled:
		return "stalled"
	case CauseNoHeaders:
		return "no_headers"
	case CauseRefused:
		return "connection_refused"
	case CauseDNS:
		return "dns"
	case CauseNetwork:
		return "network"
	}
	return "unknown"
}

// Failure is why one attempt did not produce a response.
type Failure struct {
	Err error
	// Status is the HTTP status, 0 for a cut stream or a connection error.
	Status int
	// Cause classifies the failure.
	Cause Cause
	// Retryable says the failure is worth another attempt.
	Retryable bool
	// After is the server's retry-after.
	After time.Duration
}

// retriesFor is how many retries a cause gets at most.
func (p Policy) retriesFor(c Cause) int {
	switch c {
	case CauseNoHeaders:
		return min(p.Retries, 1)
	case CauseStalled, CauseRefused:
		return min(p.Retries, 2)
	case CauseDNS:
		return 0
	}
	return p.Retries
}

// waitFor is the wait before retry number n of a failure: a connection
// refused is retried quickly, everything else backs off.
func (p Policy) waitFor(n int, f *Failure) time.Duration {
	d := p.Delay(n, f.After)
	if f.Cause == CauseRefused {
		d = min(d, time.Second)
	}
	return d
}

// StatusText names the status for messages.
func (f *Failure) StatusText() string {
	if f.Status == 0 {
		return "error (no HTTP status)"
	}
	return fmt.Sprintf("status %d", f.Status)
}

// Attempt runs one request, yielding deltas as they arrive. It returns the
// assembled response, or stopped when the consumer quit, or the failure.
type Attempt func() (resp *llm.Response, stopped bool, f *Failure)

// Run calls attempt until it succeeds, fails for good, the retries run
// out, the bounds end it or ctx ends, and yields the outcome: EventDone with
// the response, or an error. Before each wait it yields an EventRetry.
// provider prefixes its error messages.
func Run(ctx context.Context, p Policy, provider string, attempt Attempt, yield func(llm.Event, error) bool) {
	// The waits of a request to a fallback model count against the same
	// budget as those of the request it replaces (llm.WithFallback).
	ledger := budget.From(ctx)
	waited := ledger.Waited()
	perCause := map[Cause]int{}
	for n := 1; ; n++ {
		resp, stopped, f := attempt()
		if stopped {
			return
		}
		if f == nil {
			yield(llm.Event{Kind: llm.EventDone, Response: resp}, nil)
			return
		}
		if ctx.Err() != nil {
			yield(llm.Event{}, fmt.Errorf("%s: %w", provider, ctx.Err()))
			return
		}
		if !f.Retryable {
			yield(llm.Event{}, f.Err)
			return
		}
		perCause[f.Cause]++
		if max := p.retriesFor(f.Cause); n > p.Retries || perCause[f.Cause] > max {
			yield(llm.Event{}, fmt.Errorf("%s: giving up after %d attempts: last %s: %w", provider, n, f.StatusText(), f.Err))
			return
		}
		if p.MaxRetryAfter > 0 && f.After > p.MaxRetryAfter {
			yield(llm.Event{}, fmt.Errorf("%s: giving up: the server asked to retry after %v, longer than the %v cadre waits (%s): %w",
				provider, f.After.Round(time.Second), p.MaxRetryAfter, f.StatusText(), f.Err))
			return
		}
		wait := p.waitFor(n, f)
		if p.Budget > 0 && waited+wait > p.Budget {
			yield(llm.Event{}, fmt.Errorf("%s: giving up after %d attempts: the retry budget of %v is spent: last %s: %w",
				provider, n, p.Budget, f.StatusText(), f.Err))
			return
		}
		waited += wait
		ledger.Charge(wait)
		ev := llm.Event{Kind: llm.EventRetry, Retry: &llm.Retry{
			Attempt: n, MaxRetries: min(p.Retries, p.retriesFor(f.Cause)), Status: f.Status, Wait: wait,
			Cause: llm.RetryCause(f.Cause.String()), Err: f.Err.Error(),
		}}
		if !yield(ev, nil) {
			return
		}
		if err := p.Sleep(ctx, wait); err != nil {
			yield(llm.Event{}, fmt.Errorf("%s: waiting to retry: %w", provider, err))
			return
		}
	}
}

// Defaults of a Policy's fields.
const (
	DefaultRetries = 8
	DefaultBase    = 500 * time.Millisecond
	DefaultMax     = 30 * time.Second
)

// NewPolicy fills in the defaults the adapters document: retries 0 means
// DefaultRetries and a negative count means never; zero durations mean the
// defaults; a nil sleep waits for real. It fails when max < base.
func NewPolicy(retries int, base, max time.Duration, sleep func(context.Context, time.Duration) error) (Policy, error) {
	switch {
	case retries == 0:
		retries = DefaultRetries
	case retries < 0:
		retries = 0
	}
	if base <= 0 {
		base = DefaultBase
	}
	if max <= 0 {
		max = DefaultMax
	}
	if max < base {
		return Policy{}, fmt.Errorf("RetryMax %v is less than RetryBase %v", max, base)
	}
	if sleep == nil {
		sleep = Sleep
	}
	bounds, _ := Bounds{}.WithDefaults(Bounds{})
	return Policy{Retries: retries, Base: base, Max: max, Bounds: bounds, Sleep: sleep}, nil
}

// MaxIdleConnsPerHost is how many idle connections to the model's host
// HTTPClient keeps: enough for every agent of a wide fan-out (the spawn
// gate runs up to 20 sub-agents at once, plus the main agent and the
// background ones) to find a connection ready for its next request.
// net/http's default of 2 made 14 of 16 sub-agents open a new connection
// (a TCP, on a real API also a TLS, handshake) for every turn.
const MaxIdleConnsPerHost = 64

// HTTPClient is the client an adapter uses when none is given: no overall
// timeout (answers stream for minutes; the attempt's Watchdog bounds the
// waits instead), a 10-second bound on opening a connection, so an
// address that drops packets fails like one that refuses them, and up to
// MaxIdleConnsPerHost idle connections kept for reuse; a request body is
// copied to a plain connection through a reused buffer (conn.go).
func HTTPClient() *http.Client {
	c := &http.Client{}
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		t = t.Clone()
		t.DialContext = reuseCopyBuffers((&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext)
		t.MaxIdleConnsPerHost = MaxIdleConnsPerHost
		t.MaxIdleConns = max(t.MaxIdleConns, MaxIdleConnsPerHost)
		c.Transport = t
	}
	return c
}

// CheckBaseURL parses a provider base URL, which must be http(s) with a
// host.
func CheckBaseURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("bad base URL %q", s)
	}
	return u, nil
}

// SortedKeys returns the keys of extra headers in order, so requests are
// built the same way every time.
func SortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
