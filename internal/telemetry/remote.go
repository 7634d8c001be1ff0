package telemetry

// A remote agent's spans on the worker that runs it (issues 26 and 28).
// Its run is a workflow whose calls may each land on another worker, so
// its invoke_agent SERVER span cannot be started in one process and ended
// in another. Instead the workflow picks the span's id once (recorded in
// its history), every call's chat and execute_tool spans name that id as
// their parent (Child), and when the agent ends one call records the
// span itself, with the agent's start and end times, under that id
// (RecordRemoteAgent). The worker's tracer provider must take span ids
// from the context for that: RemoteIDs is its id generator.

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/cadre-dev/cadre/llm"
)

// NewSpanID returns a random span id in hex.
func NewSpanID() string {
	var b [8]byte
	_, _ = crand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Child is the trace context of the span id under the trace of c (a
// remote agent's invoke_agent span on its worker, under the launcher's
// span c names); c unchanged when it holds no trace or id is not a span
// id.
func Child(c TraceContext, id string) TraceContext {
	parts := strings.Split(c.TraceParent, "-")
	if len(parts) != 4 || !isHex(parts[0], 2) || !isHex(parts[1], 32) || !isHex(parts[2], 16) || !isHex(parts[3], 2) || !isHex(id, 16) {
		return c
	}
	parts[2] = id
	return TraceContext{TraceParent: strings.Join(parts, "-"), TraceState: c.TraceState}
}

// isHex reports whether s is n lowercase hex digits (a traceparent field).
func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}

// forcedID is the context key of the span id RemoteIDs gives the next
// span started with that context.
type forcedID struct{}

// RemoteIDs makes span and trace ids for a worker's tracer provider (the
// SDK's IDGenerator): random ones, except the span id a context set with
// RecordRemoteAgent.
type RemoteIDs struct{}

// NewIDs implements the SDK's IDGenerator.
func (RemoteIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	var tid trace.TraceID
	_, _ = crand.Read(tid[:])
	return tid, RemoteIDs{}.NewSpanID(ctx, tid)
}

// NewSpanID implements the SDK's IDGenerator.
func (RemoteIDs) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	if id, ok := ctx.Value(forcedID{}).(trace.SpanID); ok && id.IsValid() {
		return id
	}
	var sid trace.SpanID
	_, _ = crand.Read(sid[:])
	return sid
}

// RemoteRun is a remote agent's run as its worker records it.
type RemoteRun struct {
	Agent
	// SpanID is the id its calls' spans name as their parent; Start and
	// End its run's times; Status how it ended, Error why it failed.
	SpanID     string
	Start, End time.Time
	Status     string
	Usage      llm.Usage
	Error      string
}

// RecordRemoteAgent records r's invoke_agent SERVER span under its spawn
// request's trace context (r.Trace: the launcher's invoke_agent CLIENT
// span), with the id its calls' spans name. Nothing when off or without
// a trace to join.
func (t *Telemetry) RecordRemoteAgent(ctx context.Context, r RemoteRun) {
	if t == nil || t.tracer == nil || r.Trace.TraceParent == "" {
		return
	}
	var sid trace.SpanID
	if b, err := hex.DecodeString(r.SpanID); err == nil && len(b) == len(sid) {
		copy(sid[:], b)
	}
	ctx = Extract(trace.ContextWithSpanContext(ctx, trace.SpanContext{}), r.Trace)
	ctx = context.WithValue(ctx, forcedID{}, sid)
	attrs := []attribute.KeyValue{
		attribute.String(AttrOperationName, OpInvokeAgent),
		attribute.String(AttrAgentID, agentID(r.ID)),
		attribute.String(AttrAgentName, r.Type),
		attribute.String(AttrConversationID, t.session),
		attribute.Int(AttrDepth, r.Depth),
		attribute.Bool(AttrBackground, r.Background),
		attribute.String(AttrIsolation, "remote"),
		attribute.String(AttrParentAgent, agentID(r.Parent)),
		attribute.String(AttrStatus, r.Status),
	}
	if t.set.Provider != "" {
		attrs = append(attrs, attribute.String(AttrProviderName, t.set.Provider))
	}
	if r.Model != "" {
		attrs = append(attrs, attribute.String(AttrRequestModel, r.Model))
	}
	attrs = append(attrs, usageAttrs(r.Usage)...)
	_, span := t.tracer.Start(ctx, OpInvokeAgent+" "+r.Type, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithTimestamp(r.Start), trace.WithAttributes(attrs...))
	if r.Error != "" {
		span.SetStatus(codes.Error, r.Error)
		span.SetAttributes(attribute.String(AttrErrorType, "_OTHER"))
	}
	span.End(trace.WithTimestamp(r.End))
	t.countAgent(r.Type, r.Status)
}

// ForSession is t with gen_ai.conversation.id session (a worker's spans
// name the launcher's session of each agent); it shares t's providers and
// instruments.
func (t *Telemetry) ForSession(session string) *Telemetry {
	if t == nil || t.session == session {
		return t
	}
	return &Telemetry{set: t.set, tracer: t.tracer, session: session, prices: t.prices, m: t.m,
		links: map[string][]trace.Link{}, ended: map[string]trace.SpanContext{}}
}
