package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// TestOffCostsNothing: with telemetry off (a nil *Telemetry, what New
// returns without providers) every call the engine makes allocates
// nothing and leaves the context as it was.
func TestOffCostsNothing(t *testing.T) {
	var tel *Telemetry
	if New(Settings{Provider: "anthropic"}, "s", nil) != nil {
		t.Fatal("New without providers is not off")
	}
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		if c := tel.Inject(ctx); c.TraceParent != "" {
			t.Fatal("inject when off")
		}
		c, s := tel.StartAgent(ctx, Agent{ID: "a1", Type: "general-purpose"})
		if c != ctx || s != nil {
			t.Fatal("span when off")
		}
		s.End("completed", llm.Usage{}, 0, nil)
		_ = s.SpanContext()
		if tel.Observer("a1", "x") != nil {
			t.Fatal("observer when off")
		}
		tel.LinkLater("main", trace.SpanContext{})
		_ = tel.Cost("m", llm.Usage{})
		_, _ = tel.StartMain(ctx, Agent{}, true)
	})
	if allocs != 0 {
		t.Errorf("off allocates %v times per spawn path", allocs)
	}
}

func recorder(t *testing.T) (*tracetest.SpanRecorder, trace.TracerProvider) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return rec, tp
}

func attrsOf(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

// TestAgentSpan: a remote agent's invoke_agent is CLIENT and carries its
// isolation and budget; its parent comes from the trace context of its
// spawn request (Inject on one side, StartAgent on the other), not from
// the context it runs in.
func TestAgentSpan(t *testing.T) {
	rec, tp := recorder(t)
	tel := New(Settings{Provider: ProviderAnthropic, TracerProvider: tp}, "sess-1", nil)
	ctx, call := tp.Tracer("t").Start(context.Background(), "execute_tool Agent")
	tc := tel.Inject(ctx)
	call.End()
	if tc.TraceParent == "" {
		t.Fatal("no traceparent injected")
	}
	// The child runs in an unrelated context, as a remote worker does.
	other, stray := tp.Tracer("t").Start(context.Background(), "stray")
	_, s := tel.StartAgent(other, Agent{ID: "a7", Type: "reviewer", Parent: "a1", Depth: 2, Isolation: "remote", Background: true,
		BudgetUSD: 0.5, BudgetTokens: 1000, BudgetTurns: 4, BudgetWallTime: 90 * time.Second, Trace: tc, Prompt: "secret"})
	s.End("failed", llm.Usage{InputTokens: 10, CacheReadTokens: 5, CacheWriteTokens: 2, OutputTokens: 3}, 0.25, errors.New("boom"))
	stray.End()
	var span sdktrace.ReadOnlySpan
	for _, sp := range rec.Ended() {
		if sp.Name() == "invoke_agent reviewer" {
			span = sp
		}
	}
	if span == nil {
		t.Fatal("no invoke_agent reviewer span")
	}
	if span.SpanKind() != trace.SpanKindClient {
		t.Errorf("remote agent's kind %v, want CLIENT", span.SpanKind())
	}
	if span.Parent().SpanID() != call.SpanContext().SpanID() || span.SpanContext().TraceID() != call.SpanContext().TraceID() {
		t.Errorf("parent %v, want the Agent call's span %v", span.Parent(), call.SpanContext())
	}
	a := attrsOf(span)
	for k, want := range map[string]string{
		AttrAgentID: "a7", AttrAgentName: "reviewer", AttrConversationID: "sess-1", AttrProviderName: "anthropic",
		AttrOperationName: "invoke_agent", AttrIsolation: "remote", AttrStatus: "failed", AttrParentAgent: "a1",
	} {
		if got := a[attribute.Key(k)].AsString(); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	for k, want := range map[string]int64{AttrDepth: 2, AttrBudgetTokens: 1000, AttrBudgetTurns: 4, AttrBudgetWall: 90000,
		AttrUsageInput: 17, AttrUsageOutput: 3, AttrUsageCacheRead: 5, AttrUsageCacheCreation: 2} {
		if got := a[attribute.Key(k)].AsInt64(); got != want {
			t.Errorf("%s = %d, want %d", k, got, want)
		}
	}
	if a[AttrBudgetUSD].AsFloat64() != 0.5 || a[AttrCostUSD].AsFloat64() != 0.25 || !a[AttrBackground].AsBool() {
		t.Errorf("budget, cost or background wrong: %v", a)
	}
	if _, ok := a[AttrInputMessages]; ok {
		t.Error("the prompt is recorded though LogPrompts is off")
	}
	if span.Status().Code.String() != "Error" {
		t.Errorf("status %v, want Error", span.Status())
	}
}

// TestContentOnlyWhenAskedFor: prompts and tool content are on the spans
// only with LogPrompts and LogToolContent.
func TestContentOnlyWhenAskedFor(t *testing.T) {
	for _, on := range []bool{false, true} {
		rec, tp := recorder(t)
		tel := New(Settings{TracerProvider: tp, LogPrompts: on, LogToolContent: on}, "s", nil)
		ctx, s := tel.StartAgent(context.Background(), Agent{Type: "main", Prompt: "my secret prompt"})
		o := tel.Observer("", "main")
		_, done := o.StartTool(ctx, llm.Block{ID: "toolu_1", Name: "Read", Input: json.RawMessage(`{"file_path":"/etc/secret"}`)})
		done(tool.Output{Text: "file body"}, false, nil)
		s.End("completed", llm.Usage{}, 0, nil)
		var got []string
		for _, sp := range rec.Ended() {
			a := attrsOf(sp)
			for _, k := range []string{AttrInputMessages, AttrToolCallArguments, AttrToolCallResult} {
				if v, ok := a[attribute.Key(k)]; ok {
					got = append(got, v.AsString())
				}
			}
		}
		if !on && len(got) != 0 {
			t.Errorf("content recorded while off: %q", got)
		}
		if on && (len(got) != 3 || got[0] != `{"file_path":"/etc/secret"}` || got[1] != "file body") {
			t.Errorf("content while on: %q", got)
		}
	}
}

// TestMetrics: tokens by type and model, cost, agents by type and
// status, tool decisions (a denied call is a reject).
func TestMetrics(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	tel := New(Settings{MeterProvider: mp}, "s", nil)
	ctx, s := tel.StartAgent(context.Background(), Agent{Type: "main"})
	if s != nil {
		t.Fatal("a span without a tracer provider")
	}
	o := tel.Observer("", "main")
	_, done := o.StartRequest(ctx, &llm.Request{Model: "claude-sonnet-4-5"})
	done(&llm.Response{Model: "claude-sonnet-4-5", Usage: llm.Usage{InputTokens: 100, OutputTokens: 20, CacheReadTokens: 1000}}, nil)
	for _, denied := range []bool{false, true, true} {
		_, end := o.StartTool(ctx, llm.Block{Name: "Bash"})
		end(tool.Output{}, denied, nil)
	}
	tel.countAgent("Explore", "completed")
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					k := m.Name
					for _, key := range []attribute.Key{AttrTokenType, AttrDecision, AttrStatus} {
						if v, ok := dp.Attributes.Value(key); ok {
							k += "/" + v.AsString()
						}
					}
					got[k] += float64(dp.Value)
				}
			case metricdata.Sum[float64]:
				for _, dp := range d.DataPoints {
					got[m.Name] += dp.Value
				}
			}
		}
	}
	for k, want := range map[string]float64{
		MetricTokens + "/input": 100, MetricTokens + "/output": 20, MetricTokens + "/cache_read": 1000,
		MetricToolDecisions + "/accept": 1, MetricToolDecisions + "/reject": 2, MetricAgents + "/completed": 1,
	} {
		if got[k] != want {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], want, got)
		}
	}
	if got[MetricCost] <= 0 {
		t.Errorf("no cost recorded: %v", got)
	}
}

// TestExtract: TRACEPARENT's context becomes the parent; a malformed one
// is ignored.
func TestExtract(t *testing.T) {
	ctx := Extract(context.Background(), TraceContext{TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"})
	sc := trace.SpanContextFromContext(ctx)
	if sc.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || sc.SpanID().String() != "00f067aa0ba902b7" || !sc.IsRemote() {
		t.Errorf("extracted %v", sc)
	}
	for _, bad := range []string{"", "garbage", "00-00000000000000000000000000000000-00f067aa0ba902b7-01"} {
		if sc := trace.SpanContextFromContext(Extract(context.Background(), TraceContext{TraceParent: bad})); sc.IsValid() {
			t.Errorf("%q gave a span context %v", bad, sc)
		}
	}
}
