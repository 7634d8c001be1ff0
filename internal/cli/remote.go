package cli

import (
	"context"
	"io"
	"os"
	"sync"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/config"
	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/internal/remote/bridge"
)

// Remote agents (issue 26): with remote.temporal in the settings, the
// session's remote executor is the cadre-remote bridge, started on the
// first remote spawn (a session that starts none runs no bridge) and
// closed with the session.

// newRemote returns config.Options.NewRemote for the CLI: the bridge to
// the Temporal server t names, its diagnostics on stderr.
func newRemote(stderr io.Writer, getenv func(string) string) func(*config.Temporal) (cadre.RemoteExecutor, error) {
	return func(t *config.Temporal) (cadre.RemoteExecutor, error) {
		args, env := t.BridgeFlags()
		cfg := bridge.Config{Bin: getenv("CADRE_REMOTE_BIN"), Args: args, Stderr: stderr}
		if len(env) > 0 {
			cfg.Env = append(os.Environ(), env...)
		}
		return &lazyBridge{cfg: cfg}, nil
	}
}

// lazyBridge starts the bridge process on its first Start.
type lazyBridge struct {
	cfg bridge.Config

	mu  sync.Mutex
	x   *bridge.Executor
	err error
}

// Start implements executor.Executor.
func (l *lazyBridge) Start(ctx context.Context, req executor.SpawnRequest) (executor.Handle, error) {
	x, err := l.executor()
	if err != nil {
		return nil, err
	}
	return x.Start(ctx, req)
}

// Attach implements executor.Attacher: a resumed session takes up again
// the remote agents its earlier launcher left running (engine
// reattach.go), starting the bridge for them.
func (l *lazyBridge) Attach(ctx context.Context, req executor.SpawnRequest) (executor.Handle, error) {
	x, err := l.executor()
	if err != nil {
		return nil, err
	}
	return x.Attach(ctx, req)
}

var _ executor.Attacher = (*lazyBridge)(nil)

// executor starts the bridge once; a failed start is remembered (every
// remote spawn then fails the same way, naming why).
func (l *lazyBridge) executor() (*bridge.Executor, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.x == nil && l.err == nil {
		l.x, l.err = bridge.New(l.cfg)
	}
	return l.x, l.err
}

// Close ends the bridge process if it was started (the session closes
// it after its remote tasks were stopped).
func (l *lazyBridge) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.x != nil {
		l.x.Close()
	}
}
