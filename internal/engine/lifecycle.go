package engine

import (
	"context"
	"path/filepath"
	"slices"
	"sync"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/tool"
)

// The life of a child agent, foreground or background, in one place:
//
//   - admit (spawn.go) takes the child through the spawn gate and calls
//     start, then — for a foreground child — waits for it (childRun.wait)
//     with its own slot given back.
//   - start registers the task and runs the child in a goroutine owned by
//     the session (background.wg). The child's context is detached from
//     its parent's turn (context.WithoutCancel) and cancelled by: the
//     parent's turn ending, while the child is in the foreground
//     (context.AfterFunc, undone when it moves to the background); the
//     session closing; Runtime.Stop / TaskStop on it or an ancestor.
//   - live waits for a slot when the child was queued, then execute runs
//     it (spawn.go): transcript and meta, task events, the loop, and
//     settle — a child that started background children of its own waits
//     for them and goes on with their notifications, so its completion is
//     never reported while its children still run (S-7.3).
//   - finish ends the task exactly once: a background child's
//     notification is journaled and queued for its parent before the
//     registry says it ended; a foreground child's result goes to the
//     waiting call.
//
// Attach per-child resources here, never in the callers: what must exist
// while the child runs (per-agent MCP servers, frontmatter hooks and
// SubagentStart, a worktree lease) is acquired at the top of execute
// (after the task is registered, before the loop), and released by a
// defer there, so it runs on success, failure, kill and panic, before
// finish reports the end (S-5.6). SubagentStop fires where settle has
// returned: the child's own children have ended by then.

// childRun is one started child: the handle its parent's Agent call waits
// on, the task's cancel, and how it ended.
type childRun struct {
	id     string
	child  *agent
	parent *agent
	in     agentInput
	cancel context.CancelFunc
	// detachTurn undoes the cancellation by the parent's turn (nil once
	// the child runs in the background).
	detachTurn func() bool
	// done is closed when the child has ended and its result is set;
	// moved when it is moved to the background while its call waits.
	done  chan struct{}
	moved chan struct{}
	// resumable is set for an agent that has ended and can be continued
	// with SendMessage (its definition, transcript and parent).
	resumable *resumeInfo

	mu         sync.Mutex
	background bool
	ended      bool
	out        tool.Output
	err        error
}

// resumeInfo is what continuing a finished agent needs.
type resumeInfo struct {
	typ, description, transcript string
	// cwd is where the agent worked (resume.go uses it while it exists).
	cwd string
}

// start registers child as a task and runs it in a goroutine owned by
// the session; bg says whether it starts in the background. The child's
// ticket (held or queued) is released when it ends.
func (b *background) start(ctx context.Context, parent, child *agent, in agentInput, bg bool) *childRun {
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	h := &childRun{id: child.id, child: child, parent: parent, in: in, cancel: cancel,
		done: make(chan struct{}), moved: make(chan struct{}), background: bg}
	if !bg {
		h.detachTurn = context.AfterFunc(ctx, cancel)
	}
	stopSession := context.AfterFunc(b.ctx, cancel)
	child.inbox = newInbox(child.id, parent.inbox, b)
	child.background = bg
	child.spawnReceipt.Background = bg
	status := task.Running
	if child.ticket.Queued() {
		status = task.Pending
	}
	info := child.taskRecord(parent, in, status, bg)
	_ = b.reg.Add(info, cancel)
	b.mu.Lock()
	b.agents[child.id] = h
	b.mu.Unlock()
	if bg {
		if err := b.taskJournal().Started(info); err != nil {
			// A crash would not replay it as interrupted.
			b.recordFailed("task journal", err)
		}
	}
	child.run.holdJournal()
	if !child.ticket.Queued() {
		holdFiles(child) // firstrequest.go: before its siblings start
	}
	b.wg.Go(func() {
		defer stopSession()
		defer cancel()
		defer child.held.Release()
		out, err := child.live(cctx, parent, in)
		b.finish(h, out, err)
	})
	return h
}

// taskRecord is the registry's record of the child.
func (c *agent) taskRecord(parent *agent, in agentInput, status task.Status, bg bool) task.Info {
	return task.Info{ID: c.id, ToolUseID: c.toolUseID, AgentType: c.typ, Description: in.Description, Parent: parent.name(),
		Depth: c.depth, Background: bg, Status: status, OutputFile: c.transcriptPath(), Remote: c.isolation == agentdef.IsolationRemote}
}

// transcriptPath is where the agent's transcript goes ("" when off).
func (c *agent) transcriptPath() string {
	rt := c.run.rt
	if rt.tpath == "" || c.id == "" {
		return rt.tpath
	}
	// transcript.AgentPath, with its directory computed once per Runtime.
	return filepath.Join(rt.agentDir, "agent-"+c.id+".jsonl")
}

// live waits for a slot when the child was queued (S-5.7), then runs it.
func (c *agent) live(ctx context.Context, parent *agent, in agentInput) (tool.Output, error) {
	rs, rt := c.run, c.run.rt
	if c.ticket.Queued() {
		queuedAt := rt.cfg.Now()
		err := c.pendingErr // its EventTaskPending went out in admit (spawn.go)
		if err == nil {
			if err = c.ticket.Wait(ctx); err != nil {
				// Killed while it waited: it never ran, and says so even
				// though its context is over (outcome.go).
				c.final = reportOf(c).structured(task.Killed, nil, err, 0, "")
				rs.sendFinal(run.Event{Type: run.EventTaskCompleted, AgentID: c.id, ParentToolUseID: c.toolUseID, Subagent: c.final})
			}
		}
		if err != nil {
			rs.count(func(s *run.SubagentStats) { s.Killed++ })
			return tool.Output{}, err
		}
		c.spawnReceipt.QueueWait = rt.cfg.Now().Sub(queuedAt)
		rt.bg.reg.Start(c.id)
	}
	ctx = telemetryOf(c).startChild(ctx, parent, in) // telemetry.go
	var out tool.Output
	var err error
	if c.isolation == agentdef.IsolationRemote {
		out, err = remoteOf(c).execute(ctx, parent, in) // remote.go
	} else {
		out, err = c.execute(ctx, parent, in)
	}
	telemetryOf(c).endChild(err)
	return out, err
}

// wait blocks the parent's Agent call until the child ends or is moved to
// the background, and returns the call's result.
func (h *childRun) wait(ctx context.Context) (tool.Output, error) {
	select {
	case <-h.done:
	case <-h.moved:
	}
	return h.outcome(ctx)
}

// outcome is the call's result once the child ended or was moved. It is
// wait's second half in a frame of its own, so the frame that waits is
// small (a waiting call's stack stays under a quarter of 16 KiB; see
// waiting in spawn.go).
func (h *childRun) outcome(ctx context.Context) (tool.Output, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.child
	if h.background {
		return tool.Output{Text: prompts.AsyncLaunched{AgentID: c.id, AgentType: c.typ, Description: h.in.Description,
			OutputFile: c.transcriptPath(), Moved: true}.Render()}, nil
	}
	if h.err != nil && ctx.Err() == nil {
		// Stopped on its own (Runtime.Stop): the parent goes on.
		return errorOutput(prompts.SubagentStopped(c.id, c.typ)), nil
	}
	return h.out, h.err
}

// toBackground moves a running foreground child to the background
// (S-7.4): its parent's call returns at once and the child goes on,
// detached from the parent's turn; its end comes as a notification.
func (b *background) toBackground(h *childRun) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended || h.background {
		return false
	}
	h.background = true
	if h.detachTurn != nil {
		h.detachTurn()
	}
	b.reg.SetBackground(h.id)
	if info, ok := b.reg.Get(h.id); ok {
		if err := b.taskJournal().Started(info); err != nil {
			b.recordFailed("task journal", err)
		}
	}
	close(h.moved)
	return true
}

// finish ends the child's task exactly once (see the comment at the top).
func (b *background) finish(h *childRun, out tool.Output, err error) {
	c := h.child
	status, errText := reportOf(c).outcome(err)
	if status == task.Killed {
		// Its background children die with it, and their ends are part
		// of this one notification: wait for them, then drop what they
		// sent (marked delivered, folded into this one).
		b.reg.StopBelow(c.id)
		for {
			ch := b.reg.Changed()
			if b.reg.LiveChildren(c.id) == 0 {
				break
			}
			<-ch
		}
		c.inbox.discard()
	}
	// Everything the child held is given back before anyone hears it
	// ended: its slot, its MCP lease, its hold on the run's transcripts.
	c.ticket.Release()
	budgetsOf(c).close() // budget.go: idempotent; covers a child that never ran
	mcpOf(c).release()   // mcp.go: idempotent; covers a child killed while queued
	c.run.releaseJournal()
	h.mu.Lock()
	bg := h.background
	h.ended, h.out, h.err = true, out, err
	h.resumable = &resumeInfo{typ: c.typ, description: h.in.Description, transcript: c.transcriptPath(), cwd: c.env.Cwd}
	h.mu.Unlock()
	if bg {
		telemetryOf(c).endedInBackground() // telemetry.go: the turn that reads it links back
		b.notify(h.parent.inbox, reportOf(c).notification(h, status, errText))
		if info, ok := b.reg.Get(c.id); ok {
			info.Status = status
			if err := b.taskJournal().Ended(info); err != nil {
				// A later process would take it for interrupted.
				b.recordFailed("task journal", err)
			}
		}
	}
	b.reg.Finish(c.id, status, errText)
	c.inbox.close()
	if b.local.watch.Load() {
		b.local.ended(c.id) // its events are all recorded (local.go)
	}
	close(h.done)
}

// outcome is how the child ended.
func (cr childReport) outcome(err error) (task.Status, string) {
	c := cr.a
	if f := c.final; f != nil {
		return f.Status, f.Error
	}
	if err != nil {
		return task.Killed, err.Error()
	}
	return task.Failed, prompts.AgentEndedWithoutResult()
}

// notification is what the parent of a background child hears of its end.
func (cr childReport) notification(h *childRun, status task.Status, errText string) *task.Notification {
	c := cr.a
	tn := prompts.TaskNotification{TaskID: c.id, ToolUseID: c.toolUseID, AgentType: c.typ, Description: h.in.Description,
		Status: status, OutputFile: c.transcriptPath(), Error: errText}
	if f := c.final; f != nil {
		tn.Tokens, tn.ToolUses, tn.Duration = f.Usage.Total(), f.ToolUses, f.Duration
		tn.Budget = budgetsOf(c).line(f.Budget)
		if status == task.Completed || status == task.BudgetExhausted {
			tn.Report = cr.report(f)
		}
	}
	if status == task.Killed && errText == context.Canceled.Error() {
		tn.Error = prompts.AgentStoppedEarly()
	}
	for _, d := range c.run.rt.denials.Since(c.denialsFrom) {
		if d.AgentID == c.id && d.Background {
			tn.Denied = append(tn.Denied, denialLine(d))
		}
	}
	return &task.Notification{TaskID: c.id, ToolUseID: c.toolUseID, AgentType: c.typ, Description: h.in.Description,
		Status: status, OutputFile: tn.OutputFile, Summary: tn.Summary(), Text: tn.Render()}
}

// denialLine describes a denied call for a notification.
func denialLine(d permission.Denial) string {
	in := string(d.ToolInput)
	if len(in) > 200 {
		in = in[:200] + "…"
	}
	return prompts.DeniedCall(d.ToolName, in, d.Reason)
}

// settle keeps a child that started background children of its own from
// ending before they do: it waits for their notifications (and messages
// sent to it) and runs its loop again on each batch, until nothing of its
// own is running and nothing waits for it (S-7.3). It does no work while
// it waits, so it gives its slot back meanwhile.
func (c *agent) settle(ctx context.Context, res *loop.Result, rec loop.Recorder) (*loop.Result, error) {
	reg := c.run.rt.bg.reg
	for {
		ch := c.inbox.changed()
		// Children first: one that ended queued its notification before
		// it left the registry, so the inbox check below sees it.
		if reg.LiveChildren(c.id) == 0 && !c.inbox.pending() {
			return res, nil
		}
		if !c.inbox.pending() {
			c.ticket.Suspend()
			select {
			case <-ch:
			case <-ctx.Done():
			}
			if err := c.ticket.Resume(ctx); err != nil {
				return nil, err
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			continue
		}
		msgs := append(slices.Clone(res.Messages), llm.Message{Role: llm.RoleUser, Content: c.inbox.Take()})
		next, err := c.safeRun(ctx, msgs, rec)
		if err != nil {
			return nil, err
		}
		next.Turns += res.Turns
		next.ToolUses += res.ToolUses
		next.Usage = next.Usage.Add(res.Usage)
		res = next
	}
}

// progress updates the agent's task: a finished tool call (tool != "") or
// tokens used by a request.
func (tf taskFeed) progress(tool string, tokens int64) {
	a := tf.a
	if a.id == "" {
		return
	}
	a.run.rt.bg.reg.Update(a.id, func(p *task.Progress) {
		if tool != "" {
			p.ToolUses++
			p.LastTool = tool
		}
		p.Tokens += tokens
	})
}

// sendProgress streams the sub-agent's progress as the registry has it
// (EventTaskProgress, stream-json's task_progress); nothing for the main
// agent.
func (tf taskFeed) sendProgress(ctx context.Context) error {
	a := tf.a
	if a.id == "" {
		return nil
	}
	info, ok := a.run.rt.bg.reg.Get(a.id)
	if !ok {
		return nil
	}
	ti := &run.TaskInfo{AgentID: a.id, ToolUseID: a.toolUseID, AgentType: a.typ, Description: info.Description, Status: info.Status,
		Background: info.Background, Depth: a.depth, Parent: info.Parent, Receipt: a.spawnReceipt, Progress: info.Progress,
		Teammate: teammateOf(a).info()} // team.go
	if a.account != nil {
		s := run.Spend(a.account.Spent()) // budget.go
		ti.Spent = &s
	}
	return a.run.send(ctx, run.Event{Type: run.EventTaskProgress, AgentID: a.id, ParentToolUseID: a.toolUseID, Task: ti})
}
