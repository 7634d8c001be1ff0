package engine

import (
	"errors"
	"slices"
)

// Close ends the session: it stops what the session started (background
// tasks, MCP servers, the SessionEnd hooks) in the reverse order of
// starting, and reports every failure. It is safe to call more than once
// (later calls do nothing); Run must not be running.
func (r *Runtime) Close() error {
	r.closeMu.Lock()
	fs := r.closers
	r.closers, r.closed = nil, true
	r.closeMu.Unlock()
	var errs []error
	for _, f := range slices.Backward(fs) {
		errs = append(errs, f())
	}
	return errors.Join(errs...)
}

// onClose registers f to run when the session closes. Each part of the
// runtime that starts something long-lived registers its own stop here,
// so Close needs to know none of them.
func (sg sessionGlue) onClose(f func() error) {
	r := sg.r
	r.closeMu.Lock()
	defer r.closeMu.Unlock()
	if r.closed {
		// Started after Close: stop it at once rather than leak it.
		r.closeMu.Unlock()
		_ = f()
		r.closeMu.Lock()
		return
	}
	r.closers = append(r.closers, f)
}
