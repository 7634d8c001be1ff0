package engine

import (
	"context"
	"errors"

	"github.com/cadre-dev/cadre/internal/telemetry"
	"github.com/cadre-dev/cadre/task"
)

// telGlue is an agent's side of telemetry (S-15.7): its invoke_agent
// span, parented by its spawn request's trace context (the parent's
// execute_tool Agent span), and the link a background child's end leaves
// for its parent's next model request. Every method returns at once when
// telemetry is off (Runtime.tel nil).
type telGlue struct{ a *agent }

func telemetryOf(a *agent) telGlue { return telGlue{a} }

// startChild starts the child's invoke_agent span and returns the context
// it runs in.
func (g telGlue) startChild(ctx context.Context, parent *agent, in agentInput) context.Context {
	c := g.a
	tel := c.run.rt.tel
	if tel == nil {
		return ctx
	}
	desc := telemetry.Agent{ID: c.id, Type: c.typ, Description: in.Description, Parent: parent.id, Model: c.modelID,
		Depth: c.depth, Background: c.background, Fork: c.fork, Isolation: string(c.isolation), Prompt: in.Prompt}
	if r := c.spawnReq; r != nil {
		desc.Trace = telemetry.TraceContext(r.Trace)
		desc.BudgetUSD, desc.BudgetTokens, desc.BudgetTurns, desc.BudgetWallTime = r.Budget.USD, r.Budget.Tokens, r.Budget.Turns, r.Budget.WallTime
	}
	ctx, c.span = tel.StartAgent(ctx, desc)
	return ctx
}

// endChild ends the child's span with how it ended.
func (g telGlue) endChild(err error) {
	c := g.a
	if c.span == nil {
		return
	}
	status, _ := reportOf(c).outcome(err)
	if c.final != nil {
		status = c.final.Status
		if c.final.Error != "" && err == nil {
			err = errors.New(c.final.Error)
		}
	}
	c.mu.Lock()
	u := c.usage
	c.mu.Unlock()
	c.span.End(string(status), u, c.run.rt.tel.Cost(c.modelID, u), err)
}

// endedInBackground keeps the ended background child's span until its
// notification is taken (linkNotes): the request that carries it links
// back to the child, whichever agent reads it (its parent, or the
// nearest live ancestor once the parent ended).
func (g telGlue) endedInBackground() {
	if c := g.a; c.span != nil {
		c.run.rt.tel.EndedInBackground(c.id, c.span.SpanContext())
	}
}

// linkNotes links the next model request of the inbox's owner to the
// spans of the background agents whose notifications it just took.
func linkNotes(tel *telemetry.Telemetry, owner string, taken []task.Message) {
	if tel == nil {
		return
	}
	for _, m := range taken {
		if m.Note != nil {
			tel.LinkTask(owner, m.Note.TaskID)
		}
	}
}

// startMain starts the main agent's invoke_agent span for one run; its
// parent is the span in ctx (an embedder's, or TRACEPARENT's), else for
// a run on notifications (notes) the last run's.
func (g telGlue) startMain(ctx context.Context, prompt string, notes bool) (context.Context, *telemetry.AgentSpan) {
	a := g.a
	tel := a.run.rt.tel
	if tel == nil {
		return ctx, nil
	}
	return tel.StartMain(ctx, telemetry.Agent{Type: a.typ, Model: a.modelID, Prompt: prompt}, notes)
}

// endMain ends the main agent's span for the run: completed, failed
// (err), or killed (cancelled).
func (g telGlue) endMain(span *telemetry.AgentSpan, err error) {
	if span == nil {
		return
	}
	a := g.a
	status := task.Completed
	switch {
	case err != nil && errors.Is(err, context.Canceled):
		status = task.Killed
	case err != nil:
		status = task.Failed
	}
	a.mu.Lock()
	u := a.usage
	a.mu.Unlock()
	span.End(string(status), u, a.run.rt.tel.Cost(a.modelID, u), err)
}
