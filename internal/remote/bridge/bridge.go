package bridge

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os/exec"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/internal/remote/remotebin"
	"github.com/cadre-dev/cadre/internal/remote/workspace"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
)

// pollEvery is how often a watched child's events are asked for.
const pollEvery = 50 * time.Millisecond

// Config configures the bridge executor.
type Config struct {
	// Bin is cadre-remote ("" finds it: remotebin.Find).
	Bin string
	// Args are the bridge's connection flags (--address, --namespace,
	// --task-queue, TLS and API key flags).
	Args []string
	// Env is the bridge's environment (nil: this process's).
	Env []string
	// Notify, when set, receives each background child's end once.
	Notify func(task.Notification)
	// Stderr receives the bridge's diagnostics (nil: discarded).
	Stderr io.Writer
}

// Executor is the bridge executor. Close ends its bridge process; the
// agents it started keep running on the workers.
type Executor struct {
	cfg  Config
	cmd  *exec.Cmd
	in   io.WriteCloser
	done chan struct{} // the reader ended: the bridge is gone
	wg   sync.WaitGroup

	mu      sync.Mutex
	next    int64
	pending map[int64]chan Response
	dead    error
	writeMu sync.Mutex
}

var _ executor.Attacher = (*Executor)(nil)

// New starts the bridge process.
func New(cfg Config) (*Executor, error) {
	bin := cfg.Bin
	if bin == "" {
		var err error
		if bin, err = remotebin.Find(nil); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(bin, append([]string{"bridge"}, cfg.Args...)...)
	cmd.Env = cfg.Env
	if cfg.Stderr != nil {
		cmd.Stderr = cfg.Stderr
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("remote executor: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("remote executor: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s bridge: %w", bin, err)
	}
	x := &Executor{cfg: cfg, cmd: cmd, in: in, done: make(chan struct{}), pending: map[int64]chan Response{}}
	x.wg.Go(func() { x.read(out) })
	// The bridge answers live once connected: a bad address fails here.
	if _, err := x.Live(context.Background()); err != nil {
		x.Close()
		return nil, err
	}
	return x, nil
}

// read dispatches the bridge's lines until it ends.
func (x *Executor) read(out io.Reader) {
	defer close(x.done)
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 256<<20)
	var err error
	for sc.Scan() {
		var r Response
		if err = json.Unmarshal(sc.Bytes(), &r); err != nil {
			err = fmt.Errorf("remote executor: a line of the bridge is not JSON: %w", err)
			break
		}
		if r.ID == 0 {
			if r.Note != nil && x.cfg.Notify != nil {
				x.cfg.Notify(*r.Note)
			}
			continue
		}
		x.mu.Lock()
		ch := x.pending[r.ID]
		delete(x.pending, r.ID)
		x.mu.Unlock()
		if ch != nil {
			ch <- r
		}
	}
	if err == nil {
		err = sc.Err()
	}
	if err == nil {
		err = errors.New("remote executor: the bridge process ended")
	}
	x.mu.Lock()
	x.dead = err
	for id, ch := range x.pending {
		ch <- Response{ID: id, Error: err.Error()}
		delete(x.pending, id)
	}
	x.mu.Unlock()
}

// call sends req and waits for its response.
func (x *Executor) call(ctx context.Context, req Request) (Response, error) {
	ch := make(chan Response, 1)
	x.mu.Lock()
	if x.dead != nil {
		x.mu.Unlock()
		return Response{}, x.dead
	}
	x.next++
	req.ID = x.next
	x.pending[req.ID] = ch
	x.mu.Unlock()
	line, err := encode(req)
	if err != nil {
		return Response{}, fmt.Errorf("remote executor: %w", err)
	}
	x.writeMu.Lock()
	_, err = x.in.Write(line)
	x.writeMu.Unlock()
	if err != nil {
		x.mu.Lock()
		delete(x.pending, req.ID)
		x.mu.Unlock()
		return Response{}, fmt.Errorf("remote executor: write to the bridge: %w", err)
	}
	select {
	case r := <-ch:
		if r.NotFound {
			return r, fmt.Errorf("%w: %s", executor.ErrUnknownChild, r.Error)
		}
		if r.Error != "" {
			return r, errors.New(r.Error)
		}
		return r, nil
	case <-ctx.Done():
		x.mu.Lock()
		delete(x.pending, req.ID)
		x.mu.Unlock()
		return Response{}, ctx.Err()
	}
}

// Close ends the bridge process (the agents go on running remotely).
func (x *Executor) Close() error {
	x.in.Close()
	select {
	case <-x.done:
	case <-time.After(10 * time.Second):
		_ = x.cmd.Process.Kill()
	}
	x.wg.Wait()
	_ = x.cmd.Wait()
	return nil
}

// Live counts the executor's agents whose workflows are open.
func (x *Executor) Live(ctx context.Context) (int, error) {
	r, err := x.call(ctx, Request{Op: OpLive})
	return r.Live, err
}

// Start starts req's child remotely.
func (x *Executor) Start(ctx context.Context, req executor.SpawnRequest) (executor.Handle, error) {
	if _, err := x.call(ctx, Request{Op: OpStart, Spawn: &req}); err != nil {
		return nil, err
	}
	h := &handle{x: x, id: req.AgentID}
	if !req.Background {
		// A foreground child ends with its parent's turn.
		stop := context.AfterFunc(ctx, func() { _ = h.Stop(context.Background()) })
		x.wg.Go(func() {
			_, _ = h.Wait(context.Background())
			stop()
		})
	}
	return h, nil
}

// Attach returns a handle on req's child, started earlier by this or
// another launcher (one killed meanwhile), without starting it again.
func (x *Executor) Attach(ctx context.Context, req executor.SpawnRequest) (executor.Handle, error) {
	if _, err := x.call(ctx, Request{Op: OpAttach, Spawn: &req}); err != nil {
		return nil, err
	}
	return &handle{x: x, id: req.AgentID}, nil
}

// handle is one remote child, by its agent id.
type handle struct {
	x  *Executor
	id string
}

func (h *handle) Events() iter.Seq2[run.Event, error] {
	return func(yield func(run.Event, error) bool) {
		from := 0
		for {
			r, err := h.x.call(context.Background(), Request{Op: OpEvents, Agent: h.id, From: from})
			if err != nil {
				yield(run.Event{}, err)
				return
			}
			for _, ev := range r.Events {
				from++
				if !yield(ev, nil) {
					return
				}
			}
			if r.Done {
				return
			}
			select {
			case <-h.x.done:
			case <-time.After(pollEvery):
			}
		}
	}
}

func (h *handle) Send(ctx context.Context, m executor.Message) (executor.Delivery, error) {
	r, err := h.x.call(ctx, Request{Op: OpSend, Agent: h.id, Message: &m})
	if err != nil {
		return "", err
	}
	if r.Refused != "" {
		return "", &executor.RefusedError{AgentID: h.id, Reason: r.Refused}
	}
	return r.Deliver, nil
}

func (h *handle) Stop(ctx context.Context) error {
	_, err := h.x.call(ctx, Request{Op: OpStop, Agent: h.id})
	return err
}

func (h *handle) Wait(ctx context.Context) (*run.SubagentResult, error) {
	r, err := h.x.call(ctx, Request{Op: OpWait, Agent: h.id})
	if err != nil {
		return nil, err
	}
	if r.Result == nil {
		return nil, fmt.Errorf("remote agent %s: the bridge gave no result", h.id)
	}
	return r.Result, nil
}

var _ executor.WorkHandle = (*handle)(nil)

// Work returns the work the child left in its workspace on the worker
// (nil without one), once it has ended.
func (h *handle) Work(ctx context.Context) (*workspace.Result, error) {
	r, err := h.x.call(ctx, Request{Op: OpWork, Agent: h.id})
	if err != nil {
		return nil, err
	}
	return r.Work, nil
}
