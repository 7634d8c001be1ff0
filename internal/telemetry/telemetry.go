// Package telemetry puts the agent tree in OpenTelemetry (S-15.7): an
// invoke_agent span per agent run, a chat span per model request and an
// execute_tool span per tool call, named and attributed per the GenAI
// semantic conventions, plus metrics for tokens, cost, agents and tool
// decisions. It uses the OpenTelemetry API only: the embedder (or the
// CLI, through package otelsetup) brings the providers. A nil *Telemetry
// is telemetry switched off: every method returns at once and allocates
// nothing.
package telemetry

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/pricing"
)

// Settings switch telemetry on and say what it records. The zero value is
// off.
type Settings struct {
	// Provider is gen_ai.provider.name ("anthropic", "openai"); empty
	// leaves the attribute out.
	Provider string
	// TracerProvider and MeterProvider receive the spans and metrics; with
	// both nil telemetry is off.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// LogPrompts records prompts (an agent's task) on its invoke_agent
	// span; LogToolContent records tool calls' input and result on their
	// execute_tool spans. Both off by default: content can be private.
	LogPrompts     bool
	LogToolContent bool
}

// Telemetry is a session's telemetry: its tracer and instruments, and
// the links waiting for an agent's next model request (a background
// child's end reaches its parent as a notification). Nil means off.
type Telemetry struct {
	set     Settings
	tracer  trace.Tracer
	session string
	prices  pricing.Table
	m       instruments

	mu    sync.Mutex
	links map[string][]trace.Link // by the agent they wait for
	// ended holds the spans of background agents that ended, by agent
	// id, until their notification is taken (LinkTask).
	ended map[string]trace.SpanContext
	// lastRun is the main agent's span of the last run on a prompt: a
	// run on notifications alone continues its trace.
	lastRun trace.SpanContext
}

// instruments are the metrics; nil ones are not recorded.
type instruments struct {
	tokens    metric.Int64Counter
	cost      metric.Float64Counter
	agents    metric.Int64Counter
	decisions metric.Int64Counter
}

// New returns the telemetry of a session (its id is
// gen_ai.conversation.id), nil when s has no provider. prices turn usage
// into cost (nil: pricing.Default()).
func New(s Settings, session string, prices pricing.Table) *Telemetry {
	if s.TracerProvider == nil && s.MeterProvider == nil {
		return nil
	}
	if prices == nil {
		prices = pricing.Default()
	}
	t := &Telemetry{set: s, session: session, prices: prices, links: map[string][]trace.Link{}, ended: map[string]trace.SpanContext{}}
	if s.TracerProvider != nil {
		t.tracer = s.TracerProvider.Tracer(InstrumentationName)
	}
	if s.MeterProvider != nil {
		m := s.MeterProvider.Meter(InstrumentationName)
		// An instrument that cannot be made is left out (the API returns
		// a no-op one with the error).
		t.m.tokens, _ = m.Int64Counter(MetricTokens, metric.WithUnit("{token}"),
			metric.WithDescription("Tokens used by cadre's agents, by type, model and agent type"))
		t.m.cost, _ = m.Float64Counter(MetricCost, metric.WithUnit("USD"),
			metric.WithDescription("List-price cost of cadre's model requests, by model"))
		t.m.agents, _ = m.Int64Counter(MetricAgents, metric.WithUnit("{agent}"),
			metric.WithDescription("Agent runs that ended, by agent type and status"))
		t.m.decisions, _ = m.Int64Counter(MetricToolDecisions, metric.WithUnit("{call}"),
			metric.WithDescription("Tool calls, by tool and decision (accept, reject)"))
	}
	return t
}

// TraceContext is a W3C trace context as the spawn request carries it.
type TraceContext struct {
	TraceParent, TraceState string
}

// Get, Set and Keys make a TraceContext a propagation carrier.
func (c *TraceContext) Get(key string) string {
	switch key {
	case "traceparent":
		return c.TraceParent
	case "tracestate":
		return c.TraceState
	}
	return ""
}

// Set implements propagation.TextMapCarrier.
func (c *TraceContext) Set(key, value string) {
	switch key {
	case "traceparent":
		c.TraceParent = value
	case "tracestate":
		c.TraceState = value
	}
}

// Keys implements propagation.TextMapCarrier.
func (c *TraceContext) Keys() []string { return []string{"traceparent", "tracestate"} }

// Inject returns the trace context of the span in ctx (the execute_tool
// span of an Agent call), for a child's spawn request; empty when off or
// when ctx has no span.
func (t *Telemetry) Inject(ctx context.Context) TraceContext {
	if t == nil || !trace.SpanContextFromContext(ctx).IsValid() {
		return TraceContext{}
	}
	c := new(TraceContext) // the carrier escapes: made only when on
	propagation.TraceContext{}.Inject(ctx, c)
	return *c
}

// Extract returns ctx with the remote span context of c as its parent
// (TRACEPARENT, a spawn request); ctx unchanged when c holds none.
func Extract(ctx context.Context, c TraceContext) context.Context {
	if c.TraceParent == "" {
		return ctx
	}
	carrier := c // the carrier escapes: made only when there is one
	return propagation.TraceContext{}.Extract(ctx, &carrier)
}

// StartMain starts the main agent's invoke_agent span of one run: under
// the span in ctx (an embedder's, TRACEPARENT's), else, for a run on
// notifications alone (notes), under the span of the last run on a
// prompt, whose background agents' ends it reads; a run on a prompt
// without a span in ctx starts a trace.
func (t *Telemetry) StartMain(ctx context.Context, a Agent, notes bool) (context.Context, *AgentSpan) {
	if t == nil || t.tracer == nil {
		return ctx, nil
	}
	if notes && !trace.SpanContextFromContext(ctx).IsValid() {
		t.mu.Lock()
		last := t.lastRun
		t.mu.Unlock()
		if last.IsValid() {
			ctx = trace.ContextWithSpanContext(ctx, last)
		}
	}
	ctx, s := t.StartAgent(ctx, a)
	if !notes {
		t.mu.Lock()
		t.lastRun = s.span.SpanContext()
		t.mu.Unlock()
	}
	return ctx, s
}

// Agent describes one agent run for its invoke_agent span.
type Agent struct {
	// ID is the agent's id ("" for the main agent, recorded as "main");
	// Type its agent type (the span is "invoke_agent {Type}").
	ID, Type, Description string
	// Parent is the id of the agent that started it ("" for the main
	// agent); Model the model it runs on.
	Parent, Model string
	Depth         int
	Background    bool
	Fork          bool
	// Isolation is "worktree", "remote" or ""; a remote agent's span is
	// CLIENT, every other INTERNAL.
	Isolation string
	// Budget is what the agent may spend (zero: no limit of its own).
	BudgetUSD      float64
	BudgetTokens   int64
	BudgetTurns    int
	BudgetWallTime time.Duration
	Prompt         string
	Trace          TraceContext // its spawn request's; parent of the span
}

// AgentSpan is one agent run's invoke_agent span; nil when off.
type AgentSpan struct {
	t    *Telemetry
	span trace.Span
	a    Agent
}

// StartAgent starts a's invoke_agent span. A sub-agent's parent is the
// span of a.Trace (its parent's execute_tool Agent span, wherever the
// child runs); the main agent's (a.ID "") the span in ctx (the caller's,
// or TRACEPARENT's). It returns the context the agent runs in.
func (t *Telemetry) StartAgent(ctx context.Context, a Agent) (context.Context, *AgentSpan) {
	if t == nil || t.tracer == nil {
		return ctx, nil
	}
	if a.ID != "" {
		// A sub-agent's parent is its spawn request's trace context
		// alone, wherever it runs: not what its run's context inherited.
		ctx = trace.ContextWithSpanContext(ctx, trace.SpanContext{})
	}
	ctx = Extract(ctx, a.Trace)
	kind := trace.SpanKindInternal
	if a.Isolation == "remote" {
		kind = trace.SpanKindClient
	}
	attrs := []attribute.KeyValue{
		attribute.String(AttrOperationName, OpInvokeAgent),
		attribute.String(AttrAgentID, agentID(a.ID)),
		attribute.String(AttrAgentName, a.Type),
		attribute.String(AttrConversationID, t.session),
		attribute.Int(AttrDepth, a.Depth),
		attribute.Bool(AttrBackground, a.Background),
	}
	if t.set.Provider != "" {
		attrs = append(attrs, attribute.String(AttrProviderName, t.set.Provider))
	}
	if a.Model != "" {
		attrs = append(attrs, attribute.String(AttrRequestModel, a.Model))
	}
	if a.Description != "" {
		attrs = append(attrs, attribute.String(AttrAgentDescription, a.Description))
	}
	if a.ID != "" {
		attrs = append(attrs, attribute.String(AttrParentAgent, agentID(a.Parent)))
	}
	if a.Fork {
		attrs = append(attrs, attribute.Bool(AttrFork, true))
	}
	if a.Isolation != "" {
		attrs = append(attrs, attribute.String(AttrIsolation, a.Isolation))
	}
	if a.BudgetUSD > 0 {
		attrs = append(attrs, attribute.Float64(AttrBudgetUSD, a.BudgetUSD))
	}
	if a.BudgetTokens > 0 {
		attrs = append(attrs, attribute.Int64(AttrBudgetTokens, a.BudgetTokens))
	}
	if a.BudgetTurns > 0 {
		attrs = append(attrs, attribute.Int(AttrBudgetTurns, a.BudgetTurns))
	}
	if a.BudgetWallTime > 0 {
		attrs = append(attrs, attribute.Int64(AttrBudgetWall, a.BudgetWallTime.Milliseconds()))
	}
	if t.set.LogPrompts && a.Prompt != "" {
		attrs = append(attrs, attribute.String(AttrInputMessages, userMessages(a.Prompt)))
	}
	ctx, span := t.tracer.Start(ctx, OpInvokeAgent+" "+a.Type, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
	return ctx, &AgentSpan{t: t, span: span, a: a}
}

// SpanContext is the span's context, for a link to it; zero when off.
func (s *AgentSpan) SpanContext() trace.SpanContext {
	if s == nil {
		return trace.SpanContext{}
	}
	return s.span.SpanContext()
}

// End ends the span with the agent's status ("completed", "failed",
// "killed", …), the usage of its own requests and cost of its subtree,
// and err when it failed; it counts the agent in cadre.agent.count.
func (s *AgentSpan) End(status string, usage llm.Usage, costUSD float64, err error) {
	if s == nil {
		return
	}
	attrs := usageAttrs(usage)
	attrs = append(attrs, attribute.String(AttrStatus, status))
	if costUSD > 0 {
		attrs = append(attrs, attribute.Float64(AttrCostUSD, costUSD))
	}
	s.span.SetAttributes(attrs...)
	if err != nil {
		s.span.RecordError(err)
		s.span.SetStatus(codes.Error, err.Error())
		s.span.SetAttributes(attribute.String(AttrErrorType, "_OTHER"))
	}
	s.span.End()
	s.t.countAgent(s.a.Type, status)
}

// countAgent adds one ended agent of typ with status to cadre.agent.count.
func (t *Telemetry) countAgent(typ, status string) {
	if t == nil || t.m.agents == nil {
		return
	}
	t.m.agents.Add(context.Background(), 1, metric.WithAttributes(attribute.String(AttrAgentName, typ), attribute.String(AttrStatus, status)))
}

// LinkLater keeps a link to sc for agent's next model request (LinkTask:
// the turn that reads a background child's notification links back to
// the child's invoke_agent span).
func (t *Telemetry) LinkLater(agent string, sc trace.SpanContext) {
	if t == nil || !sc.IsValid() {
		return
	}
	t.mu.Lock()
	t.links[agentID(agent)] = append(t.links[agentID(agent)], trace.Link{Attributes: []attribute.KeyValue{attribute.String(AttrOperationName, OpInvokeAgent)}, SpanContext: sc})
	t.mu.Unlock()
}

// EndedInBackground keeps the span of the background agent id that
// ended, for the request that will carry its notification (LinkTask).
func (t *Telemetry) EndedInBackground(id string, sc trace.SpanContext) {
	if t == nil || !sc.IsValid() {
		return
	}
	t.mu.Lock()
	t.ended[id] = sc
	t.mu.Unlock()
}

// LinkTask links agent's next model request (the one carrying the
// notification of task, just taken from its inbox) back to the task's
// invoke_agent span.
func (t *Telemetry) LinkTask(agent, task string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	sc, ok := t.ended[task]
	delete(t.ended, task)
	t.mu.Unlock()
	if ok {
		t.LinkLater(agent, sc)
	}
}

// takeLinks returns and forgets the links waiting for agent.
func (t *Telemetry) takeLinks(agent string) []trace.Link {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.links[agentID(agent)]
	delete(t.links, agentID(agent))
	return l
}

// agentID is how the main agent ("") is named in telemetry.
func agentID(id string) string {
	if id == "" {
		return "main"
	}
	return id
}

// usageAttrs are the gen_ai.usage attributes of u. Input counts every
// input token, the cached ones included, as the conventions ask for
// Anthropic (llm.Usage keeps them apart for both providers).
func usageAttrs(u llm.Usage) []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.Int64(AttrUsageInput, u.InputTokens+u.CacheReadTokens+u.CacheWriteTokens),
		attribute.Int64(AttrUsageOutput, u.OutputTokens),
		attribute.Int64(AttrUsageCacheRead, u.CacheReadTokens),
		attribute.Int64(AttrUsageCacheCreation, u.CacheWriteTokens),
	}
}

// userMessages renders prompt as gen_ai.input.messages: one user message
// with one text part.
func userMessages(prompt string) string {
	type part struct {
		Type    string `json:"type"`
		Content string `json:"content"`
	}
	type message struct {
		Role  string `json:"role"`
		Parts []part `json:"parts"`
	}
	b, err := json.Marshal([]message{{Role: "user", Parts: []part{{Type: "text", Content: prompt}}}})
	if err != nil {
		return strconv.Quote(prompt)
	}
	return string(b)
}

// Cost is the list-price cost of u on model, 0 when the model has no
// price or telemetry is off.
func (t *Telemetry) Cost(model string, u llm.Usage) float64 {
	if t == nil {
		return 0
	}
	c, _ := t.prices.Cost(model, u)
	return c
}
