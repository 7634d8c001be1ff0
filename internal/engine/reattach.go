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
// (no executor) ends with one failure notification that says why. One
// the dead launcher had admitted but never started (it waited in the
// spawn gate's queue, or the process died before the executor's Start)
// is started now from its spawn request, kept in agent-<id>.remote.json
// beside the transcripts when it was admitted (remoteRecord).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/internal/safefs"
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

// reattacher is the session's side of re-attaching: a part of
// background (parts.go) with that one job.
type reattacher struct{ b *background }

func reattachOf(b *background) reattacher { return reattacher{b} }

// later keeps t, a remote task an earlier process left running, for the
// first run to take up again; b.mu is held (open).
func (ra reattacher) later(t task.Info) {
	ra.b.reattach.pending = append(ra.b.reattach.pending, t)
}

// all takes up again every remote task an earlier process left running,
// as background children of main; once per process.
func (ra reattacher) all(ctx context.Context, main *agent) {
	b := ra.b
	b.mu.Lock()
	pending := b.reattach.pending
	b.reattach.pending = nil
	b.mu.Unlock()
	for _, t := range pending {
		if err := ra.one(ctx, main, t); err != nil {
			ra.failed(t, err.Error())
		}
	}
}

// one registers t's agent again and runs it from Attach on (remote.go).
// An error means it was not started: the caller reports it.
func (ra reattacher) one(ctx context.Context, main *agent, t task.Info) error {
	b := ra.b
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

// pending reports whether agent id is being taken up again, without
// taking the mark (taking does).
func (ra reattacher) pending(id string) bool {
	b := ra.b
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.reattach.attaching[id]
}

// taking reports whether agent id is taken up again rather than started,
// once (remote.go asks when it runs it).
func (ra reattacher) taking(id string) bool {
	b := ra.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.reattach.attaching[id] {
		return false
	}
	delete(b.reattach.attaching, id)
	return true
}

// failed ends t, which could not be registered again, with one journaled
// failure notification for the main agent.
func (ra reattacher) failed(t task.Info, why string) {
	b := ra.b
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
// executor, when it can re-attach. One the executor does not know and
// that was never started (its record says so) is started now from the
// request kept when it was admitted, through start. The error is the
// child's failure as its notification says it.
func (rr remoteRun) attach(ctx context.Context, req executor.SpawnRequest, start func(executor.SpawnRequest) (executor.Handle, error)) (executor.Handle, error) {
	x, ok := rr.a.run.rt.cfg.Remote.Executor.(executor.Attacher)
	if !ok {
		return nil, errors.New(prompts.RemoteReattachFailed(prompts.RemoteNoReattach()))
	}
	hd, err := x.Attach(ctx, req)
	if err == nil {
		return hd, nil
	}
	if errors.Is(err, executor.ErrUnknownChild) {
		if rec, kept := rr.kept(); kept && !rec.Started {
			return start(rec.Request)
		}
	}
	return nil, errors.New(prompts.RemoteReattachFailed(err.Error()))
}

// remoteRecord is agent-<id>.remote.json, beside a remote child's
// transcript: its spawn request as it was admitted, and whether the
// executor has started it. A resumed session starts one that was never
// started (reattach).
type remoteRecord struct {
	Request executor.SpawnRequest `json:"request"`
	Started bool                  `json:"started,omitempty"`
}

// recordPath is the child's remote record ("" without transcripts).
func (rr remoteRun) recordPath() string {
	c := rr.a
	if c.run.rt.tpath == "" || c.id == "" {
		return ""
	}
	return strings.TrimSuffix(c.transcriptPath(), ".jsonl") + ".remote.json"
}

// keep writes the child's remote record: req, and whether it was started.
// A record that cannot be written is a warning of the session: only a
// resume after a crash would miss it.
func (rr remoteRun) keep(req executor.SpawnRequest, started bool) {
	path := rr.recordPath()
	if path == "" {
		return
	}
	rt := rr.a.run.rt
	data, err := json.Marshal(remoteRecord{Request: req, Started: started})
	if err == nil {
		err = safefs.WriteFileAtomic(rt.cfg.StateDir, path, data, 0o600)
	}
	if err != nil {
		rt.bg.recordFailed("remote agent record", fmt.Errorf("%s: %w", path, err))
	}
}

// kept reads the child's remote record.
func (rr remoteRun) kept() (*remoteRecord, bool) {
	path := rr.recordPath()
	if path == "" {
		return nil, false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	var rec remoteRecord
	if json.Unmarshal(data, &rec) != nil || rec.Request.AgentID != rr.a.id {
		return nil, false
	}
	return &rec, true
}
