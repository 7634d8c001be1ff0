package engine

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"sync/atomic"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/internal/engine/tasktools"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
)

// The local executor runs children as goroutines of this process: the
// lifecycle of lifecycle.go behind the executor seam. The spawn path
// (spawn.go) decides a child, builds it (newChild, newFork: its pool of
// tools, MCP lease, rendered prompt) and takes it through the gate, then
// describes it as a SpawnRequest and starts it through Executor.Start.
// A remote executor builds a child from the request's data alone; the
// local one runs the child the spawn path built for the request in this
// process (prepare), so a local spawn costs what it cost before the seam.
// The handle of a local child is its childRun.

// localExecutor is the session's executor (background.exec).
type localExecutor struct {
	b *background

	mu       sync.Mutex
	prepared map[string]preparedChild
	// taps keeps events per watched child (Handle.Events) when watch is
	// on; the engine itself reads the session's stream (hub) instead.
	watch atomic.Bool
	taps  map[string]tapEntry
}

// preparedChild is a child the spawn path built for a request.
type preparedChild struct {
	parent, child *agent
	in            agentInput
}

func newLocalExecutor(b *background) *localExecutor {
	return &localExecutor{b: b, prepared: map[string]preparedChild{}}
}

// prepare registers child, built by parent for the Agent call in, for
// the request naming its id.
func (x *localExecutor) prepare(parent, child *agent, in agentInput) {
	x.mu.Lock()
	x.prepared[child.id] = preparedChild{parent: parent, child: child, in: in}
	x.mu.Unlock()
}

// Start implements executor.Executor: it runs the child prepared for
// req. A queued child's EventTaskPending goes out first, so the pending
// events of one batch of calls come out in call order.
func (x *localExecutor) Start(ctx context.Context, req executor.SpawnRequest) (executor.Handle, error) {
	x.mu.Lock()
	p, ok := x.prepared[req.AgentID]
	delete(x.prepared, req.AgentID)
	x.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("start agent %s: the local executor runs only children the spawn path prepared in this process", req.AgentID)
	}
	child := p.child
	if x.watch.Load() {
		x.tap(child.id, p.parent.id)
	}
	if child.ticket.Queued() {
		child.pendingErr = child.run.send(ctx, run.Event{Type: run.EventTaskPending, AgentID: child.id, ParentToolUseID: child.toolUseID,
			Task: child.taskInfo(p.parent, p.in, task.Pending)})
	}
	if child.isolation == agentdef.IsolationRemote && !reattachOf(x.b).pending(child.id) {
		// reattach.go: kept for a resume after the launcher died, should
		// it never have started then.
		remoteOf(child).keep(req, false)
	}
	if child.run.rt.tel != nil {
		// telemetry.go: its span's parent and budget. A copy made here
		// alone, so that req stays on the stack when telemetry is off.
		r := req
		child.spawnReq = &r
	}
	return x.b.start(ctx, p.parent, child, p.in, req.Background), nil
}

// request describes the child c, started by parent for the Agent call
// in, as plain data. It shares c's slices and strings: building it copies
// nothing.
func (c *agent) request(parent *agent, in agentInput, bg bool) executor.SpawnRequest {
	def, r := c.def, &c.spawnReceipt
	req := executor.SpawnRequest{
		AgentID: c.id, ParentID: parent.name(), RootID: c.run.rt.session, ToolUseID: c.toolUseID, Depth: c.depth, Background: bg,
		Description: in.Description, Prompt: in.Prompt, Messages: c.start, CacheHints: c.cacheHints,
		Ceiling: executor.Ceiling{Tools: r.Tools, AgentTypes: c.types, Rules: c.perms.Rules, NoPrompt: c.perms.NoPrompt,
			ReadOnly: c.perms.ReadOnly, Unavailable: c.unavailable},
		Model: executor.Model{ID: c.modelID, Rule: r.ModelRule}, Mode: c.perms.Mode, Cwd: c.env.Cwd,
		Isolation: executor.Isolation{Kind: c.isolation}, Receipt: *r,
	}
	req.Definition = executor.Definition{
		Name: def.Name, Path: def.Path, SystemPrefix: c.systemPrefix, System: c.system, InitialPrompt: def.InitialPrompt,
		Model: def.Model, Effort: agentdef.Effort(c.effort), PermissionMode: def.PermissionMode, MaxTurns: c.maxTurns,
		MCPServers: r.MCPServers, Hooks: def.Hooks, Skills: def.Skills, Isolation: def.Isolation, OneShot: def.OneShot, Fork: c.fork,
		OutputSchema: c.outputSchema,
	}
	if len(def.Hooks) > 0 {
		req.Definition.HooksFrom = def.Path
	}
	return req
}

// Events implements executor.Handle: the events of the child and its
// descendants as the session's stream got them. Only an executor made
// with watch keeps them (the engine reads the session's stream).
func (h *childRun) Events() iter.Seq2[run.Event, error] {
	return func(yield func(run.Event, error) bool) {
		x := h.child.run.rt.bg.local
		x.mu.Lock()
		e, ok := x.taps[h.id]
		x.mu.Unlock()
		if !ok || !e.owner {
			yield(run.Event{}, executor.ErrNotWatched)
			return
		}
		for i := 0; ; i++ {
			ev, ok := e.t.at(i)
			if !ok {
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// Send implements executor.Handle through SendMessage's own path
// (background.send): a running child gets the message at its next tool
// round; a finished one is continued with it as a background child of the
// sender (m.From when it is a live agent of the session, else the child's
// parent), or the refusal says why.
func (h *childRun) Send(ctx context.Context, m executor.Message) (executor.Delivery, error) {
	b := h.child.run.rt.bg
	from := h.parent
	if live := b.handle(m.From); live != nil && live.child != nil && m.From != h.id {
		from = live.child
	}
	out, err := b.send(ctx, from, "", tasktools.Message{To: h.id, Message: m.Text, Summary: m.Summary})
	switch {
	case err != nil:
		return "", fmt.Errorf("message to agent %s: %w", h.id, err)
	case out.IsError:
		return "", &executor.RefusedError{AgentID: h.id, Reason: out.Text}
	case out.Text == prompts.MessageQueued(h.id):
		return executor.Queued, nil
	}
	return executor.Resumed, nil
}

// Stop implements executor.Handle: the agent's latest run and its
// subtree are cancelled; finish waits for the subtree before it closes
// done.
func (h *childRun) Stop(ctx context.Context) error {
	cur := h.latest()
	select {
	case <-cur.done:
		return nil
	default:
	}
	reg := h.child.run.rt.bg.reg
	if _, err := reg.Stop(h.id); err != nil {
		if _, known := reg.Get(h.id); !known {
			return fmt.Errorf("stop agent %s: %w", h.id, err)
		}
		// It ended in the registry; its finish is under way.
	}
	select {
	case <-cur.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stop agent %s: %w", h.id, ctx.Err())
	}
}

// Wait implements executor.Handle: the structured result of the agent's
// latest run (a message may have continued it).
func (h *childRun) Wait(ctx context.Context) (*run.SubagentResult, error) {
	cur := h.latest()
	select {
	case <-cur.done:
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for agent %s: %w", h.id, ctx.Err())
	}
	c := cur.child
	if c.final != nil {
		return c.final, nil
	}
	// It ended before it could run (no worktree, no transcript): what its
	// call got says why.
	cur.mu.Lock()
	out, err := cur.out, cur.err
	cur.mu.Unlock()
	status, why := reportOf(c).outcome(err)
	if err == nil && out.IsError {
		why = out.Text
	}
	return reportOf(c).structured(status, nil, errors.New(why), 0, ""), nil
}

// latest is the agent's latest run (a SendMessage continues an ended
// agent as a new run under its id).
func (h *childRun) latest() *childRun {
	if cur := h.child.run.rt.bg.handle(h.id); cur != nil && cur.child != nil {
		return cur
	}
	return h
}

// tapEntry is a watched child's record of events, under each id of its
// subtree; owner marks the watched child's own entry.
type tapEntry struct {
	t     *tap
	owner bool
}

// tap is the events of one watched subtree, appended as they reach the
// session's stream.
type tap struct {
	mu     sync.Mutex
	evs    []run.Event
	done   bool
	signal chan struct{}
}

// tap starts keeping the events of agent id: under its parent's record
// when its parent is watched, else in a record of its own.
func (x *localExecutor) tap(id, parent string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.taps == nil {
		x.taps = map[string]tapEntry{}
	}
	if e, ok := x.taps[parent]; ok && parent != "" {
		x.taps[id] = tapEntry{t: e.t}
		return
	}
	x.taps[id] = tapEntry{t: &tap{signal: make(chan struct{})}, owner: true}
}

// emit sends ev to the session's stream (the hub); a watching executor
// also keeps it for its agent's watcher.
func (b *background) emit(ctx context.Context, ev run.Event) error {
	err := b.hub.Send(ctx, ev)
	if err == nil && b.local.watch.Load() {
		b.local.record(ev)
	}
	return err
}

// record keeps ev for the watcher of its agent (emit).
func (x *localExecutor) record(ev run.Event) {
	x.mu.Lock()
	e, ok := x.taps[ev.AgentID]
	x.mu.Unlock()
	if !ok {
		return
	}
	e.t.mu.Lock()
	e.t.evs = append(e.t.evs, ev)
	close(e.t.signal)
	e.t.signal = make(chan struct{})
	e.t.mu.Unlock()
}

// ended closes the record of agent id once it has ended (its last event
// was recorded before).
func (x *localExecutor) ended(id string) {
	x.mu.Lock()
	e, ok := x.taps[id]
	x.mu.Unlock()
	if !ok || !e.owner {
		return
	}
	e.t.mu.Lock()
	e.t.done = true
	close(e.t.signal)
	e.t.signal = make(chan struct{})
	e.t.mu.Unlock()
}

// at returns the i-th event, waiting for it; false once the child has
// ended and every event was read.
func (t *tap) at(i int) (run.Event, bool) {
	for {
		t.mu.Lock()
		if i < len(t.evs) {
			ev := t.evs[i]
			t.mu.Unlock()
			return ev, true
		}
		done, ch := t.done, t.signal
		t.mu.Unlock()
		if done {
			return run.Event{}, false
		}
		<-ch
	}
}
