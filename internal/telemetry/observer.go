package telemetry

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// Observer watches one agent's model requests and tool calls: a chat span
// per request and an execute_tool span per call, children of the span in
// the context the loop hands them (the agent's invoke_agent). It
// implements the loop's Observer; nil when off.
type Observer struct {
	t         *Telemetry
	agentID   string
	agentType string
}

// Observer returns the observer of the agent id (of type typ); nil when
// off.
func (t *Telemetry) Observer(id, typ string) *Observer {
	if t == nil {
		return nil
	}
	return &Observer{t: t, agentID: agentID(id), agentType: typ}
}

// StartRequest starts the chat span of req; the function it returns ends
// it with the response or the error. The span links to the background
// children whose ends arrived since the agent's last request.
func (o *Observer) StartRequest(ctx context.Context, req *llm.Request) (context.Context, func(*llm.Response, error)) {
	t := o.t
	if t.tracer == nil {
		return ctx, func(resp *llm.Response, err error) { o.countUsage(ctx, req.Model, resp) }
	}
	attrs := []attribute.KeyValue{
		attribute.String(AttrOperationName, OpChat),
		attribute.String(AttrRequestModel, req.Model),
		attribute.String(AttrConversationID, t.session),
		attribute.String(AttrAgentID, o.agentID),
	}
	if t.set.Provider != "" {
		attrs = append(attrs, attribute.String(AttrProviderName, t.set.Provider))
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...)}
	if links := t.takeLinks(o.agentID); len(links) > 0 {
		opts = append(opts, trace.WithLinks(links...))
	}
	ctx, span := t.tracer.Start(ctx, OpChat+" "+req.Model, opts...)
	return ctx, func(resp *llm.Response, err error) {
		if resp != nil {
			span.SetAttributes(usageAttrs(resp.Usage)...)
			span.SetAttributes(attribute.String(AttrResponseModel, resp.Model), attribute.String(AttrResponseID, resp.ID),
				attribute.StringSlice(AttrResponseFinish, []string{string(resp.StopReason)}))
			if c, known := t.prices.Cost(cmpModel(resp.Model, req.Model), resp.Usage); known && c > 0 {
				span.SetAttributes(attribute.Float64(AttrCostUSD, c))
			}
		}
		endWithError(span, err)
		o.countUsage(ctx, req.Model, resp)
	}
}

// countUsage adds resp's tokens and cost to the metrics.
func (o *Observer) countUsage(ctx context.Context, model string, resp *llm.Response) {
	t := o.t
	if resp == nil || t.m.tokens == nil {
		return
	}
	model = cmpModel(resp.Model, model)
	u := resp.Usage
	for _, c := range [...]struct {
		typ string
		n   int64
	}{{TokenTypeInput, u.InputTokens}, {TokenTypeOutput, u.OutputTokens}, {TokenTypeCacheRead, u.CacheReadTokens}, {TokenTypeCacheCreation, u.CacheWriteTokens}} {
		if c.n > 0 {
			t.m.tokens.Add(ctx, c.n, metric.WithAttributes(attribute.String(AttrTokenType, c.typ), attribute.String(AttrModel, model),
				attribute.String(AttrAgentName, o.agentType)))
		}
	}
	if c, known := t.prices.Cost(model, u); known && c > 0 {
		t.m.cost.Add(ctx, c, metric.WithAttributes(attribute.String(AttrModel, model)))
	}
}

// StartTool starts the execute_tool span of call; the function it
// returns ends it with the call's output, whether it was denied, and the
// Go error that ended the turn, if any. An Agent call's span is the parent
// of the child's invoke_agent span.
func (o *Observer) StartTool(ctx context.Context, call llm.Block) (context.Context, func(tool.Output, bool, error)) {
	t := o.t
	if t.tracer == nil {
		return ctx, func(_ tool.Output, denied bool, _ error) { o.countDecision(ctx, call.Name, denied) }
	}
	attrs := []attribute.KeyValue{
		attribute.String(AttrOperationName, OpExecuteTool),
		attribute.String(AttrToolName, call.Name),
		attribute.String(AttrToolCallID, call.ID),
		attribute.String(AttrToolType, ToolTypeFunction),
		attribute.String(AttrConversationID, t.session),
		attribute.String(AttrAgentID, o.agentID),
	}
	if t.set.LogToolContent {
		attrs = append(attrs, attribute.String(AttrToolCallArguments, string(call.Input)))
	}
	ctx, span := t.tracer.Start(ctx, OpExecuteTool+" "+call.Name, trace.WithAttributes(attrs...))
	return ctx, func(out tool.Output, denied bool, err error) {
		decision := DecisionAccept
		if denied {
			decision = DecisionReject
		}
		span.SetAttributes(attribute.String(AttrDecision, decision))
		if t.set.LogToolContent {
			span.SetAttributes(attribute.String(AttrToolCallResult, out.Text))
		}
		if err == nil && out.IsError {
			span.SetStatus(codes.Error, "tool error")
			span.SetAttributes(attribute.String(AttrErrorType, "tool_error"))
		}
		endWithError(span, err)
		o.countDecision(ctx, call.Name, denied)
	}
}

// countDecision counts one tool call in cadre.tool.decision.
func (o *Observer) countDecision(ctx context.Context, name string, denied bool) {
	if o.t.m.decisions == nil {
		return
	}
	decision := DecisionAccept
	if denied {
		decision = DecisionReject
	}
	o.t.m.decisions.Add(ctx, 1, metric.WithAttributes(attribute.String(AttrToolName, name), attribute.String(AttrDecision, decision)))
}

// endWithError ends span, marked failed when err is set (a cancelled
// context included).
func endWithError(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		typ := "_OTHER"
		if errors.Is(err, context.Canceled) {
			typ = "canceled"
		}
		span.SetAttributes(attribute.String(AttrErrorType, typ))
	}
	span.End()
}

// cmpModel is the response's model, else the request's.
func cmpModel(resp, req string) string {
	if resp != "" {
		return resp
	}
	return req
}
