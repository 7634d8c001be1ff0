package retry

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/llm"
)

func TestRetryAfterHeader(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		h    map[string]string
		want time.Duration
	}{
		{nil, 0},
		{map[string]string{"Retry-After": "2"}, 2 * time.Second},
		{map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond},
		{map[string]string{"Retry-After-Ms": "250", "Retry-After": "9"}, 250 * time.Millisecond},
		{map[string]string{"Retry-After-Ms": "junk", "Retry-After": "9"}, 9 * time.Second},
		{map[string]string{"Retry-After": now.Add(7 * time.Second).Format(http.TimeFormat)}, 7 * time.Second},
		{map[string]string{"Retry-After": "-4"}, 0},
		{map[string]string{"Retry-After": "soon"}, 0},
	}
	for _, tt := range tests {
		h := http.Header{}
		for k, v := range tt.h {
			h.Set(k, v)
		}
		if got := After(h, now); got != tt.want {
			t.Errorf("After(%v) = %v, want %v", tt.h, got, tt.want)
		}
	}
}

func TestDelayBounds(t *testing.T) {
	p := Policy{Base: 100 * time.Millisecond, Max: time.Second}
	for attempt := 1; attempt <= 8; attempt++ {
		d := p.Delay(attempt, 0)
		hi := min(p.Base<<(attempt-1), p.Max)
		if d < hi/2 || d > hi {
			t.Fatalf("attempt %d: delay %v outside [%v, %v]", attempt, d, hi/2, hi)
		}
	}
	if d := p.Delay(1, 5*time.Second); d != 5*time.Second {
		t.Fatalf("retry-after not honoured: %v", d)
	}
}

func TestRunRetriesThenGivesUp(t *testing.T) {
	var waits []time.Duration
	p := Policy{Retries: 2, Base: time.Millisecond, Max: time.Millisecond, Sleep: func(_ context.Context, d time.Duration) error {
		waits = append(waits, d)
		return nil
	}}
	calls := 0
	var events []llm.Event
	var final error
	Run(context.Background(), p, "test", func() (*llm.Response, bool, *Failure) {
		calls++
		return nil, false, &Failure{Err: errors.New("boom"), Status: 503, Retryable: true, After: 3 * time.Millisecond}
	}, func(ev llm.Event, err error) bool {
		if err != nil {
			final = err
		} else {
			events = append(events, ev)
		}
		return true
	})
	if calls != 3 || len(events) != 2 || len(waits) != 2 || waits[0] != 3*time.Millisecond {
		t.Fatalf("calls %d events %d waits %v", calls, len(events), waits)
	}
	if final == nil || final.Error() != "test: giving up after 3 attempts: last status 503: boom" {
		t.Fatalf("final %v", final)
	}
}

func TestRunStopsOnPermanentFailure(t *testing.T) {
	calls := 0
	var final error
	Run(context.Background(), Policy{Retries: 5, Sleep: Sleep}, "test", func() (*llm.Response, bool, *Failure) {
		calls++
		return nil, false, &Failure{Err: &llm.APIError{Status: 401, Message: "bad key"}, Status: 401}
	}, func(_ llm.Event, err error) bool { final = err; return true })
	var apiErr *llm.APIError
	if calls != 1 || !errors.As(final, &apiErr) {
		t.Fatalf("calls %d final %v", calls, final)
	}
}

func TestNewPolicyDefaults(t *testing.T) {
	p, err := NewPolicy(0, 0, 0, nil)
	if err != nil || p.Retries != DefaultRetries || p.Base != DefaultBase || p.Max != DefaultMax || p.Sleep == nil {
		t.Fatalf("defaults %+v %v", p, err)
	}
	if p, _ := NewPolicy(-1, time.Millisecond, time.Second, nil); p.Retries != 0 {
		t.Fatalf("negative retries gave %d", p.Retries)
	}
	if _, err := NewPolicy(1, time.Second, time.Millisecond, nil); err == nil {
		t.Fatal("max < base accepted")
	}
	if _, err := CheckBaseURL("ftp://x"); err == nil {
		t.Fatal("ftp base URL accepted")
	}
	if got := SortedKeys(map[string]string{"b": "", "a": ""}); got[0] != "a" || got[1] != "b" {
		t.Fatalf("keys %v", got)
	}
}
