package retry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"
)

// ErrNoHeaders and ErrStalled are the causes a Watchdog cancels an attempt
// with.
var (
	ErrNoHeaders = errors.New("no response headers")
	ErrStalled   = errors.New("the stream stalled")
)

// Watchdog bounds the silences of one attempt: first the wait for the
// response headers, then each wait for the next stream event. When a bound
// passes it cancels the attempt's context with ErrNoHeaders or ErrStalled.
// Its timer goroutine is owned by the runtime; Stop releases it.
type Watchdog struct {
	header, idle time.Duration
	cancel       context.CancelCauseFunc

	mu      sync.Mutex
	t       *time.Timer
	streams bool // headers arrived
	stopped bool
}

// Watch derives the attempt's context from ctx and starts waiting for
// headers. Call Headers when they arrive, Event for every stream event and
// Stop when the attempt ends.
func Watch(ctx context.Context, b Bounds) (context.Context, *Watchdog) {
	ctx, cancel := context.WithCancelCause(ctx)
	w := &Watchdog{header: b.HeaderTimeout, idle: b.IdleTimeout, cancel: cancel}
	if w.header > 0 {
		w.t = time.AfterFunc(w.header, func() { w.fire(false) })
	}
	return ctx, w
}

func (w *Watchdog) fire(streaming bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped || w.streams != streaming {
		return
	}
	if streaming {
		w.cancel(fmt.Errorf("%w: no event for %v", ErrStalled, w.idle))
		return
	}
	w.cancel(fmt.Errorf("%w after %v", ErrNoHeaders, w.header))
}

// Headers notes that the response headers arrived: from now on the idle
// bound applies.
func (w *Watchdog) Headers() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	w.streams = true
	if w.t != nil {
		w.t.Stop()
		w.t = nil
	}
	if w.idle > 0 {
		w.t = time.AfterFunc(w.idle, func() { w.fire(true) })
	}
}

// Event notes a stream event: the idle bound starts again.
func (w *Watchdog) Event() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.stopped && w.t != nil {
		w.t.Reset(w.idle)
	}
}

// Drain bounds the rest of the attempt to d: the answer is complete and
// only the end of the body is still to be read (so the connection can be
// reused). When d passes the attempt's context is cancelled, cutting the
// connection instead of waiting on.
func (w *Watchdog) Drain(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	if w.t != nil {
		w.t.Stop()
	}
	w.t = time.AfterFunc(d, func() { w.cancel(errDrained) })
}

// errDrained is the cause a Watchdog cancels a draining attempt with.
var errDrained = errors.New("body not ended after the answer")

// Stop ends the watch and cancels the attempt's context.
func (w *Watchdog) Stop() {
	w.mu.Lock()
	w.stopped = true
	if w.t != nil {
		w.t.Stop()
	}
	w.mu.Unlock()
	w.cancel(context.Canceled)
}

// Fired returns the failure when the watchdog ended the attempt (ctx is
// the attempt's context), or nil.
func Fired(ctx context.Context) *Failure {
	cause := context.Cause(ctx)
	switch {
	case errors.Is(cause, ErrNoHeaders):
		return &Failure{Err: cause, Cause: CauseNoHeaders, Retryable: true}
	case errors.Is(cause, ErrStalled):
		return &Failure{Err: cause, Cause: CauseStalled, Retryable: true}
	}
	return nil
}

// Transport classifies an error that carries no HTTP status: a host that
// does not resolve is not retried, a refused connection is retried
// quickly, anything else is retried like a server error.
func Transport(err error) *Failure {
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return &Failure{Err: fmt.Errorf("cannot resolve host %s: %w", dnsErr.Name, err), Cause: CauseDNS}
	case errors.Is(err, syscall.ECONNREFUSED):
		return &Failure{Err: fmt.Errorf("connection refused (is the server running at that address?): %w", err), Cause: CauseRefused, Retryable: true}
	}
	return &Failure{Err: err, Cause: CauseNetwork, Retryable: true}
}
