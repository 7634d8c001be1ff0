// Package budget shares one retry budget between the requests that answer
// one call of a model: a request and the request to its fallback model.
// The adapters' retry loop charges every wait to the ledger the context
// carries, so the two together wait no longer than one budget allows.
package budget

import (
	"context"
	"sync"
	"time"
)

// Ledger counts the time the requests of one call waited between attempts.
type Ledger struct {
	mu     sync.Mutex
	waited time.Duration
}

type key struct{}

// With returns ctx carrying a new ledger, or ctx itself when it carries
// one already (an outer call's budget holds for the inner one too).
func With(ctx context.Context) context.Context {
	if From(ctx) != nil {
		return ctx
	}
	return context.WithValue(ctx, key{}, &Ledger{})
}

// From returns the ledger ctx carries, nil for none.
func From(ctx context.Context) *Ledger {
	l, _ := ctx.Value(key{}).(*Ledger)
	return l
}

// Waited is the time charged so far; a nil ledger has none.
func (l *Ledger) Waited() time.Duration {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.waited
}

// Charge adds d to the ledger; a nil ledger ignores it.
func (l *Ledger) Charge(d time.Duration) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.waited += d
	l.mu.Unlock()
}
