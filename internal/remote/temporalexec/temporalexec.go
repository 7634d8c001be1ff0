// Package temporalexec is the Temporal executor: an executor.Executor that
// runs each child as an agent workflow (package agentwf) on a Temporal
// server, for whichever `cadre worker` processes serve its task queue.
//
// It holds a Temporal client, so only the companion binary cadre-remote
// imports it; the cadre binary reaches it through package bridge.
package temporalexec

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"sync/atomic"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/internal/remote/agentwf"
	"github.com/cadre-dev/cadre/internal/remote/workspace"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
)

// pollEvery is how often a watched child's events are asked for while it
// runs (events come at tool-round granularity).
const pollEvery = 50 * time.Millisecond

// Config configures an Executor.
type Config struct {
	// Client reaches the server; TaskQueue is where the workers are.
	Client    client.Client
	TaskQueue string
	// Notify, when set, receives the notification of each background
	// child's end, once per run of it, before its Wait returns.
	Notify func(task.Notification)
	// WorkerWait bounds how long Start waits for a worker to serve the
	// task queue before it fails saying none does (0: 30 s; negative:
	// no check, the child waits in the queue for one).
	WorkerWait time.Duration
}

// ErrNoWorker is the error of a Start that found no worker on its queue.
var ErrNoWorker = errors.New("no cadre worker serves the task queue")

// Executor starts children as agent workflows. Close ends its watchers.
type Executor struct {
	cfg    Config
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// served is set once a worker was seen polling the queue.
	served atomic.Bool

	mu      sync.Mutex
	handles map[string]*handle
}

var _ executor.Attacher = (*Executor)(nil)

// New returns an Executor for cfg.
func New(cfg Config) (*Executor, error) {
	if cfg.Client == nil || cfg.TaskQueue == "" {
		return nil, errors.New("temporal executor: a client and a task queue are required")
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Executor{cfg: cfg, ctx: ctx, cancel: cancel, handles: map[string]*handle{}}, nil
}

// Close stops watching children (they go on running on the workers) and
// waits for the watchers to end.
func (x *Executor) Close() {
	x.cancel()
	x.wg.Wait()
}

// Start starts req's child as a workflow whose id is the child's agent id.
func (x *Executor) Start(ctx context.Context, req executor.SpawnRequest) (executor.Handle, error) {
	if req.AgentID == "" {
		return nil, errors.New("temporal executor: the request names no agent id")
	}
	if err := x.waitForWorker(ctx); err != nil {
		return nil, err
	}
	h := &handle{x: x, req: req}
	r, err := h.launch(ctx, agentwf.Input{Request: req})
	if err != nil {
		return nil, err
	}
	x.mu.Lock()
	x.handles[req.AgentID] = h
	x.mu.Unlock()
	if !req.Background {
		// A foreground child ends with its parent's turn.
		stop := context.AfterFunc(ctx, func() { _ = h.Stop(context.Background()) })
		x.wg.Go(func() {
			select {
			case <-r.done:
			case <-x.ctx.Done():
			}
			stop()
		})
	}
	return h, nil
}

// waitForWorker returns once a worker polls the task queue (checked until
// one was seen), or ErrNoWorker after Config.WorkerWait.
func (x *Executor) waitForWorker(ctx context.Context) error {
	wait := x.cfg.WorkerWait
	if wait < 0 || x.served.Load() {
		return nil
	}
	if wait == 0 {
		wait = 30 * time.Second
	}
	deadline := time.Now().Add(wait)
	for {
		d, err := x.cfg.Client.DescribeTaskQueue(ctx, x.cfg.TaskQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
		if err != nil {
			return fmt.Errorf("look for workers on task queue %s: %w", x.cfg.TaskQueue, err)
		}
		if len(d.GetPollers()) > 0 {
			x.served.Store(true)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w %q (waited %s): start one with `cadre worker --address ... --task-queue %s`", ErrNoWorker, x.cfg.TaskQueue, wait, x.cfg.TaskQueue)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Attach returns a handle on req's child started earlier, by this or
// another launcher (one that died meanwhile): its latest run, running or
// closed. The child is not started again; a background child's
// notification is given once Attach has seen its end, which may have
// been given before — the launcher's journal keeps it exactly once.
func (x *Executor) Attach(ctx context.Context, req executor.SpawnRequest) (executor.Handle, error) {
	desc, err := x.cfg.Client.DescribeWorkflow(ctx, req.AgentID, "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return nil, fmt.Errorf("attach to remote agent %s: %w (%s)", req.AgentID, executor.ErrUnknownChild, err)
	}
	if err != nil {
		return nil, fmt.Errorf("attach to remote agent %s: %w", req.AgentID, err)
	}
	d := desc.RawResponse
	h := &handle{x: x, req: req}
	h.watch(x.cfg.Client.GetWorkflow(ctx, req.AgentID, d.GetWorkflowExecutionInfo().GetExecution().GetRunId()))
	x.mu.Lock()
	x.handles[req.AgentID] = h
	x.mu.Unlock()
	return h, nil
}

// Live counts the agents of the executor's children's trees whose
// workflows are still open, asking the server.
func (x *Executor) Live(ctx context.Context) (int, error) {
	x.mu.Lock()
	var runs []*runState
	for _, h := range x.handles {
		runs = append(runs, h.current())
	}
	x.mu.Unlock()
	n := 0
	for _, r := range runs {
		select {
		case <-r.done:
			continue
		default:
		}
		k, err := x.open(ctx, r.id, r.runID)
		if err != nil {
			return 0, err
		}
		n += k
	}
	return n, nil
}

// open counts the workflow and its pending children that are running.
func (x *Executor) open(ctx context.Context, id, runID string) (int, error) {
	desc, err := x.cfg.Client.DescribeWorkflow(ctx, id, runID)
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return 0, nil
		}
		return 0, fmt.Errorf("describe agent %s: %w", id, err)
	}
	d := desc.RawResponse
	if d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return 0, nil
	}
	n := 1
	for _, c := range d.GetPendingChildren() {
		k, err := x.open(ctx, c.GetWorkflowId(), c.GetRunId())
		if err != nil {
			return 0, err
		}
		n += k
	}
	return n, nil
}

// runState is one run of a child's workflow: the first, or one a message
// continued. done is closed once the run has closed and out or err is set.
type runState struct {
	id, runID string
	done      chan struct{}
	out       *agentwf.Output
	err       error
}

// handle is one child.
type handle struct {
	x   *Executor
	req executor.SpawnRequest

	mu  sync.Mutex
	cur *runState
}

func (h *handle) current() *runState {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cur
}

// launch starts a run of the child's workflow and its watcher, which
// waits for the run's end and notifies a background child's parent.
func (h *handle) launch(ctx context.Context, in agentwf.Input) (*runState, error) {
	opts := client.StartWorkflowOptions{
		ID: h.req.AgentID, TaskQueue: h.x.cfg.TaskQueue,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
	}
	wr, err := h.x.cfg.Client.ExecuteWorkflow(ctx, opts, agentwf.WorkflowName, in)
	if err != nil {
		return nil, fmt.Errorf("start remote agent %s: %w", h.req.AgentID, err)
	}
	return h.watch(wr), nil
}

// watch makes wr the child's current run and waits for its end in a
// watcher, which notifies a background child's parent.
func (h *handle) watch(wr client.WorkflowRun) *runState {
	r := &runState{id: wr.GetID(), runID: wr.GetRunID(), done: make(chan struct{})}
	h.mu.Lock()
	h.cur = r
	h.mu.Unlock()
	h.x.wg.Go(func() {
		var out agentwf.Output
		if err := wr.Get(h.x.ctx, &out); err != nil {
			r.err = fmt.Errorf("remote agent %s: %w", h.req.AgentID, err)
		} else {
			r.out = &out
			if h.req.Background && h.x.cfg.Notify != nil {
				h.x.cfg.Notify(notification(h.req, &out.Result))
			}
		}
		close(r.done)
	})
	return r
}

// notification is what a background child's parent hears of its end.
func notification(req executor.SpawnRequest, res *run.SubagentResult) task.Notification {
	tn := prompts.TaskNotification{TaskID: req.AgentID, ToolUseID: req.ToolUseID, AgentType: res.AgentType, Description: req.Description,
		Status: res.Status, Error: res.Error, Tokens: res.Usage.Total(), ToolUses: res.ToolUses, Duration: res.Duration}
	if res.Status == task.Completed {
		tn.Report = res.Text
	}
	return task.Notification{To: req.ParentID, TaskID: req.AgentID, ToolUseID: req.ToolUseID, AgentType: res.AgentType,
		Description: req.Description, Status: res.Status, Summary: tn.Summary(), Text: tn.Render()}
}

// Polled is what a handle of this executor offers beyond executor.Handle:
// its events by index, for a bridge that polls them.
type Polled interface {
	// EventsFrom returns the current run's events from index from on,
	// and whether the run has closed and they are all it will have.
	EventsFrom(ctx context.Context, from int) ([]run.Event, bool, error)
}

// EventsFrom implements Polled.
func (h *handle) EventsFrom(ctx context.Context, from int) ([]run.Event, bool, error) {
	return h.eventsFrom(ctx, h.current(), from)
}

func (h *handle) eventsFrom(ctx context.Context, r *runState, from int) ([]run.Event, bool, error) {
	select {
	case <-r.done:
		if r.err != nil {
			return nil, true, r.err
		}
		return r.out.Events[min(from, len(r.out.Events)):], true, nil
	default:
	}
	var evs []run.Event
	v, err := h.x.cfg.Client.QueryWorkflow(ctx, r.id, r.runID, agentwf.QueryEvents, from)
	if err != nil {
		// The run may have closed meanwhile (its watcher sees it): the
		// next poll reads its result.
		return nil, false, nil
	}
	if err := v.Get(&evs); err != nil {
		return nil, false, fmt.Errorf("events of remote agent %s: %w", h.req.AgentID, err)
	}
	return evs, false, nil
}

// Events polls the current run's events while it runs and yields the rest
// from its result once it has closed.
func (h *handle) Events() iter.Seq2[run.Event, error] {
	return func(yield func(run.Event, error) bool) {
		r := h.current()
		from := 0
		for {
			evs, done, err := h.eventsFrom(h.x.ctx, r, from)
			if err != nil {
				yield(run.Event{}, err)
				return
			}
			for _, ev := range evs {
				from++
				if !yield(ev, nil) {
					return
				}
			}
			if done {
				return
			}
			select {
			case <-r.done:
			case <-h.x.ctx.Done():
				yield(run.Event{}, fmt.Errorf("events of remote agent %s: %w", h.req.AgentID, h.x.ctx.Err()))
				return
			case <-time.After(pollEvery):
			}
		}
	}
}

// Send signals a running child; a child whose run has closed is
// continued with the message in a new run of its workflow.
func (h *handle) Send(ctx context.Context, m executor.Message) (executor.Delivery, error) {
	r := h.current()
	select {
	case <-r.done:
	default:
		err := h.x.cfg.Client.SignalWorkflow(ctx, r.id, r.runID, agentwf.SignalMessage, m)
		if err == nil {
			return executor.Queued, nil
		}
		var nf *serviceerror.NotFound
		if !errors.As(err, &nf) {
			return "", fmt.Errorf("message to remote agent %s: %w", h.req.AgentID, err)
		}
		// The run closed meanwhile: its watcher sees it shortly.
		select {
		case <-r.done:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	if r.err != nil {
		return "", r.err
	}
	d := h.req.Definition
	switch {
	case d.OneShot:
		return "", &executor.RefusedError{AgentID: h.req.AgentID, Reason: prompts.OneShotNoMessages(h.req.AgentID, d.Name)}
	case d.Fork:
		return "", &executor.RefusedError{AgentID: h.req.AgentID, Reason: prompts.CannotContinue(h.req.AgentID, "it is a fork")}
	}
	if _, err := h.launch(ctx, agentwf.Input{Request: h.req, History: r.out.Messages, Message: &m}); err != nil {
		return "", err
	}
	return executor.Resumed, nil
}

// Stop cancels the current run (its children are cancelled with it) and
// waits until it has closed.
func (h *handle) Stop(ctx context.Context) error {
	r := h.current()
	select {
	case <-r.done:
		return nil
	default:
	}
	if err := h.x.cfg.Client.CancelWorkflow(ctx, r.id, r.runID); err != nil {
		var nf *serviceerror.NotFound
		if !errors.As(err, &nf) {
			return fmt.Errorf("stop remote agent %s: %w", h.req.AgentID, err)
		}
	}
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Wait waits for the current run's end and returns its result.
func (h *handle) Wait(ctx context.Context) (*run.SubagentResult, error) {
	r := h.current()
	select {
	case <-r.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if r.err != nil {
		return nil, r.err
	}
	res := r.out.Result
	return &res, nil
}

var _ executor.WorkHandle = (*handle)(nil)

// Work waits for the current run's end and returns the work the child
// left in its workspace on the worker: nil without a workspace, an error
// when the work could not be brought back.
func (h *handle) Work(ctx context.Context) (*workspace.Result, error) {
	r := h.current()
	select {
	case <-r.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if r.err != nil {
		return nil, r.err
	}
	if r.out.WorkError != "" {
		return nil, fmt.Errorf("work of remote agent %s: %s", h.req.AgentID, r.out.WorkError)
	}
	return r.out.Work, nil
}
