package engine

// Remote agents (issue 26, S-9.2): a child started with `isolation:
// remote` (its Agent call or its definition), or any child of a session
// with Config.Remote.All (--remote), runs on another machine through
// Config.Remote.Executor. It goes through the same spawn path and
// lifecycle as a local child (lifecycle.go): the checks, the gate — it
// holds its slot on the launcher while it runs, so the caps hold across
// the tree —, the task registry and journal, one journaled notification
// at its end; only the run itself is the remote executor's. It always
// runs in the background. While it runs, its events go to the session's
// stream and its progress to the task registry; a message sent to it
// (SendMessage) is handed to the executor's Handle; stopping its task
// (TaskStop, Runtime.Stop, the session closing) stops its remote subtree.
// Started in a git repository, it works in a fresh worktree of the
// worker's own clone at the launcher's commit, and its work comes back as
// the branch worktree-agent-<id> (internal/remote/workspace), kept and
// merged like a local isolated agent's.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/internal/remote/workspace"
	iworkspace "github.com/cadre-dev/cadre/internal/workspace"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/tool"
)

// Remote configures remote agents: the engine's copy of
// cadre.RemoteConfig.
type Remote struct {
	Executor   executor.Executor
	All        bool
	PickupWait time.Duration
}

// DefaultPickupWait is how long a remote agent may wait for a worker to
// take it before it fails saying no worker did (Remote.PickupWait 0).
const DefaultPickupWait = 2 * time.Minute

// stopGrace bounds how long a stopped remote child's executor may take
// to stop its subtree before the launcher reports it killed anyway.
const stopGrace = 30 * time.Second

// remoteRun runs an agent on the remote executor (remote.go); log is its
// transcript on the launcher (remotelog.go), nil without one.
type remoteRun struct {
	a   *agent
	log *remoteLog
}

func remoteOf(a *agent) remoteRun { return remoteRun{a: a} }

// remoteKind applies Config.Remote.All to an isolation kind: with it,
// a child that asks for none runs remotely.
func (tg treeGlue) remoteKind(kind agentdef.Isolation) agentdef.Isolation {
	if kind == "" && tg.a.run.rt.cfg.Remote.All {
		return agentdef.IsolationRemote
	}
	return kind
}

// checkRemote validates `isolation: remote`: a remote executor must be
// configured, and a remote agent takes no cwd (it works on the worker).
func (tg treeGlue) checkRemote(q isolationRequest) *refusal {
	if tg.a.run.rt.cfg.Remote.Executor == nil {
		return &refusal{msg: prompts.IsolationUnsupported(string(agentdef.IsolationRemote))}
	}
	if q.cwd != "" {
		return &refusal{msg: prompts.RemoteWithCwd()}
	}
	return nil
}

// execute runs the child on the remote executor and waits for its end,
// as execute (spawn.go) runs a local one: its task events, its result
// and its work landed in the launcher's repository.
func (rr remoteRun) execute(ctx context.Context, parent *agent, in agentInput) (tool.Output, error) {
	c := rr.a
	rs, rt := c.run, c.run.rt
	start := rt.cfg.Now()
	req := c.request(parent, in, true)
	rr.spec(ctx, &req)                          // remotebudget.go: its reservation and trace travel with it
	attaching := reattachOf(rt.bg).taking(c.id) // reattach.go: an earlier process started it
	if !attaching {
		rr.describe(ctx, parent, &req)
	}
	if err := rs.send(ctx, run.Event{Type: run.EventTaskStarted, AgentID: c.id, ParentToolUseID: c.toolUseID, Task: c.taskInfo(parent, in, task.Running)}); err != nil {
		c.final = reportOf(c).structured(task.Killed, nil, err, 0, "")
		rs.sendFinal(run.Event{Type: run.EventTaskCompleted, AgentID: c.id, ParentToolUseID: c.toolUseID, Subagent: c.final})
		rs.count(func(s *run.SubagentStats) { s.Killed++ })
		return tool.Output{}, err
	}
	log, err := openRemoteLog(c, parent, in) // remotelog.go
	if err != nil {
		res := reportOf(c).structured(task.Failed, nil, fmt.Errorf("start its transcript: %w", err), rt.cfg.Now().Sub(start), "")
		return rr.end(ctx, parent, res)
	}
	rr.log = log
	var hd executor.Handle
	launch := func(req executor.SpawnRequest) (executor.Handle, error) {
		hd, err := rt.cfg.Remote.Executor.Start(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("start it remotely: %w", err)
		}
		rr.keep(req, true) // reattach.go: a resumed session attaches to it
		return hd, nil
	}
	if attaching {
		hd, err = rr.attach(ctx, req, func(kept executor.SpawnRequest) (executor.Handle, error) {
			rr.describe(ctx, parent, &kept) // it never started: at the launcher's commit now
			return launch(kept)
		})
	} else {
		hd, err = launch(req)
	}
	if err != nil {
		res := reportOf(c).structured(task.Failed, nil, err, rt.cfg.Now().Sub(start), "")
		rr.closeLog(ctx, res)
		return rr.end(ctx, parent, res)
	}
	var msgs sync.WaitGroup
	evCtx, stopEvents := context.WithCancel(context.WithoutCancel(ctx))
	msgCtx, stopMsgs := context.WithCancel(context.WithoutCancel(ctx))
	picked := make(chan struct{})
	forwarded := make(chan struct{})
	var spent remoteSpend // read after forwarded is closed
	go func() {
		defer close(forwarded)
		rr.forwardEvents(evCtx, hd, picked, &spent)
	}()
	msgs.Go(func() { rr.forwardMessages(msgCtx, hd) })
	res, err := rr.wait(ctx, hd, picked)
	stopMsgs()
	msgs.Wait()
	rr.drainEvents(ctx, err == nil && res != nil && res.Status != task.Killed, forwarded, stopEvents)
	if err != nil {
		res = reportOf(c).structured(task.Failed, nil, fmt.Errorf("lost track of the remote agent: %w", err), rt.cfg.Now().Sub(start), "")
	}
	res = rr.adopt(res, start)
	res.Budget = rr.settle(res, spent) // remotebudget.go
	if w, ok := hd.(executor.WorkHandle); ok {
		res.Worktree = rr.land(context.WithoutCancel(ctx), parent, w)
	}
	rr.closeLog(ctx, res)
	return rr.end(ctx, parent, res)
}

// closeLog ends the child's transcript (remotelog.go) before its end is
// reported, so that whoever hears of it can read the whole of it; a line
// that could not be written is a warning of the child.
func (rr remoteRun) closeLog(ctx context.Context, res *run.SubagentResult) {
	if rr.log == nil {
		return
	}
	res.TranscriptPath = rr.log.tpath
	if err := rr.log.close(context.WithoutCancel(ctx), res); err != nil {
		res.Receipt.Warnings = append(res.Receipt.Warnings, err.Error())
		rr.a.run.rt.bg.recordFailed("transcripts", err)
	}
}

// describe names the launcher's repository and commit in req when the
// parent works in a git repository: the worker checks the child out there.
func (rr remoteRun) describe(ctx context.Context, parent *agent, req *executor.SpawnRequest) {
	if _, ok := iworkspace.FindRepo(parent.env.Cwd); !ok {
		return
	}
	src, err := workspace.Describe(ctx, parent.env.Cwd)
	if err != nil {
		rr.a.warn("the remote agent gets no copy of the repository: " + err.Error())
		return
	}
	rr.seed(ctx, parent, &src) // remotelog.go: a continued agent goes on from its landed branch
	req.Workspace = &src
}

// wait waits for the remote child's result; when ctx ends first (its
// task was stopped, the session closes) it stops the remote subtree and
// reports how it ended.
func (rr remoteRun) wait(ctx context.Context, hd executor.Handle, picked <-chan struct{}) (*run.SubagentResult, error) {
	type waited struct {
		res *run.SubagentResult
		err error
	}
	ch := make(chan waited, 1)
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	go func() {
		res, err := hd.Wait(wctx)
		ch <- waited{res, err}
	}()
	bound := cmpDuration(rr.a.run.rt.cfg.Remote.PickupWait, DefaultPickupWait)
	timer := time.NewTimer(bound)
	defer timer.Stop()
	noPickup := timer.C
	for noPickup != nil {
		select {
		case w := <-ch:
			return w.res, w.err
		case <-picked:
			noPickup = nil
		case <-noPickup:
			// No worker took it: say so rather than wait for ever.
			sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), stopGrace)
			stopErr := hd.Stop(sctx)
			scancel()
			res := reportOf(rr.a).structured(task.Failed, nil, errors.Join(errors.New(prompts.RemoteNotPickedUp(bound)), stopErr), bound, "")
			return res, nil
		case <-ctx.Done():
			noPickup = nil
		}
		if ctx.Err() != nil {
			break
		}
	}
	select {
	case w := <-ch:
		return w.res, w.err
	case <-ctx.Done():
	}
	sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), stopGrace)
	defer scancel()
	stopErr := hd.Stop(sctx)
	select {
	case w := <-ch:
		if w.err == nil && w.res != nil && w.res.Status != task.Killed && stopErr == nil {
			return w.res, nil // it had ended before the stop
		}
		res := reportOf(rr.a).structured(task.Killed, nil, ctx.Err(), 0, "")
		if w.res != nil {
			res = w.res
			res.Status = task.Killed
		}
		return res, nil
	case <-sctx.Done():
		cancel()
		return reportOf(rr.a).structured(task.Killed, nil, errors.Join(ctx.Err(), stopErr), 0, ""), nil
	}
}

// adopt makes the executor's result the child's: its id, call, type and
// receipt as the launcher knows them.
func (rr remoteRun) adopt(res *run.SubagentResult, start time.Time) *run.SubagentResult {
	c := rr.a
	out := *res
	out.AgentID, out.ToolUseID, out.AgentType = c.id, c.toolUseID, c.typ
	if out.Model == "" {
		out.Model, out.ModelRule = c.modelID, c.spawnReceipt.ModelRule
	}
	out.Receipt = c.spawnReceipt
	if out.Duration == 0 {
		out.Duration = c.run.rt.cfg.Now().Sub(start)
	}
	switch out.Status {
	case task.Completed, task.Failed, task.Killed, task.BudgetExhausted:
	default:
		out.Status, out.Error = task.Failed, fmt.Sprintf("the remote executor reported status %q", res.Status)
	}
	return &out
}

// land brings the remote child's work into the launcher's repository as
// worktree-agent-<id>; nil when it had no workspace.
func (rr remoteRun) land(ctx context.Context, parent *agent, w executor.WorkHandle) *run.WorktreeOutcome {
	c := rr.a
	work, err := w.Work(ctx)
	if err != nil {
		return &run.WorktreeOutcome{State: run.WorktreeState("kept"), Reason: "the remote agent's work did not come back: " + err.Error()}
	}
	if work == nil {
		return nil
	}
	m, err := glueOf(c.run.rt).worktreeManager()
	if err == nil {
		lo, lerr := workspace.Land(ctx, m, parent.env.Cwd, c.id, c.run.rt.session, *work, 0)
		if lerr == nil {
			return outcomeOf(lo)
		}
		err = lerr
	}
	return &run.WorktreeOutcome{Branch: work.Branch, BaseCommit: work.Base, State: run.WorktreeState("kept"),
		Reason: "the remote agent's work could not be landed: " + err.Error()}
}

// end records the child's result and reports it, as execute does.
func (rr remoteRun) end(ctx context.Context, parent *agent, res *run.SubagentResult) (tool.Output, error) {
	c := rr.a
	rs := c.run
	c.final = res
	rs.count(func(s *run.SubagentStats) {
		switch res.Status {
		case task.Completed, task.BudgetExhausted:
			s.Completed++
		case task.Killed:
			s.Killed++
		default:
			s.Failed++
		}
	})
	if res.Status == task.Killed || ctx.Err() != nil {
		res.Status = task.Killed
		rs.sendFinal(run.Event{Type: run.EventTaskCompleted, AgentID: c.id, ParentToolUseID: c.toolUseID, Subagent: res})
		return tool.Output{}, cmpErr(ctx.Err(), errors.New(res.Error))
	}
	if err := rs.send(ctx, run.Event{Type: run.EventTaskCompleted, AgentID: c.id, ParentToolUseID: c.toolUseID, Subagent: res}); err != nil {
		return tool.Output{}, err
	}
	var failure error
	if res.Status == task.Failed {
		failure = errors.New(res.Error)
	}
	return reportOf(c).callResult(parent, res, failure), nil
}

// cmpDuration is d, or def when d is not positive.
func cmpDuration(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// cmpErr is the first non-nil error.
func cmpErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// forwardEvents sends the remote subtree's events to the session's
// stream and the child's tool calls and tokens to its task's progress.
// The child's own completion is the launcher's to send (end).
func (rr remoteRun) forwardEvents(ctx context.Context, hd executor.Handle, picked chan struct{}, spent *remoteSpend) {
	c := rr.a
	var once sync.Once
	pick := func() { once.Do(func() { close(picked) }) }
	for ev, err := range hd.Events() {
		if errors.Is(err, executor.ErrNotWatched) {
			// An executor that keeps no events cannot tell when a worker
			// took the agent: no bound then.
			pick()
			return
		}
		if err != nil || ctx.Err() != nil {
			return
		}
		if ev.AgentID == c.id {
			pick() // a worker runs it
			switch ev.Type {
			case run.EventTaskCompleted, run.EventTaskStarted, run.EventTaskPending:
				continue
			case run.EventToolEnd:
				if ev.Call != nil {
					feedOf(c).progress(ev.Call.Name, 0)
				}
			case run.EventAssistant:
				feedOf(c).progress("", ev.Usage.Total())
			}
		}
		rr.charge(spent, ev) // remotebudget.go
		rr.tally(ev)         // remoteusage.go: the run's usage, as its cost counts it
		rr.log.event(ev)     // remotelog.go: its own answers and tool rounds
		if ev.ParentToolUseID == "" {
			ev.ParentToolUseID = c.toolUseID
		}
		if err := c.run.send(ctx, ev); err != nil {
			return
		}
		if ev.AgentID == c.id && (ev.Type == run.EventToolEnd || ev.Type == run.EventAssistant) {
			_ = feedOf(c).sendProgress(ctx)
		}
	}
}

// drainEvents ends the forwarding of the remote child's events before
// its end is recorded. After a result came back (ended), Events ends by
// itself after the child's last event (executor.Handle), so the
// forwarding runs to its end: every tool call and token the child
// reported is in its task's progress before its completion is. Otherwise
// (stopped, lost, the session ending) the events still to come are
// dropped.
func (rr remoteRun) drainEvents(ctx context.Context, ended bool, forwarded <-chan struct{}, stop context.CancelFunc) {
	if ended {
		select {
		case <-forwarded:
		case <-ctx.Done():
		}
	}
	stop()
	<-forwarded
}

// forwardMessages hands what is sent to the running child (SendMessage
// queues it in the child's inbox) to the remote executor, which delivers
// it at the child's next round.
func (rr remoteRun) forwardMessages(ctx context.Context, hd executor.Handle) {
	c := rr.a
	for {
		ch := c.inbox.changed()
		if c.inbox.pending() {
			for _, b := range c.inbox.Take() {
				if b.Text == "" {
					continue
				}
				if _, err := hd.Send(ctx, executor.Message{From: "main", Text: b.Text}); err != nil {
					c.warn("a message to the remote agent was not delivered: " + err.Error())
				}
			}
			c.inbox.Sent()
			continue
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
	}
}
