package retry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cadre-dev/cadre/llm"
)

// runFailures drives Run with the given failures in turn (a nil failure
// succeeds) and returns the retries it announced, the waits it slept and
// its final error.
func runFailures(t *testing.T, p Policy, failures ...*Failure) (retries []llm.Retry, waits []time.Duration, final error) {
	t.Helper()
	p.Sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	n := 0
	Run(context.Background(), p, "test", func() (*llm.Response, bool, *Failure) {
		if n >= len(failures) {
			t.Fatalf("attempt %d: no failure scripted", n+1)
		}
		f := failures[n]
		n++
		if f == nil {
			return &llm.Response{}, false, nil
		}
		return nil, false, f
	}, func(ev llm.Event, err error) bool {
		if err != nil {
			final = err
		} else if ev.Kind == llm.EventRetry {
			retries = append(retries, *ev.Retry)
		}
		return true
	})
	return retries, waits, final
}

func TestBoundsOfRun(t *testing.T) {
	base := Policy{Retries: 8, Base: 100 * time.Millisecond, Max: 10 * time.Second,
		Bounds: Bounds{MaxRetryAfter: time.Minute, Budget: 30 * time.Second}}
	fail := func(c Cause) *Failure {
		return &Failure{Err: fmt.Errorf("%v failure", c), Cause: c, Retryable: c != CauseDNS}
	}
	status := func(code int, after time.Duration) *Failure {
		return &Failure{Err: fmt.Errorf("status %d", code), Status: code, Retryable: true, After: after}
	}
	tests := []struct {
		name     string
		failures []*Failure
		retries  int    // EventRetry count
		final    string // "" for success, else a substring of the error
	}{
		{"no headers is retried once", []*Failure{fail(CauseNoHeaders), fail(CauseNoHeaders)}, 1, "giving up after 2 attempts"},
		{"no headers then success", []*Failure{fail(CauseNoHeaders), nil}, 1, ""},
		{"stall is retried twice", []*Failure{fail(CauseStalled), fail(CauseStalled), fail(CauseStalled)}, 2, "giving up after 3 attempts"},
		{"refused is retried twice", []*Failure{fail(CauseRefused), fail(CauseRefused), fail(CauseRefused)}, 2, "connection_refused failure"},
		{"dns is never retried", []*Failure{fail(CauseDNS)}, 0, "dns failure"},
		{"caps count per cause", []*Failure{fail(CauseStalled), status(529, 0), fail(CauseStalled), status(529, 0), nil}, 4, ""},
		{"retry-after over the cap ends at once", []*Failure{status(429, 10*time.Minute)}, 0, "asked to retry after 10m0s, longer than the 1m0s"},
		{"retry-after under the cap is waited", []*Failure{status(429, 20*time.Second), nil}, 1, ""},
		{"the budget ends the waits", []*Failure{status(429, 20*time.Second), status(429, 20*time.Second)}, 1, "retry budget of 30s is spent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			retries, waits, final := runFailures(t, base, tt.failures...)
			if len(retries) != tt.retries || len(waits) != tt.retries {
				t.Fatalf("%d retries, %d waits, want %d (final %v)", len(retries), len(waits), tt.retries, final)
			}
			switch {
			case tt.final == "" && final != nil:
				t.Fatalf("final error %v, want success", final)
			case tt.final != "" && (final == nil || !strings.Contains(final.Error(), tt.final)):
				t.Fatalf("final error %v, want one containing %q", final, tt.final)
			}
		})
	}
}

func TestRetryEventsNameTheCause(t *testing.T) {
	p := Policy{Retries: 8, Base: 10 * time.Second, Max: 10 * time.Second}
	retries, waits, final := runFailures(t, p,
		&Failure{Err: errors.New("refused"), Cause: CauseRefused, Retryable: true},
		&Failure{Err: errors.New("overloaded"), Status: 529, Retryable: true},
		nil)
	if final != nil || len(retries) != 2 {
		t.Fatalf("final %v retries %+v", final, retries)
	}
	if r := retries[0]; r.Cause != "connection_refused" || r.MaxRetries != 2 || r.Status != 0 || r.Attempt != 1 {
		t.Fatalf("first retry %+v", r)
	}
	if r := retries[1]; r.Cause != "status" || r.MaxRetries != 8 || r.Status != 529 || r.Attempt != 2 {
		t.Fatalf("second retry %+v", r)
	}
	// A refused connection is retried within a second, whatever the
	// back-off says.
	if waits[0] > time.Second || waits[1] < 5*time.Second {
		t.Fatalf("waits %v", waits)
	}
}

func TestBoundsDefaults(t *testing.T) {
	b, err := Bounds{IdleTimeout: time.Second}.WithDefaults(Bounds{HeaderTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	want := Bounds{HeaderTimeout: time.Hour, IdleTimeout: time.Second, MaxRetryAfter: DefaultMaxRetryAfter, Budget: DefaultBudget}
	if b != want {
		t.Fatalf("bounds %+v, want %+v", b, want)
	}
	if _, err := (Bounds{Budget: -1}).WithDefaults(Bounds{}); err == nil || !strings.Contains(err.Error(), "RetryBudget") {
		t.Fatalf("negative budget: %v", err)
	}
}

func TestTransportClassification(t *testing.T) {
	tests := []struct {
		err       error
		cause     Cause
		retryable bool
	}{
		{&net.DNSError{Err: "no such host", Name: "api.invalid", IsNotFound: true}, CauseDNS, false},
		{&net.DNSError{Err: "i/o timeout", Name: "api.example", IsTimeout: true}, CauseNetwork, true},
		{&net.OpError{Op: "dial", Net: "tcp", Err: &net.AddrError{}}, CauseNetwork, true},
		{fmt.Errorf("post: %w", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}), CauseRefused, true},
		{errors.New("unexpected EOF"), CauseNetwork, true},
	}
	for _, tt := range tests {
		f := Transport(tt.err)
		if f.Cause != tt.cause || f.Retryable != tt.retryable || !errors.Is(f.Err, tt.err) {
			t.Errorf("Transport(%v) = %+v, want cause %v retryable %v", tt.err, f, tt.cause, tt.retryable)
		}
	}
	if f := Transport(&net.DNSError{Err: "no such host", Name: "api.invalid", IsNotFound: true}); !strings.Contains(f.Err.Error(), "cannot resolve host api.invalid") {
		t.Errorf("dns message %q", f.Err)
	}
}

func TestWatchdog(t *testing.T) {
	b := Bounds{HeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	t.Run("no headers", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, w := Watch(context.Background(), b)
			defer w.Stop()
			<-ctx.Done()
			f := Fired(ctx)
			if f == nil || f.Cause != CauseNoHeaders || !strings.Contains(f.Err.Error(), "after 10s") {
				t.Fatalf("fired %+v", f)
			}
		})
	})
	t.Run("stall after events", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			ctx, w := Watch(context.Background(), b)
			defer w.Stop()
			time.Sleep(5 * time.Second)
			w.Headers()
			for range 3 {
				time.Sleep(50 * time.Second) // each event within the idle bound
				w.Event()
			}
			<-ctx.Done()
			f := Fired(ctx)
			if f == nil || f.Cause != CauseStalled {
				t.Fatalf("fired %+v", f)
			}
			if got := time.Since(start); got != 5*time.Second+150*time.Second+time.Minute {
				t.Fatalf("stalled after %v", got)
			}
		})
	})
	t.Run("stop is not a failure", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, w := Watch(context.Background(), b)
			w.Headers()
			w.Stop()
			time.Sleep(time.Hour)
			if ctx.Err() == nil || Fired(ctx) != nil {
				t.Fatalf("after stop: err %v fired %+v", ctx.Err(), Fired(ctx))
			}
		})
	})
	t.Run("parent cancel is not a failure", func(t *testing.T) {
		parent, cancel := context.WithCancel(context.Background())
		ctx, w := Watch(parent, b)
		defer w.Stop()
		cancel()
		<-ctx.Done()
		if Fired(ctx) != nil {
			t.Fatalf("fired on parent cancel: %v", Fired(ctx))
		}
	})
}
