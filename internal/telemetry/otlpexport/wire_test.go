package otlpexport

import (
	"context"
	"encoding/hex"
	"math"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	collectormetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/cadre-dev/cadre/internal/telemetry/otlptest"
)

// recordSpans makes spans with the real SDK: two scopes, a remote parent
// with a trace state, every attribute type, an event, a link, an error
// status, a CLIENT kind and a resource with a schema URL.
func recordSpans(t *testing.T) []sdktrace.ReadOnlySpan {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	res := resource.NewWithAttributes("https://opentelemetry.io/schemas/1.26.0", attribute.String("service.name", "wire-test"))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithResource(res))
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	ts, _ := trace.ParseTraceState("vendor=v1")
	remote := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, TraceState: ts, Remote: true})
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), remote)
	tr := tp.Tracer("cadre/a", trace.WithInstrumentationVersion("1.2.3"))
	ctx, root := tr.Start(ctx, "invoke_agent main", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("s", "x\"y\n\x01é"), attribute.String("empty", ""), attribute.Bool("b", false), attribute.Int64("i", -7),
		attribute.Int64("zero", 0), attribute.Float64("f", 1.5), attribute.Float64("nan", math.NaN()),
		attribute.StringSlice("ss", []string{"a", "b"}), attribute.Int64Slice("is", []int64{1, 2}),
		attribute.BoolSlice("bs", []bool{true}), attribute.Float64Slice("fs", []float64{0.25}),
	))
	root.AddEvent("compacted", trace.WithAttributes(attribute.Int("tokens", 3)))
	_, child := tp.Tracer("cadre/b").Start(ctx, "chat claude", trace.WithLinks(trace.Link{SpanContext: remote, Attributes: []attribute.KeyValue{attribute.String("why", "notification")}}))
	child.SetStatus(codes.Error, "model said no")
	child.End()
	root.SetStatus(codes.Ok, "")
	root.End()
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	return rec.Ended()
}

// TestSpansOnTheWire: the protobuf the exporter writes decodes with the
// generated OTLP types to the spans the SDK recorded, and its JSON
// decodes (protojson, the reference mapping) to the same message.
func TestSpansOnTheWire(t *testing.T) {
	spans := recordSpans(t)
	pb := &pbEnc{}
	encodeSpans(pb, spans)
	var got collectortrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(pb.b, &got); err != nil {
		t.Fatalf("protobuf does not decode: %v", err)
	}
	j := newJSONEnc()
	encodeSpans(j, spans)
	var fromJSON collectortrace.ExportTraceServiceRequest
	if err := protojson.Unmarshal(j.close(), &fromJSON); err != nil {
		t.Fatalf("JSON does not decode: %v\n%s", err, j.b)
	}
	if err := otlptest.FixJSONTraceIDs(&fromJSON); err != nil {
		t.Fatalf("JSON ids: %v\n%s", err, j.b)
	}
	if !proto.Equal(&got, &fromJSON) {
		t.Errorf("JSON and protobuf differ:\n%v\n%v", &got, &fromJSON)
	}
	if len(got.ResourceSpans) != 1 {
		t.Fatalf("%d resources, want 1", len(got.ResourceSpans))
	}
	rs := got.ResourceSpans[0]
	if rs.SchemaUrl != "https://opentelemetry.io/schemas/1.26.0" || attrString(rs.Resource.Attributes, "service.name") != "wire-test" {
		t.Errorf("resource %v schema %q", rs.Resource, rs.SchemaUrl)
	}
	if len(rs.ScopeSpans) != 2 || rs.ScopeSpans[0].Scope.Name != "cadre/b" || rs.ScopeSpans[1].Scope.Name != "cadre/a" || rs.ScopeSpans[1].Scope.Version != "1.2.3" {
		t.Fatalf("scopes %v", rs.ScopeSpans)
	}
	child, root := rs.ScopeSpans[0].Spans[0], rs.ScopeSpans[1].Spans[0]
	rootSC := spans[1].SpanContext()
	if hex.EncodeToString(root.TraceId) != "4bf92f3577b34da6a3ce929d0e0e4736" || hex.EncodeToString(root.ParentSpanId) != "00f067aa0ba902b7" ||
		hex.EncodeToString(root.SpanId) != rootSC.SpanID().String() || root.TraceState != "vendor=v1" {
		t.Errorf("root ids %x %x %x %q", root.TraceId, root.SpanId, root.ParentSpanId, root.TraceState)
	}
	// Sampled, remote-ness known, parent remote.
	if root.Flags != 0x301 || child.Flags != 0x101 {
		t.Errorf("flags root %#x child %#x, want 0x301 and 0x101", root.Flags, child.Flags)
	}
	if root.Kind != tracepb.Span_SPAN_KIND_CLIENT || child.Kind != tracepb.Span_SPAN_KIND_INTERNAL {
		t.Errorf("kinds %v %v", root.Kind, child.Kind)
	}
	if root.StartTimeUnixNano != uint64(spans[1].StartTime().UnixNano()) || root.EndTimeUnixNano != uint64(spans[1].EndTime().UnixNano()) {
		t.Errorf("times %d %d", root.StartTimeUnixNano, root.EndTimeUnixNano)
	}
	want := map[string]string{"s": "x\"y\n\x01é", "empty": "", "b": "false", "i": "-7", "zero": "0", "f": "1.5", "nan": "NaN",
		"ss": `["a","b"]`, "is": "[1,2]", "bs": "[true]", "fs": "[0.25]"}
	for k, v := range want {
		if g := attrString(root.Attributes, k); g != v {
			t.Errorf("attribute %s = %q, want %q", k, g, v)
		}
	}
	if len(root.Events) != 1 || root.Events[0].Name != "compacted" || attrString(root.Events[0].Attributes, "tokens") != "3" || root.Events[0].TimeUnixNano == 0 {
		t.Errorf("events %v", root.Events)
	}
	if root.Status.GetCode() != tracepb.Status_STATUS_CODE_OK || child.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || child.Status.GetMessage() != "model said no" {
		t.Errorf("status root %v child %v", root.Status, child.Status)
	}
	if hex.EncodeToString(child.ParentSpanId) != hex.EncodeToString(root.SpanId) {
		t.Errorf("child's parent %x, want %x", child.ParentSpanId, root.SpanId)
	}
	if len(child.Links) != 1 || hex.EncodeToString(child.Links[0].SpanId) != "00f067aa0ba902b7" || child.Links[0].TraceState != "vendor=v1" ||
		attrString(child.Links[0].Attributes, "why") != "notification" || child.Links[0].Flags != 0x301 {
		t.Errorf("links %v", child.Links)
	}
}

// attrString renders the attribute key of kvs ("" when absent).
func attrString(kvs []*commonpb.KeyValue, key string) string {
	for _, kv := range kvs {
		if kv.Key == key {
			return anyString(kv.Value)
		}
	}
	return ""
}

func anyString(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_BoolValue:
		if x.BoolValue {
			return "true"
		}
		return "false"
	case *commonpb.AnyValue_IntValue:
		return attribute.Int64Value(x.IntValue).String()
	case *commonpb.AnyValue_DoubleValue:
		if math.IsNaN(x.DoubleValue) {
			return "NaN"
		}
		return attribute.Float64Value(x.DoubleValue).String()
	case *commonpb.AnyValue_ArrayValue:
		s := "["
		for i, e := range x.ArrayValue.Values {
			if i > 0 {
				s += ","
			}
			if _, ok := e.Value.(*commonpb.AnyValue_StringValue); ok {
				s += `"` + anyString(e) + `"`
			} else {
				s += anyString(e)
			}
		}
		return s + "]"
	}
	return "?"
}

// collectMetrics records with the real metric SDK: an int and a float
// counter, an up-down counter, a histogram, an exponential histogram
// (through a view), a gauge.
func collectMetrics(t *testing.T) *metricdata.ResourceMetrics {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	exp := sdkmetric.NewView(sdkmetric.Instrument{Name: "exp"}, sdkmetric.Stream{Aggregation: sdkmetric.AggregationBase2ExponentialHistogram{MaxSize: 160, MaxScale: 20}})
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithView(exp),
		sdkmetric.WithResource(resource.NewSchemaless(attribute.String("service.name", "wire-test"))))
	m := mp.Meter("cadre")
	ctx := context.Background()
	ic, _ := m.Int64Counter("tokens")
	ic.Add(ctx, 5, metric.WithAttributes(attribute.String("type", "input")))
	ic.Add(ctx, 7, metric.WithAttributes(attribute.String("type", "output")))
	fc, _ := m.Float64Counter("cost")
	fc.Add(ctx, 0.25)
	ud, _ := m.Int64UpDownCounter("live")
	ud.Add(ctx, -2)
	h, _ := m.Float64Histogram("latency")
	h.Record(ctx, 3)
	h.Record(ctx, 300)
	eh, _ := m.Float64Histogram("exp")
	eh.Record(ctx, 2)
	eh.Record(ctx, 8)
	g, _ := m.Int64Gauge("depth")
	g.Record(ctx, 0)
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	return &rm
}

// TestMetricsOnTheWire: the metrics the SDK collected decode with the
// generated types to the recorded values, the same from protobuf and
// from JSON.
func TestMetricsOnTheWire(t *testing.T) {
	rm := collectMetrics(t)
	pb := &pbEnc{}
	encodeMetrics(pb, rm)
	var got collectormetrics.ExportMetricsServiceRequest
	if err := proto.Unmarshal(pb.b, &got); err != nil {
		t.Fatalf("protobuf does not decode: %v", err)
	}
	j := newJSONEnc()
	encodeMetrics(j, rm)
	var fromJSON collectormetrics.ExportMetricsServiceRequest
	if err := protojson.Unmarshal(j.close(), &fromJSON); err != nil {
		t.Fatalf("JSON does not decode: %v\n%s", err, j.b)
	}
	if !proto.Equal(&got, &fromJSON) {
		t.Errorf("JSON and protobuf differ:\n%v\n%v", &got, &fromJSON)
	}
	if len(got.ResourceMetrics) != 1 || attrString(got.ResourceMetrics[0].Resource.Attributes, "service.name") != "wire-test" ||
		len(got.ResourceMetrics[0].ScopeMetrics) != 1 || got.ResourceMetrics[0].ScopeMetrics[0].Scope.Name != "cadre" {
		t.Fatalf("resource and scope %v", &got)
	}
	byName := map[string]*metricspb.Metric{}
	for _, m := range got.ResourceMetrics[0].ScopeMetrics[0].Metrics {
		byName[m.Name] = m
	}
	tokens := byName["tokens"].GetSum()
	if tokens == nil || !tokens.IsMonotonic || tokens.AggregationTemporality != metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE || len(tokens.DataPoints) != 2 {
		t.Fatalf("tokens %v", byName["tokens"])
	}
	sum := map[string]int64{}
	for _, dp := range tokens.DataPoints {
		sum[attrString(dp.Attributes, "type")] = dp.GetAsInt()
		if dp.StartTimeUnixNano == 0 || dp.TimeUnixNano < dp.StartTimeUnixNano {
			t.Errorf("times %d %d", dp.StartTimeUnixNano, dp.TimeUnixNano)
		}
	}
	if sum["input"] != 5 || sum["output"] != 7 {
		t.Errorf("tokens by type %v", sum)
	}
	if c := byName["cost"].GetSum(); c == nil || c.DataPoints[0].GetAsDouble() != 0.25 {
		t.Errorf("cost %v", byName["cost"])
	}
	if l := byName["live"].GetSum(); l == nil || l.IsMonotonic || l.DataPoints[0].GetAsInt() != -2 {
		t.Errorf("live %v", byName["live"])
	}
	if d := byName["depth"].GetGauge(); d == nil || len(d.DataPoints) != 1 || d.DataPoints[0].Value == nil {
		t.Errorf("depth (a gauge of 0, the value present) %v", byName["depth"])
	}
	lat := byName["latency"].GetHistogram()
	if lat == nil || len(lat.DataPoints) != 1 {
		t.Fatalf("latency %v", byName["latency"])
	}
	hp := lat.DataPoints[0]
	var buckets uint64
	for _, c := range hp.BucketCounts {
		buckets += c
	}
	if hp.Count != 2 || hp.GetSum() != 303 || hp.GetMin() != 3 || hp.GetMax() != 300 || buckets != 2 || len(hp.ExplicitBounds)+1 != len(hp.BucketCounts) {
		t.Errorf("latency point %v", hp)
	}
	ex := byName["exp"].GetExponentialHistogram()
	if ex == nil || len(ex.DataPoints) != 1 {
		t.Fatalf("exp %v", byName["exp"])
	}
	ep := ex.DataPoints[0]
	var pos uint64
	for _, c := range ep.Positive.GetBucketCounts() {
		pos += c
	}
	if ep.Count != 2 || ep.GetSum() != 10 || ep.GetMin() != 2 || ep.GetMax() != 8 || pos != 2 || ep.Scale == 0 {
		t.Errorf("exponential point %v", ep)
	}
}

// TestEncodeSummaryAndDelta: kinds the SDK's instruments do not produce
// here (a summary, delta sums, an exemplar) decode too.
func TestEncodeSummaryAndDelta(t *testing.T) {
	now := time.Unix(1700000000, 5)
	rm := &metricdata.ResourceMetrics{Resource: resource.Empty(), ScopeMetrics: []metricdata.ScopeMetrics{{
		Metrics: []metricdata.Metrics{
			{Name: "q", Data: metricdata.Summary{DataPoints: []metricdata.SummaryDataPoint{{Time: now, Count: 3, Sum: 6,
				QuantileValues: []metricdata.QuantileValue{{Quantile: 0.5, Value: 2}, {Quantile: 1, Value: 3}}}}}},
			{Name: "d", Data: metricdata.Sum[float64]{Temporality: metricdata.DeltaTemporality, IsMonotonic: true,
				DataPoints: []metricdata.DataPoint[float64]{{Time: now, Value: 1, Exemplars: []metricdata.Exemplar[float64]{
					{Time: now, Value: 1, SpanID: []byte{1, 2, 3, 4, 5, 6, 7, 8}, TraceID: make([]byte, 16)}}}}}},
		}}}}
	for _, e := range []enc{&pbEnc{}, newJSONEnc()} {
		encodeMetrics(e, rm)
		var got collectormetrics.ExportMetricsServiceRequest
		var err error
		if p, ok := e.(*pbEnc); ok {
			err = proto.Unmarshal(p.b, &got)
		} else if err = protojson.Unmarshal(e.(*jsonEnc).close(), &got); err == nil {
			err = otlptest.FixJSONMetricIDs(&got)
		}
		if err != nil {
			t.Fatalf("%T: %v", e, err)
		}
		ms := got.ResourceMetrics[0].ScopeMetrics[0].Metrics
		q, d := ms[0].GetSummary().GetDataPoints()[0], ms[1].GetSum()
		if q.Count != 3 || q.Sum != 6 || len(q.QuantileValues) != 2 || q.QuantileValues[1].Value != 3 || q.TimeUnixNano != uint64(now.UnixNano()) {
			t.Errorf("%T summary %v", e, q)
		}
		if d.AggregationTemporality != metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA ||
			hex.EncodeToString(d.DataPoints[0].Exemplars[0].SpanId) != "0102030405060708" || d.DataPoints[0].Exemplars[0].GetAsDouble() != 1 {
			t.Errorf("%T delta sum %v", e, d)
		}
	}
}

// TestNestedLengths: messages longer than 127 bytes (a two-byte length)
// and a deep nesting still decode.
func TestNestedLengths(t *testing.T) {
	long := make([]byte, 300)
	for i := range long {
		long[i] = 'a' + byte(i%26)
	}
	v := attribute.SliceValue(attribute.MapValue(attribute.String("k", string(long)), attribute.Int64("n", 1<<40)))
	pb := &pbEnc{}
	pb.list(1, "values")
	pb.item()
	pb.str(1, "key", "deep")
	pb.begin(2, "value")
	encodeValue(pb, v)
	pb.end()
	pb.end()
	pb.endList()
	var got commonpb.KeyValueList
	if err := proto.Unmarshal(pb.b, &got); err != nil {
		t.Fatal(err)
	}
	kv := got.Values[0].Value.GetArrayValue().GetValues()[0].GetKvlistValue().GetValues()
	if len(kv) != 2 || kv[0].Value.GetStringValue() != string(long) || kv[1].Value.GetIntValue() != 1<<40 {
		t.Errorf("decoded %v", &got)
	}
}
