package agentwf

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/internal/engine/tasktools"
	"github.com/cadre-dev/cadre/internal/remote/workspace"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/tool"
)

// HeartbeatTimeout bounds how long a worker may go silent in a call
// before the server gives the call to another worker: a killed worker's
// agents continue after about this long. Activities heartbeat every
// HeartbeatTimeout/4, and the worker sends them at that pace (the SDK's
// default sends at 80 % of the timeout, which left a loaded worker —
// 64 agents on 2 cores — missing it and its calls made twice).
const HeartbeatTimeout = 5 * time.Second

// activityOptions are those of every model and tool call: retried (on
// another worker) only when the worker was lost — an error the call
// returns is the agent's to see — and waited for when cancelled, so a
// stopped agent's calls have ended when its workflow has.
func activityOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 24 * time.Hour,
		HeartbeatTimeout:    HeartbeatTimeout,
		WaitForCancellation: true,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    100 * time.Millisecond,
			BackoffCoefficient: 2,
			MaximumInterval:    time.Second,
		},
	})
}

// agent is one agent workflow's state.
type agent struct {
	req      executor.SpawnRequest
	start    time.Time
	msgs     []llm.Message
	events   []run.Event
	progress Progress
	files    map[string]tool.FileStamp
	models   []string
	stats    map[string]int
	inbox    workflow.ReceiveChannel
	// place is where the agent's calls run when it has a workspace (nil:
	// any worker); owns says the tree is its own, to finish at its end;
	// lost that the worker holding it stopped taking calls.
	place *Placement
	owns  bool
	lost  bool
	// bud is the agent's budget (budget.go; nil: none); out its output
	// schema (typed.go; nil: none).
	bud *budget
	out *typed
	// spanID is the agent's invoke_agent span on the workers and trace
	// its context, the parent of its calls' spans (telemetry.go; empty:
	// no trace).
	spanID string
	trace  executor.TraceContext
	// bg are its background sub-agents still running (background.go).
	bg []*bgChild
	// snap is the agent's tree after its last call that changed it (nil:
	// as checked out); stale that a change since is not in it; moves how
	// often the tree was restored elsewhere (see call).
	snap  *workspace.Snapshot
	stale bool
	moves int
	// snapErr is why the last snapshot was not taken (for the log).
	snapErr string
}

// callOptions are activityOptions, on the worker holding the agent's
// tree when it has one: a call that no worker takes from that worker's
// queue within the placement's wait fails (ScheduleToStart), so an agent
// whose worker died ends saying so instead of waiting for ever.
func (a *agent) callOptions(ctx workflow.Context) workflow.Context {
	ctx = activityOptions(ctx)
	if a.place == nil {
		return ctx
	}
	ao := workflow.GetActivityOptions(ctx)
	ao.TaskQueue = a.place.Queue
	ao.ScheduleToStartTimeout = a.place.Wait
	return workflow.WithActivityOptions(ctx, ao)
}

// maxMoves bounds how often one agent's tree is restored on another
// worker.
const maxMoves = 5

// call runs one call of the agent (an activity) where its calls run.
// When the worker holding the agent's own tree is gone — the call waited
// the placement's wait in that worker's queue — and the tree's last
// snapshot holds everything the agent's completed calls did, the tree is
// restored from it on another worker and the call made there: the agent
// goes on, and no completed call runs again.
func (a *agent) call(ctx workflow.Context, name string, in func() any, out any) error {
	for {
		err := workflow.ExecuteActivity(a.callOptions(ctx), name, in()).Get(ctx, out)
		if err == nil {
			return nil
		}
		if !a.movable(ctx, err) {
			if lostWorker(err) && ctx.Err() == nil {
				workflow.GetLogger(ctx).Warn("the agent's tree cannot move to another worker", "agent", a.req.AgentID, "call", name,
					"owns", a.owns, "stale", a.stale, "snapshotError", a.snapErr, "moves", a.moves, "error", err)
			}
			return err
		}
		if merr := a.move(ctx); merr != nil {
			workflow.GetLogger(ctx).Warn("the agent's tree could not move to another worker", "agent", a.req.AgentID, "error", merr)
			return err
		}
	}
}

// movable reports whether err is the loss of the worker holding the
// agent's own tree, and the tree can be restored elsewhere.
func (a *agent) movable(ctx workflow.Context, err error) bool {
	return ctx.Err() == nil && a.owns && a.place != nil && !a.stale && a.moves < maxMoves && lostWorker(err)
}

// lostWorker reports whether err is a call that no worker took from the
// queue it was sent to within its wait (ScheduleToStart).
func lostWorker(err error) bool {
	var te *temporal.TimeoutError
	return errors.As(err, &te) && te.TimeoutType() == enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START
}

// move restores the agent's tree from its last snapshot on whichever
// worker takes the call; its later calls go there.
func (a *agent) move(ctx workflow.Context) error {
	a.moves++
	in := Checkout{AgentID: a.req.AgentID, SessionID: a.req.RootID, Source: *a.req.Workspace, Snapshot: a.snap}
	if in.Snapshot == nil {
		in.Snapshot = &workspace.Snapshot{Head: a.req.Workspace.Commit}
	}
	// Like the first checkout, the move waits for a worker however long:
	// a worker without a clone refuses it at once (the agent then fails
	// saying its worker is gone), and with no worker at all the workflow
	// itself cannot run. (A ScheduleToStart of --workspace-wait here
	// failed agents of a 64-agent move on a loaded machine, whose
	// checkouts queued behind each other.)
	var p Placement
	if err := workflow.ExecuteActivity(activityOptions(ctx), CheckoutActivity, in).Get(ctx, &p); err != nil {
		return err
	}
	a.place = &p
	return nil
}

// checkout makes the agent's tree on whichever worker takes the call;
// the agent's later calls go to that worker.
func (a *agent) checkout(ctx workflow.Context) error {
	in := Checkout{AgentID: a.req.AgentID, SessionID: a.req.RootID, Source: *a.req.Workspace}
	var p Placement
	if err := workflow.ExecuteActivity(activityOptions(ctx), CheckoutActivity, in).Get(ctx, &p); err != nil {
		return err
	}
	a.place, a.owns = &p, true
	return nil
}

// collect brings the agent's work back into out (even when the agent was
// stopped: its tree is its work).
func (a *agent) collect(ctx workflow.Context, out *Output) {
	if !a.owns {
		return
	}
	if a.lost {
		out.WorkError = prompts.RemoteWorkspaceLost(a.place.Queue, a.place.Wait)
		return
	}
	dctx, cancel := workflow.NewDisconnectedContext(ctx)
	defer cancel()
	var res workspace.Result
	if err := a.call(dctx, FinishActivity, func() any { return a.req.AgentID }, &res); err != nil {
		_, _, out.WorkError, _ = a.failed(dctx, err)
		return
	}
	out.Work = &res
}

// Agent is the agent workflow: the query loop of one agent, its model
// and tool calls as activities, its Agent calls as child workflows.
func Agent(ctx workflow.Context, in Input) (*Output, error) {
	a := &agent{req: in.Request, start: workflow.Now(ctx), stats: map[string]int{}, inbox: workflow.GetSignalChannel(ctx, SignalMessage)}
	if err := workflow.SetQueryHandler(ctx, QueryEvents, func(from int) ([]run.Event, error) {
		if from < 0 || from > len(a.events) {
			return nil, fmt.Errorf("events from %d: the agent has %d", from, len(a.events))
		}
		return eventsPage(a.events, from), nil // payload.go: a page that fits
	}); err != nil {
		return nil, fmt.Errorf("agent %s: query handler: %w", a.req.AgentID, err)
	}
	if err := workflow.SetQueryHandler(ctx, QueryProgress, func() (Progress, error) { return a.progress, nil }); err != nil {
		return nil, fmt.Errorf("agent %s: query handler: %w", a.req.AgentID, err)
	}
	a.emit(run.Event{Type: run.EventTaskStarted, Task: a.taskInfo()})
	a.msgs = append(a.msgs, in.History...)
	switch {
	case in.Message != nil:
		a.msgs = append(a.msgs, llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock(prompts.AgentMessage(in.Message.From, in.Message.Summary, in.Message.Text))}})
	case len(a.req.Messages) > 0:
		a.msgs = append(a.msgs, a.req.Messages...)
	default:
		prompt := a.req.Prompt
		if p := a.req.Definition.InitialPrompt; p != "" {
			prompt = p + "\n\n" + prompt
		}
		a.msgs = append(a.msgs, llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock(prompt)}})
	}
	a.place = in.Placement
	if a.req.Workspace != nil && a.place == nil {
		if err := a.checkout(ctx); err != nil {
			status, _, errText, _ := a.failed(ctx, err)
			return a.finish(ctx, status, "", errText, false), nil
		}
	}
	a.bud = newBudget(ctx, a.req)
	a.traceSpan(ctx) // telemetry.go
	typ, err := newTyped(a.req.Definition.OutputSchema, a.req.Definition.OutputAttempts)
	if err != nil {
		out := a.finish(ctx, task.Failed, "", prompts.OutputSchemaInvalid("output schema", err), false)
		a.collect(ctx, out)
		a.recordSpan(ctx, out)
		fitOutput(out) // payload.go
		return out, nil
	}
	a.out = typ
	lctx, endWatch := a.bud.watchWall(ctx) // budget.go: wall time is a deadline
	status, text, errText, maxHit := a.loop(lctx)
	a.reap(ctx) // background.go
	endWatch()
	if a.bud != nil && a.bud.wallUp && status == task.Killed && ctx.Err() == nil {
		status, text, errText, maxHit = a.budgetStop()
	}
	out := a.finish(ctx, status, text, errText, maxHit)
	a.collect(ctx, out)
	a.recordSpan(ctx, out) // telemetry.go
	fitOutput(out)         // payload.go
	return out, nil
}

// loop runs turns until the model ends its turn with nothing queued for
// it, a call fails, the turn limit is hit or the workflow is cancelled.
func (a *agent) loop(ctx workflow.Context) (status task.Status, text, errText string, maxHit bool) {
	for {
		if ctx.Err() != nil {
			return task.Killed, "", prompts.AgentStoppedEarly(), false
		}
		if a.bud.exhausted() {
			return a.budgetStop() // budget.go
		}
		var ans ModelAnswer
		call := ModelCall{AgentID: a.req.AgentID, ModelID: a.req.Model.ID, System: a.req.Definition.System, SystemPrefix: a.req.Definition.SystemPrefix,
			Tools: a.req.Ceiling.Tools, Messages: a.msgs, CacheHints: a.req.CacheHints, Unavailable: a.req.Ceiling.Unavailable,
			Extra: a.out.extra(), Budget: a.bud != nil, Trace: a.trace, Session: a.req.RootID, MCPServers: a.req.Definition.MCPServers}
		if n := payloadSize(call); n > PayloadLimit {
			// It would not fit in the activity's input (payload.go).
			return task.Failed, "", prompts.RemotePayloadTooLarge(n, PayloadLimit), false
		}
		if err := a.call(ctx, ModelActivity, func() any { return call }, &ans); err != nil {
			return a.failed(ctx, err)
		}
		a.progress.Turns++
		a.progress.Usage = a.progress.Usage.Add(ans.Usage)
		a.progress.Tokens = a.progress.Usage.Total()
		msg := ans.Message
		msg.Role = llm.RoleAssistant
		if len(msg.Content) == 0 {
			msg.Content = []llm.Block{llm.TextBlock("(no content)")}
		}
		a.msgs = append(a.msgs, msg)
		if ans.Model != "" && (len(a.models) == 0 || a.models[len(a.models)-1] != ans.Model) {
			a.models = append(a.models, ans.Model)
		}
		a.emit(run.Event{Type: run.EventAssistant, Message: &msg, Usage: ans.Usage, MessageID: ans.ID, Model: ans.Model,
			StopReason: ans.StopReason, APIDuration: ans.APIDuration})
		calls := msg.ToolUses()
		if a.bud.charge(cmpStr(ans.Model, a.req.Model.ID), ans.Usage) && len(calls) > 0 {
			return a.budgetStop() // spent with tools asked for: not made
		}
		if len(calls) == 0 {
			queued := a.pending(ctx) // background.go: messages, ended background sub-agents
			if len(queued) == 0 && a.settle(ctx) {
				queued = a.pending(ctx)
			}
			if ctx.Err() != nil {
				return task.Killed, "", prompts.AgentStoppedEarly(), false
			}
			if len(queued) > 0 {
				// A message came while the model answered: it is the
				// agent's next turn, not lost with its end.
				user := llm.Message{Role: llm.RoleUser, Content: queued}
				a.msgs = append(a.msgs, user)
				a.emit(run.Event{Type: run.EventUser, Message: &user}) // the launcher's transcript of it holds the turn
				continue
			}
			if a.out != nil && !a.out.done() { // typed.go: the answer is owed
				text, ok := a.out.remind()
				if !ok {
					return a.out.exhausted()
				}
				user := llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock(text)}}
				a.msgs = append(a.msgs, user)
				a.emit(run.Event{Type: run.EventUser, Message: &user})
				continue
			}
			return task.Completed, msg.Text(), "", false
		}
		results := make([]llm.Block, 0, len(calls))
		for _, c := range calls {
			a.emit(run.Event{Type: run.EventToolStart, Call: &c})
			a.progress.ToolUses++
			a.progress.LastTool = c.Name
			a.stats[c.Name]++
			var done ToolDone
			var err error
			if a.out.handles(c) {
				done = a.out.call(c) // typed.go: validated here
			} else if c.Name == "Agent" {
				done = a.subagent(ctx, c)
			} else {
				err = a.call(ctx, ToolActivity, func() any {
					in := ToolCall{AgentID: a.req.AgentID, AgentType: a.req.Definition.Name, Background: a.req.Background, Cwd: a.req.Cwd,
						Ceiling: a.req.Ceiling, Mode: a.req.Mode, Files: a.files, Call: c, Trace: a.trace, Session: a.req.RootID,
						MCPServers: a.req.Definition.MCPServers}
					if a.place != nil {
						in.Cwd, in.Tree = a.place.Dir, a.place.Owner
					}
					return in
				}, &done)
			}
			if err != nil {
				return a.failed(ctx, err)
			}
			a.noteSnapshot(c.Name, done)
			if done.Files != nil {
				a.files = done.Files
			}
			results = append(results, done.Block)
			a.emit(run.Event{Type: run.EventToolEnd, Call: &c, ToolResult: &done.Result})
			if ctx.Err() != nil {
				return task.Killed, "", prompts.AgentStoppedEarly(), false
			}
		}
		results = append(results, a.pending(ctx)...)
		if b, ok := a.bud.wrapUp(); ok { // told once, at 85 %
			results = append(results, b)
		}
		user := llm.Message{Role: llm.RoleUser, Content: results}
		a.msgs = append(a.msgs, user)
		a.emit(run.Event{Type: run.EventUser, Message: &user})
		if a.out.done() { // a matching answer ends the turn
			return task.Completed, msg.Text(), "", false
		}
		if a.out != nil && a.out.slot.Exhausted() {
			return a.out.exhausted()
		}
		if max := a.req.Definition.MaxTurns; max > 0 && a.progress.Turns >= max {
			return task.Completed, prompts.MaxTurnsReached(max), "", true
		}
	}
}

// noteSnapshot keeps the tree's state after the call named name.
func (a *agent) noteSnapshot(name string, done ToolDone) {
	if !a.owns {
		return
	}
	switch {
	case done.Snapshot != nil:
		a.snap, a.stale = done.Snapshot, false
	case done.SnapshotError != "":
		a.stale, a.snapErr = true, done.SnapshotError
	case name == "Agent":
		// A sub-agent worked in this tree; what it changed is in no
		// snapshot until this agent's next call that takes one.
		a.stale = true
	}
}

// failed is the end of an agent whose call failed, or whose workflow was
// cancelled while a call ran.
func (a *agent) failed(ctx workflow.Context, err error) (task.Status, string, string, bool) {
	if ctx.Err() != nil || temporal.IsCanceledError(err) {
		return task.Killed, "", prompts.AgentStoppedEarly(), false
	}
	if a.place != nil && lostWorker(err) {
		a.lost = true
		return task.Failed, "", prompts.RemoteWorkspaceLost(a.place.Queue, a.place.Wait), false
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return task.Failed, "", app.Message(), false
	}
	return task.Failed, "", err.Error(), false
}

// drain takes the messages signalled since the last round, framed as the
// agent reads them.
func (a *agent) drain() []llm.Block {
	var out []llm.Block
	for {
		var m executor.Message
		if !a.inbox.ReceiveAsync(&m) {
			return out
		}
		out = append(out, llm.TextBlock(prompts.AgentMessage(m.From, m.Summary, m.Text)))
	}
}

// subagent runs an Agent call as a child workflow and returns its result
// as the call's. The child gets the caller's ceiling (never wider) and
// definition; its events join the caller's.
func (a *agent) subagent(ctx workflow.Context, c llm.Block) ToolDone {
	if msg, ok := a.req.Ceiling.Unavailable[c.Name]; ok {
		return toolError(c.ID, msg) // at the depth limit
	}
	if !slices.Contains(a.req.Ceiling.Tools, c.Name) {
		// Its ceiling does not give it the Agent tool: a call the model
		// makes anyway starts nothing.
		return toolError(c.ID, prompts.NoSuchTool(c.Name, a.req.Ceiling.Tools))
	}
	var in tasktools.AgentInput
	if err := json.Unmarshal(c.Input, &in); err != nil {
		return toolError(c.ID, fmt.Sprintf("Agent: input is not valid: %v", err))
	}
	if in.RunInBackground != nil && *in.RunInBackground {
		return a.spawnBackground(ctx, c, in) // background.go
	}
	req := a.childRequest(c, in)
	acct, refused := a.prepareChild(ctx, in, &req) // budget.go: its budget, schema and trace
	if refused != "" {
		return toolError(c.ID, refused)
	}
	cctx := childOptions(ctx, req)
	child := &agent{req: req, place: a.place}
	a.emit(run.Event{Type: run.EventTaskStarted, AgentID: req.AgentID, ParentToolUseID: c.ID, Task: child.taskInfo()})
	var out Output
	err := workflow.ExecuteChildWorkflow(cctx, WorkflowName, Input{Request: req, Placement: a.place}).Get(ctx, &out)
	settleChild(acct, out.Result) // budget.go: its spend charged, the rest back
	if err != nil {
		// The child's workflow did not return (it was terminated, or
		// cancelled before it ran): its end is recorded here.
		status, _, errText, _ := a.failed(ctx, err)
		res := run.SubagentResult{AgentID: req.AgentID, AgentType: req.Definition.Name, ToolUseID: c.ID, Status: status, Error: errText}
		a.emit(run.Event{Type: run.EventTaskCompleted, AgentID: req.AgentID, ParentToolUseID: c.ID, Subagent: &res})
		return toolError(c.ID, fmt.Sprintf("Sub-agent %s ended %s: %s", req.AgentID, status, errText))
	}
	for i, ev := range out.Events {
		if i == 0 && ev.Type == run.EventTaskStarted && ev.AgentID == req.AgentID {
			continue // emitted when it started
		}
		a.emit(ev)
	}
	a.progress.Usage = a.progress.Usage.Add(out.Result.Usage)
	a.progress.Tokens = a.progress.Usage.Total()
	res := out.Result
	if res.Status != task.Completed && res.Status != task.BudgetExhausted {
		return toolError(c.ID, fmt.Sprintf("Sub-agent %s ended %s: %s", req.AgentID, res.Status, res.Error))
	}
	text := res.Text
	if text == "" {
		text = prompts.ToolNoOutput
	}
	if js := prompts.ReportJSON(res.StructuredOutput); js != "" {
		text += "\n" + prompts.StructuredOutputBlock(js)
	}
	return ToolDone{Result: run.ToolResult{Text: text}, Block: llm.ToolResultBlock(c.ID, text, false)}
}

// childRequest is the request of the sub-agent an Agent call c of the
// agent starts: the caller's ceiling (never wider) and definition.
func (a *agent) childRequest(c llm.Block, in tasktools.AgentInput) executor.SpawnRequest {
	req := a.req
	req.AgentID = a.req.AgentID + "." + c.ID
	req.ParentID = a.req.AgentID
	req.ToolUseID = c.ID
	req.Depth = a.req.Depth + 1
	req.Background = false
	req.Description = in.Description
	req.Prompt = in.Prompt
	req.Messages, req.CacheHints = nil, nil
	// A sub-agent works in its parent's tree, on the worker holding it.
	req.Workspace = nil
	if in.SubagentType != "" {
		req.Definition.Name = in.SubagentType
	}
	return req
}

// childOptions run req's child workflow under the agent's, cancelled
// when the agent's closes.
func childOptions(ctx workflow.Context, req executor.SpawnRequest) workflow.Context {
	return workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:          req.AgentID,
		ParentClosePolicy:   enumspb.PARENT_CLOSE_POLICY_REQUEST_CANCEL,
		WaitForCancellation: true,
	})
}

func toolError(id, msg string) ToolDone {
	return ToolDone{Result: run.ToolResult{Text: msg, IsError: true}, Block: llm.ToolResultBlock(id, msg, true)}
}

// emit records one event of the agent (or of its subtree, which carries
// its own ids).
func (a *agent) emit(ev run.Event) {
	if ev.AgentID == "" {
		ev.AgentID = a.req.AgentID
		ev.ParentToolUseID = a.req.ToolUseID
	}
	a.events = append(a.events, ev)
}

func (a *agent) taskInfo() *run.TaskInfo {
	return &run.TaskInfo{AgentID: a.req.AgentID, ToolUseID: a.req.ToolUseID, AgentType: a.req.Definition.Name, Description: a.req.Description,
		Status: task.Running, Background: a.req.Background, Depth: a.req.Depth, Parent: a.req.ParentID, Receipt: a.req.Receipt}
}

// finish builds the agent's result and its completion event.
func (a *agent) finish(ctx workflow.Context, status task.Status, text, errText string, maxHit bool) *Output {
	d := a.req.Definition
	res := run.SubagentResult{
		AgentID: a.req.AgentID, AgentType: d.Name, ToolUseID: a.req.ToolUseID, Status: status,
		Model: a.req.Model.ID, ModelRule: a.req.Model.Rule, ModelsUsed: a.models,
		Text: text, Error: errText, MaxTurnsHit: maxHit,
		Turns: a.progress.Turns, ToolUses: a.progress.ToolUses, ToolStats: a.stats, Usage: a.progress.Usage,
		Receipt: a.req.Receipt, Continuable: !d.OneShot && !d.Fork,
		Duration: workflow.Now(ctx).Sub(a.start), Budget: a.bud.spend(),
	}
	a.out.result(&res) // typed.go
	a.emit(run.Event{Type: run.EventTaskCompleted, Subagent: &res})
	return &Output{Result: res, Messages: a.msgs, Events: a.events}
}
