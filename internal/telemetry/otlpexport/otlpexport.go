// Package otlpexport sends the OpenTelemetry SDK's spans and metrics to an
// OTLP receiver: over HTTP with protobuf (http/protobuf) or JSON
// (http/json) bodies, and over gRPC, which is spoken with net/http's
// HTTP/2 client (a unary call is one POST with a framed message and the
// status in the trailers), so that the cadre binary links neither grpc-go
// nor the generated OTLP packages and their init (issue 24). The
// messages are written field by field (pbwire.go) from the OTLP
// protos' field numbers. The exporters implement the SDK's
// sdktrace.SpanExporter and sdkmetric.Exporter; Config, or FromEnv for
// the OTEL_EXPORTER_OTLP_* variables, says where and how.
package otlpexport

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// errStopped is what an export after Shutdown returns.
var errStopped = errors.New("OTLP exporter is shut down")

// SpanExporter sends spans; it is an sdktrace.SpanExporter.
type SpanExporter struct {
	c       *client
	stopped atomic.Bool
}

var _ sdktrace.SpanExporter = (*SpanExporter)(nil)

// NewSpanExporter returns an exporter of spans with cfg.
func NewSpanExporter(cfg Config) (*SpanExporter, error) {
	cfg.Signal = Traces
	c, err := newClient(cfg)
	if err != nil {
		return nil, err
	}
	return &SpanExporter{c: c}, nil
}

// ExportSpans sends spans as one Export request.
func (e *SpanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if e.stopped.Load() {
		return errStopped
	}
	if len(spans) == 0 {
		return nil
	}
	return e.c.export(ctx, encode(e.c.cfg.Protocol, func(w enc) { encodeSpans(w, spans) }))
}

// Shutdown stops the exporter; later exports fail.
func (e *SpanExporter) Shutdown(context.Context) error {
	e.stopped.Store(true)
	e.c.close()
	return nil
}

// MetricExporter sends metrics; it is an sdkmetric.Exporter.
type MetricExporter struct {
	c           *client
	temporality sdkmetric.TemporalitySelector
	stopped     atomic.Bool
}

var _ sdkmetric.Exporter = (*MetricExporter)(nil)

// NewMetricExporter returns an exporter of metrics with cfg and the
// temporality sel chooses (nil: cumulative for every instrument).
func NewMetricExporter(cfg Config, sel sdkmetric.TemporalitySelector) (*MetricExporter, error) {
	cfg.Signal = Metrics
	c, err := newClient(cfg)
	if err != nil {
		return nil, err
	}
	if sel == nil {
		sel = sdkmetric.DefaultTemporalitySelector
	}
	return &MetricExporter{c: c, temporality: sel}, nil
}

// TemporalityFromEnv is the selector OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE
// asks for: cumulative (the default), delta or lowmemory.
func TemporalityFromEnv(getenv func(string) string) (sdkmetric.TemporalitySelector, error) {
	const v = "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE"
	switch s := strings.ToLower(strings.TrimSpace(getenv(v))); s {
	case "", "cumulative":
		return sdkmetric.DefaultTemporalitySelector, nil
	case "delta":
		return func(k sdkmetric.InstrumentKind) metricdata.Temporality {
			switch k {
			case sdkmetric.InstrumentKindUpDownCounter, sdkmetric.InstrumentKindObservableUpDownCounter:
				return metricdata.CumulativeTemporality
			}
			return metricdata.DeltaTemporality
		}, nil
	case "lowmemory":
		return func(k sdkmetric.InstrumentKind) metricdata.Temporality {
			switch k {
			case sdkmetric.InstrumentKindCounter, sdkmetric.InstrumentKindHistogram:
				return metricdata.DeltaTemporality
			}
			return metricdata.CumulativeTemporality
		}, nil
	default:
		return nil, fmt.Errorf("%s=%s: want cumulative, delta or lowmemory", v, s)
	}
}

// Temporality implements sdkmetric.Exporter.
func (e *MetricExporter) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return e.temporality(k)
}

// Aggregation implements sdkmetric.Exporter: the SDK's defaults.
func (e *MetricExporter) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return sdkmetric.DefaultAggregationSelector(k)
}

// Export sends rm as one Export request.
func (e *MetricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	if e.stopped.Load() {
		return errStopped
	}
	if rm == nil || len(rm.ScopeMetrics) == 0 {
		return nil // nothing recorded: nothing to send
	}
	return e.c.export(ctx, encode(e.c.cfg.Protocol, func(w enc) { encodeMetrics(w, rm) }))
}

// ForceFlush implements sdkmetric.Exporter: nothing is held.
func (e *MetricExporter) ForceFlush(context.Context) error { return nil }

// Shutdown stops the exporter; later exports fail.
func (e *MetricExporter) Shutdown(context.Context) error {
	e.stopped.Store(true)
	e.c.close()
	return nil
}

// encode runs write on the encoder of protocol and returns the message.
func encode(protocol string, write func(enc)) []byte {
	if protocol == HTTPJSON {
		j := newJSONEnc()
		write(j)
		return j.close()
	}
	p := &pbEnc{}
	write(p)
	return p.b
}
