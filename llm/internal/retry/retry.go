// Package retry is what the provider adapters share: the retry policy
// (which failures are worth another attempt, how long to wait — jittered
// exponential back-off, never less than the server's retry-after), the
// attempt loop that tells the consumer about each retry, and the plumbing
// of their HTTP clients (default client, base URL check, header order).
package retry

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/llm"
)

// Policy is the retry schedule of one model client.
type Policy struct {
	// Retries is how many times a failed attempt is retried.
	Retries int
	// Base and Max bound the exponential back-off.
	Base, Max time.Duration
	// Sleep waits between attempts; tests pass a recorder.
	Sleep func(ctx context.Context, d time.Duration) error
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

// Failure is why one attempt did not produce a response.
type Failure struct {
	Err error
	// Status is the HTTP status, 0 for a cut stream or a connection error.
	Status int
	// Retryable says the failure is worth another attempt.
	Retryable bool
	// After is the server's retry-after.
	After time.Duration
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
// out or ctx ends, and yields the outcome: EventDone with the response, or
// an error. Before each wait it yields an EventRetry. provider prefixes its
// error messages.
func Run(ctx context.Context, p Policy, provider string, attempt Attempt, yield func(llm.Event, error) bool) {
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
		if n > p.Retries {
			yield(llm.Event{}, fmt.Errorf("%s: giving up after %d attempts: last %s: %w", provider, n, f.StatusText(), f.Err))
			return
		}
		wait := p.Delay(n, f.After)
		ev := llm.Event{Kind: llm.EventRetry, Retry: &llm.Retry{Attempt: n, Status: f.Status, Wait: wait, Err: f.Err.Error()}}
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
	return Policy{Retries: retries, Base: base, Max: max, Sleep: sleep}, nil
}

// HTTPClient is the client an adapter uses when none is given: no overall
// timeout (answers stream for minutes) but a 10-minute wait for headers.
func HTTPClient() *http.Client {
	c := &http.Client{}
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		t = t.Clone()
		t.ResponseHeaderTimeout = 10 * time.Minute
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
