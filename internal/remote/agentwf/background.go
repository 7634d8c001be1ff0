package agentwf

// Background sub-agents of a remote agent (issue 26): an Agent call with
// run_in_background starts its child workflow and returns at once, as a
// local background child does (async_launched); the child's end reaches
// its parent as a task notification with the parent's next round — after
// a tool round, or, when the parent's model ended its turn with children
// still running, once the first of them ends (settle), as a local agent
// waits for its own background children before it ends. A parent that is
// stopped cancels them with it (the child workflows' parent-close policy).

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/internal/engine/tasktools"
	"github.com/cadre-dev/cadre/internal/spawn"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
)

// bgChild is a background sub-agent still running.
type bgChild struct {
	req    executor.SpawnRequest
	acct   *spawn.Account // its reservation (budget.go)
	fut    workflow.ChildWorkflowFuture
	cancel workflow.CancelFunc
	start  time.Time
}

// spawnBackground starts the sub-agent of Agent call c in the background
// and returns the call's result at once.
func (a *agent) spawnBackground(ctx workflow.Context, c llm.Block, in tasktools.AgentInput) ToolDone {
	req := a.childRequest(c, in)
	req.Background = true
	acct, refused := a.prepareChild(ctx, in, &req) // budget.go: its budget, schema and trace
	if refused != "" {
		return toolError(c.ID, refused)
	}
	child := &agent{req: req, place: a.place}
	a.emit(run.Event{Type: run.EventTaskStarted, AgentID: req.AgentID, ParentToolUseID: c.ID, Task: child.taskInfo()})
	cctx, cancel := workflow.WithCancel(ctx)
	fut := workflow.ExecuteChildWorkflow(childOptions(cctx, req), WorkflowName, Input{Request: req, Placement: a.place})
	var exec workflow.Execution
	if err := fut.GetChildWorkflowExecution().Get(ctx, &exec); err != nil {
		cancel()
		settleChild(acct, run.SubagentResult{})
		status, _, errText, _ := a.failed(ctx, err)
		res := run.SubagentResult{AgentID: req.AgentID, AgentType: req.Definition.Name, ToolUseID: c.ID, Status: status, Error: errText}
		a.emit(run.Event{Type: run.EventTaskCompleted, AgentID: req.AgentID, ParentToolUseID: c.ID, Subagent: &res})
		return toolError(c.ID, fmt.Sprintf("Sub-agent %s could not start: %s", req.AgentID, errText))
	}
	a.bg = append(a.bg, &bgChild{req: req, acct: acct, fut: fut, cancel: cancel, start: workflow.Now(ctx)})
	text := prompts.AsyncLaunched{AgentID: req.AgentID, AgentType: req.Definition.Name, Description: in.Description}.Render()
	return ToolDone{Result: run.ToolResult{Text: text}, Block: llm.ToolResultBlock(c.ID, text, false)}
}

// pending is what the agent reads with its next round: the messages sent
// to it and the notifications of its background sub-agents that ended.
func (a *agent) pending(ctx workflow.Context) []llm.Block {
	return append(a.drain(), a.notifications(ctx)...)
}

// notifications takes the background sub-agents that have ended: their
// events join the agent's, their ends become task notifications.
func (a *agent) notifications(ctx workflow.Context) []llm.Block {
	var out []llm.Block
	running := a.bg[:0]
	for _, b := range a.bg {
		if !b.fut.IsReady() {
			running = append(running, b)
			continue
		}
		var o Output
		var res run.SubagentResult
		if err := b.fut.Get(ctx, &o); err != nil {
			status, _, errText, _ := a.failed(ctx, err)
			res = run.SubagentResult{AgentID: b.req.AgentID, AgentType: b.req.Definition.Name, ToolUseID: b.req.ToolUseID, Status: status,
				Error: errText, Duration: workflow.Now(ctx).Sub(b.start)}
			a.emit(run.Event{Type: run.EventTaskCompleted, AgentID: b.req.AgentID, ParentToolUseID: b.req.ToolUseID, Subagent: &res})
		} else {
			for i, ev := range o.Events {
				if i == 0 && ev.Type == run.EventTaskStarted && ev.AgentID == b.req.AgentID {
					continue // emitted when it started
				}
				a.emit(ev)
			}
			res = o.Result
		}
		settleChild(b.acct, res) // budget.go: its spend charged, the rest back
		a.progress.Usage = a.progress.Usage.Add(res.Usage)
		a.progress.Tokens = a.progress.Usage.Total()
		tn := prompts.TaskNotification{TaskID: b.req.AgentID, ToolUseID: b.req.ToolUseID, AgentType: res.AgentType, Description: b.req.Description,
			Status: res.Status, Error: res.Error, Tokens: res.Usage.Total(), ToolUses: res.ToolUses, Duration: res.Duration}
		if res.Status == task.Completed || res.Status == task.BudgetExhausted {
			tn.Report = res.Text
			if js := prompts.ReportJSON(res.StructuredOutput); js != "" { // typed.go
				tn.Report += "\n" + prompts.StructuredOutputBlock(js)
			}
		}
		out = append(out, llm.TextBlock(tn.Render()))
	}
	a.bg = running
	return out
}

// settle waits, when the agent's model ended its turn while background
// sub-agents of its own still run, until one of them ends or a message
// comes; false when none runs (the agent may end) or the agent was
// stopped meanwhile.
func (a *agent) settle(ctx workflow.Context) bool {
	if len(a.bg) == 0 {
		return false
	}
	err := workflow.Await(ctx, func() bool {
		if a.inbox.Len() > 0 {
			return true
		}
		for _, b := range a.bg {
			if b.fut.IsReady() {
				return true
			}
		}
		return false
	})
	return err == nil
}

// reap stops the background sub-agents still running when the agent ends
// without having waited for them (it failed, was stopped or hit its turn
// limit) and waits until they have ended, their ends among its events:
// nothing of its subtree outlives it.
func (a *agent) reap(ctx workflow.Context) {
	if len(a.bg) == 0 {
		return
	}
	dctx, cancel := workflow.NewDisconnectedContext(ctx)
	defer cancel()
	for _, b := range a.bg {
		b.cancel()
	}
	for _, b := range a.bg {
		_ = workflow.Await(dctx, b.fut.IsReady)
	}
	a.notifications(dctx)
}
