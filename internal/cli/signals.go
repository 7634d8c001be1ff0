package cli

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// signals turns SIGINT and SIGTERM into the cancellation of the run's
// context and remembers which one came, for the exit code.
type signals struct {
	ch     chan os.Signal
	done   chan struct{}
	wg     sync.WaitGroup
	mu     sync.Mutex
	got    os.Signal
	cancel context.CancelFunc
}

// withSignals returns a context cancelled by SIGINT or SIGTERM. Call stop
// when the command ends.
func withSignals(parent context.Context) (context.Context, *signals) {
	ctx, cancel := context.WithCancel(parent)
	s := &signals{ch: make(chan os.Signal, 2), done: make(chan struct{}), cancel: cancel}
	signal.Notify(s.ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		select {
		case sig := <-s.ch:
			s.mu.Lock()
			s.got = sig
			s.mu.Unlock()
			cancel()
		case <-s.done:
		}
	}()
	return ctx, s
}

// stop stops listening and releases the context.
func (s *signals) stop() {
	signal.Stop(s.ch)
	close(s.done)
	s.wg.Wait()
	s.cancel()
}

// exitCode is the exit code and message of a run ended by its context:
// 143 for SIGTERM, 130 for SIGINT (or any other cancellation).
func (s *signals) exitCode() (int, string) {
	if s == nil {
		return ExitInterrupted, "interrupted"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.got == syscall.SIGTERM {
		return ExitTerminated, "terminated (SIGTERM)"
	}
	return ExitInterrupted, "interrupted"
}
