package remotecmd

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"

	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/internal/remote/bridge"
	"github.com/cadre-dev/cadre/internal/remote/temporalexec"
	"github.com/cadre-dev/cadre/task"
)

// bridgeCmd runs `cadre-remote bridge`: the Temporal executor of a
// launcher, spoken to in JSON lines on stdin and stdout (package bridge).
// It ends when stdin does; the agents it started go on running.
func bridgeCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("cadre-remote bridge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var conn connFlags
	conn.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	logger := log.NewStructuredLogger(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	opts, err := conn.options(logger)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		return fmt.Errorf("connect to Temporal at %s: %w", conn.address, err)
	}
	defer c.Close()
	s := &bridgeServer{out: stdout, handles: map[string]executor.Handle{}}
	x, err := temporalexec.New(temporalexec.Config{Client: c, TaskQueue: conn.queue, Notify: func(n task.Notification) {
		s.write(bridge.Response{Note: &n})
	}})
	if err != nil {
		return err
	}
	s.x = x
	defer x.Close()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64<<10), 256<<20)
	for sc.Scan() {
		var req bridge.Request
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			return fmt.Errorf("a request line is not JSON: %w", err)
		}
		wg.Go(func() { s.write(s.serve(ctx, req)) })
	}
	return sc.Err()
}

// bridgeServer answers a launcher's requests.
type bridgeServer struct {
	x *temporalexec.Executor

	outMu sync.Mutex
	out   io.Writer

	mu      sync.Mutex
	handles map[string]executor.Handle
}

func (s *bridgeServer) write(r bridge.Response) {
	b, err := json.Marshal(r)
	if err != nil {
		b, _ = json.Marshal(bridge.Response{ID: r.ID, Error: fmt.Sprintf("encode the response: %v", err)})
	}
	s.outMu.Lock()
	defer s.outMu.Unlock()
	_, _ = s.out.Write(append(b, '\n'))
}

func (s *bridgeServer) handle(id string) (executor.Handle, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.handles[id]
	if !ok {
		return nil, fmt.Errorf("no remote agent %q was started through this bridge", id)
	}
	return h, nil
}

// serve answers one request.
func (s *bridgeServer) serve(ctx context.Context, req bridge.Request) bridge.Response {
	r := bridge.Response{ID: req.ID}
	fail := func(err error) bridge.Response {
		r.Error, r.NotFound = err.Error(), errors.Is(err, executor.ErrUnknownChild)
		return r
	}
	switch req.Op {
	case bridge.OpLive:
		n, err := s.x.Live(ctx)
		if err != nil {
			return fail(err)
		}
		r.Live = n
		return r
	case bridge.OpStart, bridge.OpAttach:
		if req.Spawn == nil {
			return fail(fmt.Errorf("%s without a spawn request", req.Op))
		}
		// ctx is the bridge's: a foreground child is stopped when the
		// launcher stops it, or when the bridge ends with its launcher.
		sr := *req.Spawn
		var h executor.Handle
		var err error
		if req.Op == bridge.OpStart {
			h, err = s.x.Start(ctx, sr)
		} else {
			h, err = s.x.Attach(ctx, sr)
		}
		if err != nil {
			return fail(err)
		}
		s.mu.Lock()
		s.handles[sr.AgentID] = h
		s.mu.Unlock()
		return r
	}
	h, err := s.handle(req.Agent)
	if err != nil {
		return fail(err)
	}
	switch req.Op {
	case bridge.OpWait:
		res, err := h.Wait(ctx)
		if err != nil {
			return fail(err)
		}
		r.Result = res
	case bridge.OpStop:
		if err := h.Stop(ctx); err != nil {
			return fail(err)
		}
	case bridge.OpSend:
		if req.Message == nil {
			return fail(errors.New("send without a message"))
		}
		d, err := h.Send(ctx, *req.Message)
		var refused *executor.RefusedError
		if errors.As(err, &refused) {
			r.Refused = refused.Reason
			return r
		}
		if err != nil {
			return fail(err)
		}
		r.Deliver = d
	case bridge.OpWork:
		w, ok := h.(executor.WorkHandle)
		if !ok {
			return fail(errors.New("this executor's handles bring back no work"))
		}
		work, err := w.Work(ctx)
		if err != nil {
			return fail(err)
		}
		r.Work = work
	case bridge.OpEvents:
		p, ok := h.(temporalexec.Polled)
		if !ok {
			return fail(errors.New("this executor's handles give no events by index"))
		}
		evs, done, err := p.EventsFrom(ctx, req.From)
		if err != nil {
			return fail(err)
		}
		r.Events, r.Done = evs, done
	default:
		return fail(fmt.Errorf("unknown op %q", req.Op))
	}
	return r
}
