package llm

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/cadre-dev/cadre/llm/internal/budget"
)

// WithFallback returns a Model that answers requests for the model id
// primary with the model id fallback when primary is overloaded: when a
// request for primary fails for good (its retries spent) with HTTP 529 or
// 503, the request is sent again for fallback. Before switching it yields
// an EventRetry with Cause "fallback", so a consumer discards what the
// failed attempts streamed. The two requests share one retry budget: the
// waits before the fallback's retries count with the primary's, so the
// switch does not double how long a call may wait. Requests for other ids
// pass through unchanged.
func WithFallback(m Model, primary, fallback string) Model {
	return &fallbackModel{m: m, primary: primary, fallback: fallback}
}

type fallbackModel struct {
	m                 Model
	primary, fallback string
}

func (f *fallbackModel) Stream(ctx context.Context, req *Request) iter.Seq2[Event, error] {
	if req == nil || req.Model != f.primary || f.fallback == "" || f.fallback == f.primary {
		return f.m.Stream(ctx, req)
	}
	return func(yield func(Event, error) bool) {
		// One retry budget for both requests: the fallback's retries get
		// what the primary's left.
		ctx := budget.With(ctx)
		for ev, err := range f.m.Stream(ctx, req) {
			if err != nil {
				var apiErr *APIError
				if !errors.As(err, &apiErr) || (apiErr.Status != 529 && apiErr.Status != 503) || ctx.Err() != nil {
					yield(ev, err)
					return
				}
				note := Event{Kind: EventRetry, Retry: &Retry{Status: apiErr.Status, Cause: RetryFallback,
					Err: fmt.Sprintf("%s is overloaded; switching to the fallback model %s: %v", f.primary, f.fallback, err)}}
				if !yield(note, nil) {
					return
				}
				again := *req
				again.Model = f.fallback
				for ev, err := range f.m.Stream(ctx, &again) {
					if !yield(ev, err) || err != nil {
						return
					}
				}
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}
