package engine

// Re-attaching to remote agents (issue 26, point 5): a remote agent
// outlives its launcher — kill -9 of the process leaves it running on
// the workers. When the session is opened again (--resume, --continue),
// the task journal names the remote tasks that started and whose end
// was never journaled (task.Info.Remote, lifecycle.go); instead of an
// "interrupted" notification each is taken up again on the session's
// remote executor (executor.Attacher) at the first run, as a background
// child of the main agent with its own id, type, description and call:
// it is in the task registry with its progress, holds its slot, the run
// waits for it like any background task, TaskStop and TaskOutput work on
// it, its work lands as worktree-agent-<id>, and its end is one
// journaled notification (remote.go's path from Attach on). One that
// ended while no launcher watched is reported at once; one the executor
// no longer knows (its workflow is gone) or that cannot be re-attached
// (no executor) ends with one failure notification that says why.

import (
	"context"
	"errors"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/tool"
)

// reattachState is the session's remote tasks of an earlier process
// still to take up (pending, set by open) and those being taken up
// (attaching, read once by remoteRun.execute); b.mu guards both.
type reattachState struct {
	pending   []task.Info
	attaching map[string]bool
}

// reattachLater keeps t, a remote task an earlier process left running,
// for the first run to take up again; b.mu is held (open).
func (b *background) reattachLater(t task.Info) {
	b.reattach.pending = append(b.reattach.pending, t)
}

// reattachAll takes up again every remote task an earlier process left
// running, as background children of main; once per process.
func (b *background) reattachAll(ctx context.Context, main *agent) {
	b.mu.Lock()
	pending := b.reattach.pending
	b.reattach.pending = nil
	b.mu.Unlock()
	for _, t := range pending {
		if err := b.reattachOne(ctx, main, t); err != nil {
			b.reattachFailed(t, err.Error())
		}
	}
}

// reattachOne registers t's agent again and runs it from Attach on
// (remote.go). An error means it was not started: the caller reports it.
func (b *background) reattachOne(ctx context.Context, main *agent, t task.Info) error {
	r := b.rt
	def := r.defs[t.AgentType]
	if def == nil {
		// Its type is gone from this session's definitions; the agent
		// runs remotely from its own request, so the launcher's shell of
		// it takes the default type's ceiling and keeps its type's name.
		def = r.defs[defaultAgentType]
	}
	if def == nil {
		return errors.New("its type " + t.AgentType + " is no longer defined")
	}
	in := agentInput{Description: t.Description, SubagentType: t.AgentType, RunInBackground: new(true)}
	child, ref := main.newChildID(def, in, t.ToolUseID, main.env.Cwd, agentdef.IsolationRemote, t.ID)
	if ref != nil {
		return errors.New(ref.msg)
	}
	child.typ = t.AgentType
	b.mu.Lock()
	if b.reattach.attaching == nil {
		b.reattach.attaching = map[string]bool{}
	}
	b.reattach.attaching[t.ID] = true
	b.mu.Unlock()
	_, out, err := main.admit(ctx, tool.Turn{}, child, in, true) // background: nothing to wait on
	if err == nil && !out.IsError {
		return nil
	}
	b.mu.Lock()
	delete(b.reattach.attaching, t.ID)
	b.mu.Unlock()
	if err != nil {
		return err
	}
	return errors.New(out.Text)
}

// reattaching reports whether agent id is taken up again rather than
// started, once (remote.go asks when it runs it).
func (b *background) reattaching(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.reattach.attaching[id] {
		return false
	}
	delete(b.reattach.attaching, id)
	return true
}

// reattachFailed ends t, which could not be registered again, with one
// journaled failure notification for the main agent.
func (b *background) reattachFailed(t task.Info, why string) {
	tn := prompts.TaskNotification{TaskID: t.ID, ToolUseID: t.ToolUseID, AgentType: t.AgentType, Description: t.Description,
		Status: task.Failed, Error: prompts.RemoteReattachFailed(why)}
	n := &task.Notification{To: "main", TaskID: t.ID, ToolUseID: t.ToolUseID, AgentType: t.AgentType, Description: t.Description,
		Status: task.Failed, Summary: tn.Summary(), Text: tn.Render()}
	b.notify(b.main, n)
	t.Status = task.Failed
	if err := b.taskJournal().Ended(t); err != nil {
		b.recordFailed("task journal", err)
	}
}

// attach takes up the remote child of req again on the session's
// executor, when it can re-attach.
func (rr remoteRun) attach(ctx context.Context, req executor.SpawnRequest) (executor.Handle, error) {
	x, ok := rr.a.run.rt.cfg.Remote.Executor.(executor.Attacher)
	if !ok {
		return nil, errors.New(prompts.RemoteNoReattach())
	}
	return x.Attach(ctx, req)
}
