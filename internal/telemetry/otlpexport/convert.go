package otlpexport

import (
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// The field numbers and JSON names below are those of the OTLP protos
// (opentelemetry/proto/{common,resource,trace,metrics}/v1 and the
// collector's Export requests, whose only field is number 1).

// scopeKey tells instrumentation scopes apart.
type scopeKey struct {
	name, version, schemaURL string
	attrs                    attribute.Distinct
}

func keyOf(s instrumentation.Scope) scopeKey {
	return scopeKey{s.Name, s.Version, s.SchemaURL, s.Attributes.Equivalent()}
}

// resKey tells resources apart.
type resKey struct {
	attrs     attribute.Distinct
	schemaURL string
}

// spanGroup is the spans of one resource, by scope in the order first
// seen.
type spanGroup struct {
	res    *resource.Resource
	scopes []instrumentation.Scope
	spans  map[scopeKey][]sdktrace.ReadOnlySpan
}

// encodeSpans writes an ExportTraceServiceRequest of spans.
func encodeSpans(e enc, spans []sdktrace.ReadOnlySpan) {
	var groups []*spanGroup
	byRes := map[resKey]*spanGroup{}
	for _, s := range spans {
		r := s.Resource()
		rk := resKey{r.Equivalent(), r.SchemaURL()}
		g := byRes[rk]
		if g == nil {
			g = &spanGroup{res: r, spans: map[scopeKey][]sdktrace.ReadOnlySpan{}}
			byRes[rk] = g
			groups = append(groups, g)
		}
		sc := s.InstrumentationScope()
		sk := keyOf(sc)
		if _, ok := g.spans[sk]; !ok {
			g.scopes = append(g.scopes, sc)
		}
		g.spans[sk] = append(g.spans[sk], s)
	}
	e.list(1, "resourceSpans")
	for _, g := range groups {
		e.item()
		encodeResource(e, g.res)
		e.list(2, "scopeSpans")
		for _, sc := range g.scopes {
			e.item()
			encodeScope(e, sc)
			e.list(2, "spans")
			for _, s := range g.spans[keyOf(sc)] {
				e.item()
				encodeSpan(e, s)
				e.end()
			}
			e.endList()
			if sc.SchemaURL != "" {
				e.str(3, "schemaUrl", sc.SchemaURL)
			}
			e.end()
		}
		e.endList()
		if u := g.res.SchemaURL(); u != "" {
			e.str(3, "schemaUrl", u)
		}
		e.end()
	}
	e.endList()
}

// encodeResource writes field 1 of ResourceSpans or ResourceMetrics.
func encodeResource(e enc, r *resource.Resource) {
	e.begin(1, "resource")
	encodeAttrs(e, 1, "attributes", r.Attributes())
	e.end()
}

// encodeScope writes field 1 of ScopeSpans or ScopeMetrics.
func encodeScope(e enc, s instrumentation.Scope) {
	e.begin(1, "scope")
	if s.Name != "" {
		e.str(1, "name", s.Name)
	}
	if s.Version != "" {
		e.str(2, "version", s.Version)
	}
	encodeAttrs(e, 3, "attributes", s.Attributes.ToSlice())
	e.end()
}

func encodeSpan(e enc, s sdktrace.ReadOnlySpan) {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	e.id(1, "traceId", tid[:])
	e.id(2, "spanId", sid[:])
	if ts := sc.TraceState().String(); ts != "" {
		e.str(3, "traceState", ts)
	}
	parent := s.Parent()
	if parent.SpanID().IsValid() {
		pid := parent.SpanID()
		e.id(4, "parentSpanId", pid[:])
	}
	e.fixed32(16, "flags", spanFlags(sc.TraceFlags(), parent.IsRemote()))
	e.str(5, "name", s.Name())
	e.uint32v(6, "kind", spanKind(s.SpanKind()))
	e.fixed64(7, "startTimeUnixNano", unixNano(s.StartTime()))
	e.fixed64(8, "endTimeUnixNano", unixNano(s.EndTime()))
	encodeAttrs(e, 9, "attributes", s.Attributes())
	if n := s.DroppedAttributes(); n > 0 {
		e.uint32v(10, "droppedAttributesCount", uint32(n))
	}
	if evs := s.Events(); len(evs) > 0 {
		e.list(11, "events")
		for _, ev := range evs {
			e.item()
			e.fixed64(1, "timeUnixNano", unixNano(ev.Time))
			e.str(2, "name", ev.Name)
			encodeAttrs(e, 3, "attributes", ev.Attributes)
			if ev.DroppedAttributeCount > 0 {
				e.uint32v(4, "droppedAttributesCount", uint32(ev.DroppedAttributeCount))
			}
			e.end()
		}
		e.endList()
	}
	if n := s.DroppedEvents(); n > 0 {
		e.uint32v(12, "droppedEventsCount", uint32(n))
	}
	if links := s.Links(); len(links) > 0 {
		e.list(13, "links")
		for _, l := range links {
			e.item()
			ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
			e.id(1, "traceId", ltid[:])
			e.id(2, "spanId", lsid[:])
			if ts := l.SpanContext.TraceState().String(); ts != "" {
				e.str(3, "traceState", ts)
			}
			encodeAttrs(e, 4, "attributes", l.Attributes)
			if l.DroppedAttributeCount > 0 {
				e.uint32v(5, "droppedAttributesCount", uint32(l.DroppedAttributeCount))
			}
			e.fixed32(6, "flags", spanFlags(l.SpanContext.TraceFlags(), l.SpanContext.IsRemote()))
			e.end()
		}
		e.endList()
	}
	if n := s.DroppedLinks(); n > 0 {
		e.uint32v(14, "droppedLinksCount", uint32(n))
	}
	if st := s.Status(); st.Code != codes.Unset || st.Description != "" {
		e.begin(15, "status")
		if st.Description != "" {
			e.str(2, "message", st.Description)
		}
		if c := statusCode(st.Code); c != 0 {
			e.uint32v(3, "code", c)
		}
		e.end()
	}
}

// spanFlags is OTLP's flags field: the W3C trace flags in the low byte,
// then "whether remote is known" and "remote".
func spanFlags(f trace.TraceFlags, remote bool) uint32 {
	const hasIsRemote, isRemote = 0x100, 0x200
	v := uint32(f) | hasIsRemote
	if remote {
		v |= isRemote
	}
	return v
}

// spanKind is OTLP's SpanKind, which numbers the kinds as the API does.
func spanKind(k trace.SpanKind) uint32 {
	if k < trace.SpanKindUnspecified || k > trace.SpanKindConsumer {
		return 0
	}
	return uint32(k)
}

// statusCode maps the API's codes (Unset, Error, Ok) to OTLP's
// (UNSET 0, OK 1, ERROR 2).
func statusCode(c codes.Code) uint32 {
	switch c {
	case codes.Ok:
		return 1
	case codes.Error:
		return 2
	}
	return 0
}

func unixNano(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixNano())
}

// encodeAttrs writes attrs as a repeated KeyValue field; nothing when
// there are none.
func encodeAttrs(e enc, f fieldNum, name string, attrs []attribute.KeyValue) {
	if len(attrs) == 0 {
		return
	}
	e.list(f, name)
	for _, kv := range attrs {
		e.item()
		e.str(1, "key", string(kv.Key))
		e.begin(2, "value")
		encodeValue(e, kv.Value)
		e.end()
		e.end()
	}
	e.endList()
}

// encodeValue writes the fields of an AnyValue.
func encodeValue(e enc, v attribute.Value) {
	switch v.Type() {
	case attribute.BOOL:
		e.boolean(2, "boolValue", v.AsBool())
	case attribute.INT64:
		e.int64v(3, "intValue", v.AsInt64())
	case attribute.FLOAT64:
		e.double(4, "doubleValue", v.AsFloat64())
	case attribute.STRING:
		e.str(1, "stringValue", v.AsString())
	case attribute.BYTESLICE:
		e.bytes(7, "bytesValue", v.AsByteSlice())
	case attribute.BOOLSLICE:
		array(e, v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		array(e, v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		array(e, v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.STRINGSLICE:
		array(e, v.AsStringSlice(), attribute.StringValue)
	case attribute.SLICE:
		array(e, v.AsSlice(), func(v attribute.Value) attribute.Value { return v })
	case attribute.MAP:
		e.begin(6, "kvlistValue")
		encodeAttrs(e, 1, "values", v.AsMap())
		e.end()
	}
}

// array writes an ArrayValue of vs.
func array[T any](e enc, vs []T, value func(T) attribute.Value) {
	e.begin(5, "arrayValue")
	if len(vs) > 0 {
		e.list(1, "values")
		for _, x := range vs {
			e.item()
			encodeValue(e, value(x))
			e.end()
		}
		e.endList()
	}
	e.end()
}

// encodeMetrics writes an ExportMetricsServiceRequest of rm.
func encodeMetrics(e enc, rm *metricdata.ResourceMetrics) {
	e.list(1, "resourceMetrics")
	e.item()
	encodeResource(e, rm.Resource)
	if len(rm.ScopeMetrics) > 0 {
		e.list(2, "scopeMetrics")
		for _, sm := range rm.ScopeMetrics {
			e.item()
			encodeScope(e, sm.Scope)
			if len(sm.Metrics) > 0 {
				e.list(2, "metrics")
				for _, m := range sm.Metrics {
					e.item()
					encodeMetric(e, m)
					e.end()
				}
				e.endList()
			}
			if sm.Scope.SchemaURL != "" {
				e.str(3, "schemaUrl", sm.Scope.SchemaURL)
			}
			e.end()
		}
		e.endList()
	}
	if u := rm.Resource.SchemaURL(); u != "" {
		e.str(3, "schemaUrl", u)
	}
	e.end()
	e.endList()
}

func encodeMetric(e enc, m metricdata.Metrics) {
	e.str(1, "name", m.Name)
	if m.Description != "" {
		e.str(2, "description", m.Description)
	}
	if m.Unit != "" {
		e.str(3, "unit", m.Unit)
	}
	switch d := m.Data.(type) {
	case metricdata.Gauge[int64]:
		e.begin(5, "gauge")
		numberPoints(e, d.DataPoints)
		e.end()
	case metricdata.Gauge[float64]:
		e.begin(5, "gauge")
		numberPoints(e, d.DataPoints)
		e.end()
	case metricdata.Sum[int64]:
		e.begin(7, "sum")
		numberPoints(e, d.DataPoints)
		sumTail(e, d.Temporality, d.IsMonotonic)
		e.end()
	case metricdata.Sum[float64]:
		e.begin(7, "sum")
		numberPoints(e, d.DataPoints)
		sumTail(e, d.Temporality, d.IsMonotonic)
		e.end()
	case metricdata.Histogram[int64]:
		e.begin(9, "histogram")
		histogramPoints(e, d.DataPoints)
		temporality(e, d.Temporality)
		e.end()
	case metricdata.Histogram[float64]:
		e.begin(9, "histogram")
		histogramPoints(e, d.DataPoints)
		temporality(e, d.Temporality)
		e.end()
	case metricdata.ExponentialHistogram[int64]:
		e.begin(10, "exponentialHistogram")
		expPoints(e, d.DataPoints)
		temporality(e, d.Temporality)
		e.end()
	case metricdata.ExponentialHistogram[float64]:
		e.begin(10, "exponentialHistogram")
		expPoints(e, d.DataPoints)
		temporality(e, d.Temporality)
		e.end()
	case metricdata.Summary:
		e.begin(11, "summary")
		summaryPoints(e, d.DataPoints)
		e.end()
	}
}

func sumTail(e enc, t metricdata.Temporality, monotonic bool) {
	temporality(e, t)
	if monotonic {
		e.boolean(3, "isMonotonic", true)
	}
}

// temporality writes AggregationTemporality (field 2): OTLP numbers delta
// 1 and cumulative 2, the SDK the other way round.
func temporality(e enc, t metricdata.Temporality) {
	switch t {
	case metricdata.DeltaTemporality:
		e.uint32v(2, "aggregationTemporality", 1)
	case metricdata.CumulativeTemporality:
		e.uint32v(2, "aggregationTemporality", 2)
	}
}

// number writes a oneof value: as_double (field dbl) for float64, as_int
// (field 6) for int64.
func number[N int64 | float64](e enc, dbl fieldNum, v N) {
	switch x := any(v).(type) {
	case int64:
		e.sfixed64(6, "asInt", x)
	case float64:
		e.double(dbl, "asDouble", x)
	}
}

func numberPoints[N int64 | float64](e enc, pts []metricdata.DataPoint[N]) {
	if len(pts) == 0 {
		return
	}
	e.list(1, "dataPoints")
	for _, p := range pts {
		e.item()
		encodeAttrs(e, 7, "attributes", p.Attributes.ToSlice())
		e.fixed64(2, "startTimeUnixNano", unixNano(p.StartTime))
		e.fixed64(3, "timeUnixNano", unixNano(p.Time))
		number(e, 4, p.Value)
		exemplars(e, 5, p.Exemplars)
		e.end()
	}
	e.endList()
}

func histogramPoints[N int64 | float64](e enc, pts []metricdata.HistogramDataPoint[N]) {
	if len(pts) == 0 {
		return
	}
	e.list(1, "dataPoints")
	for _, p := range pts {
		e.item()
		encodeAttrs(e, 9, "attributes", p.Attributes.ToSlice())
		e.fixed64(2, "startTimeUnixNano", unixNano(p.StartTime))
		e.fixed64(3, "timeUnixNano", unixNano(p.Time))
		e.fixed64(4, "count", p.Count)
		e.double(5, "sum", float64(p.Sum))
		if len(p.BucketCounts) > 0 {
			e.fixed64s(6, "bucketCounts", p.BucketCounts)
		}
		if len(p.Bounds) > 0 {
			e.doubles(7, "explicitBounds", p.Bounds)
		}
		exemplars(e, 8, p.Exemplars)
		if v, ok := p.Min.Value(); ok {
			e.double(11, "min", float64(v))
		}
		if v, ok := p.Max.Value(); ok {
			e.double(12, "max", float64(v))
		}
		e.end()
	}
	e.endList()
}

func expPoints[N int64 | float64](e enc, pts []metricdata.ExponentialHistogramDataPoint[N]) {
	if len(pts) == 0 {
		return
	}
	e.list(1, "dataPoints")
	for _, p := range pts {
		e.item()
		encodeAttrs(e, 1, "attributes", p.Attributes.ToSlice())
		e.fixed64(2, "startTimeUnixNano", unixNano(p.StartTime))
		e.fixed64(3, "timeUnixNano", unixNano(p.Time))
		e.fixed64(4, "count", p.Count)
		e.double(5, "sum", float64(p.Sum))
		e.sint32v(6, "scale", p.Scale)
		e.fixed64(7, "zeroCount", p.ZeroCount)
		buckets(e, 8, "positive", p.PositiveBucket)
		buckets(e, 9, "negative", p.NegativeBucket)
		exemplars(e, 11, p.Exemplars)
		if v, ok := p.Min.Value(); ok {
			e.double(12, "min", float64(v))
		}
		if v, ok := p.Max.Value(); ok {
			e.double(13, "max", float64(v))
		}
		if p.ZeroThreshold != 0 {
			e.double(14, "zeroThreshold", p.ZeroThreshold)
		}
		e.end()
	}
	e.endList()
}

func buckets(e enc, f fieldNum, name string, b metricdata.ExponentialBucket) {
	e.begin(f, name)
	if b.Offset != 0 {
		e.sint32v(1, "offset", b.Offset)
	}
	if len(b.Counts) > 0 {
		e.uint64s(2, "bucketCounts", b.Counts)
	}
	e.end()
}

func summaryPoints(e enc, pts []metricdata.SummaryDataPoint) {
	if len(pts) == 0 {
		return
	}
	e.list(1, "dataPoints")
	for _, p := range pts {
		e.item()
		encodeAttrs(e, 7, "attributes", p.Attributes.ToSlice())
		e.fixed64(2, "startTimeUnixNano", unixNano(p.StartTime))
		e.fixed64(3, "timeUnixNano", unixNano(p.Time))
		e.fixed64(4, "count", p.Count)
		e.double(5, "sum", p.Sum)
		if len(p.QuantileValues) > 0 {
			e.list(6, "quantileValues")
			for _, q := range p.QuantileValues {
				e.item()
				e.double(1, "quantile", q.Quantile)
				e.double(2, "value", q.Value)
				e.end()
			}
			e.endList()
		}
		e.end()
	}
	e.endList()
}

// exemplars writes a repeated Exemplar field.
func exemplars[N int64 | float64](e enc, f fieldNum, exs []metricdata.Exemplar[N]) {
	if len(exs) == 0 {
		return
	}
	e.list(f, "exemplars")
	for _, x := range exs {
		e.item()
		encodeAttrs(e, 7, "filteredAttributes", x.FilteredAttributes)
		e.fixed64(2, "timeUnixNano", unixNano(x.Time))
		number(e, 3, x.Value)
		if len(x.SpanID) > 0 {
			e.id(4, "spanId", x.SpanID)
		}
		if len(x.TraceID) > 0 {
			e.id(5, "traceId", x.TraceID)
		}
		e.end()
	}
	e.endList()
}
