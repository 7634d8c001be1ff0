package agentwf

// A remote agent in the launcher's trace (S-15.7). The launcher's
// invoke_agent CLIENT span travels in the spawn request
// (executor.SpawnRequest.Trace); the workflow picks the id of the
// agent's invoke_agent SERVER span once (a side effect, so every worker
// replaying it sees the same), every call's chat and execute_tool spans
// name it as their parent, and SpanActivity records the SERVER span
// itself when the agent ends (telemetry.RecordRemoteAgent). Its
// sub-agents' spans hang under it. A worker without telemetry records
// nothing; a launcher without it sends no trace and the workflow
// schedules no span call.

import (
	"context"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/telemetry"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/task"
)

// spanWait bounds how long an ended agent waits for its span to be
// recorded.
const spanWait = 30 * time.Second

// traceSpan picks the agent's span id when the launcher sent a trace.
func (a *agent) traceSpan(ctx workflow.Context) {
	if a.req.Trace.TraceParent == "" {
		return
	}
	var id string
	if err := workflow.SideEffect(ctx, func(workflow.Context) any { return telemetry.NewSpanID() }).Get(&id); err != nil {
		return
	}
	a.spanID = id
	a.trace = executor.TraceContext(telemetry.Child(telemetry.TraceContext(a.req.Trace), id))
}

// recordSpan has a worker record the agent's span once it ended.
func (a *agent) recordSpan(ctx workflow.Context, out *Output) {
	if a.spanID == "" {
		return
	}
	res := out.Result
	run := telemetry.RemoteRun{
		Agent: telemetry.Agent{ID: a.req.AgentID, Type: a.req.Definition.Name, Description: a.req.Description, Parent: a.req.ParentID,
			Model: a.req.Model.ID, Depth: a.req.Depth, Background: a.req.Background, Isolation: "remote", Trace: telemetry.TraceContext(a.req.Trace)},
		SpanID: a.spanID, Start: a.start, End: workflow.Now(ctx), Status: string(res.Status), Usage: a.progress.Usage,
	}
	if res.Status == task.Failed {
		run.Error = res.Error
	}
	dctx, cancel := workflow.NewDisconnectedContext(ctx)
	defer cancel()
	// A span that cannot be recorded loses the span, never the agent: a
	// few tries within a bound (a worker too old to know the call fails
	// it), then the agent's end goes on.
	sctx := workflow.WithActivityOptions(dctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second, ScheduleToCloseTimeout: spanWait,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 100 * time.Millisecond, MaximumAttempts: 3},
	})
	_ = workflow.ExecuteActivity(sctx, SpanActivity, AgentSpan{Session: a.req.RootID, Run: run}).Get(dctx, nil)
}

// RecordSpan records an ended agent's invoke_agent span (SpanActivity).
func (a *Activities) RecordSpan(ctx context.Context, in AgentSpan) error {
	a.Tel.ForSession(in.Session).RecordRemoteAgent(ctx, in.Run)
	return nil
}

// observeRequest starts the model call's chat span under its agent's
// span; the function it returns ends it.
func (a *Activities) observeRequest(ctx context.Context, in ModelCall, req *llm.Request) (context.Context, func(*llm.Response, error)) {
	o := a.Tel.ForSession(in.Session).Observer(in.AgentID, "")
	if o == nil || in.Trace.TraceParent == "" {
		return ctx, func(*llm.Response, error) {}
	}
	return o.StartRequest(telemetry.Extract(ctx, telemetry.TraceContext(in.Trace)), req)
}

// observeTool has the tool call's execute_tool span made under its
// agent's span.
func (a *Activities) observeTool(ctx context.Context, in ToolCall, cfg *loop.Config) context.Context {
	o := a.Tel.ForSession(in.Session).Observer(in.AgentID, in.AgentType)
	if o == nil || in.Trace.TraceParent == "" {
		return ctx
	}
	cfg.Observer = o
	return telemetry.Extract(ctx, telemetry.TraceContext(in.Trace))
}
