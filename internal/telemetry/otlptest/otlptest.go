// Package otlptest is an OTLP receiver for tests: an HTTP server that
// decodes each ExportTraceServiceRequest posted to /v1/traces (protobuf
// or JSON, gzip or not) and keeps its spans, and each
// ExportMetricsServiceRequest posted to /v1/metrics and keeps its sums;
// with NewGRPCReceiver also the collector's gRPC TraceService and
// MetricsService, served by grpc-go. It decodes with the generated OTLP
// types, so what it accepts is what the real implementation accepts.
// Tests only.
package otlptest

import (
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	collectormetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	_ "google.golang.org/grpc/encoding/gzip" // the server accepts gzip-compressed calls
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Request is what the receiver saw of one export request.
type Request struct {
	// Path is the HTTP path, or the gRPC method's.
	Path string
	// ContentType and ContentEncoding are the HTTP headers (for gRPC, the
	// content type and grpc-encoding).
	ContentType, ContentEncoding string
	// Header holds the other headers (gRPC metadata), keys in lower case.
	Header map[string]string
}

// Span is one received span, its ids in hex and its attributes as
// strings.
type Span struct {
	Name                      string
	Kind                      tracepb.Span_SpanKind
	TraceID, SpanID, ParentID string
	Links                     []string // the linked spans' ids
	Attrs                     map[string]string
	// Service is the service.name of the resource that sent it.
	Service string
}

// Receiver is a running OTLP/HTTP receiver.
type Receiver struct {
	srv *httptest.Server

	mu       sync.Mutex
	spans    []Span
	requests int
	seen     []Request
	errs     []error
	// grpc serves OTLP over gRPC (NewGRPCReceiver); nil for HTTP only.
	grpc     *grpc.Server
	grpcAddr string
	// sums holds each sum metric's value in the last export that had it:
	// the total over its data points (cumulative, as the SDK exports).
	sums map[string]float64
}

// NewReceiver starts a receiver; Close stops it.
func NewReceiver() *Receiver {
	r := &Receiver{sums: map[string]float64{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	return r
}

// URL is the receiver's base URL (OTEL_EXPORTER_OTLP_ENDPOINT).
func (r *Receiver) URL() string { return r.srv.URL }

// Close stops the receiver.
func (r *Receiver) Close() {
	r.srv.Close()
	if r.grpc != nil {
		r.grpc.Stop()
	}
}

// NewGRPCReceiver starts a receiver of OTLP over gRPC (the collector's
// TraceService) on a loopback port; GRPCEndpoint is its address.
func NewGRPCReceiver() (*Receiver, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for OTLP/gRPC: %w", err)
	}
	r := NewReceiver()
	r.grpc = grpc.NewServer()
	r.grpcAddr = lis.Addr().String()
	collectortrace.RegisterTraceServiceServer(r.grpc, traceService{r: r})
	collectormetrics.RegisterMetricsServiceServer(r.grpc, metricsService{r: r})
	go func() { _ = r.grpc.Serve(lis) }() // ends with Stop in Close
	return r, nil
}

// GRPCEndpoint is the gRPC receiver's endpoint, as
// OTEL_EXPORTER_OTLP_ENDPOINT takes it (http: no TLS).
func (r *Receiver) GRPCEndpoint() string { return "http://" + r.grpcAddr }

// traceService is the receiver as the collector's gRPC TraceService.
type traceService struct {
	collectortrace.UnimplementedTraceServiceServer
	r *Receiver
}

// Export implements collectortrace.TraceServiceServer.
func (s traceService) Export(ctx context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	s.r.mu.Lock()
	s.r.requests++
	s.r.seen = append(s.r.seen, grpcRequest(ctx, "/opentelemetry.proto.collector.trace.v1.TraceService/Export"))
	s.r.record(req)
	s.r.mu.Unlock()
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// metricsService is the receiver as the collector's gRPC MetricsService.
type metricsService struct {
	collectormetrics.UnimplementedMetricsServiceServer
	r *Receiver
}

// Export implements collectormetrics.MetricsServiceServer.
func (s metricsService) Export(ctx context.Context, req *collectormetrics.ExportMetricsServiceRequest) (*collectormetrics.ExportMetricsServiceResponse, error) {
	s.r.mu.Lock()
	s.r.requests++
	s.r.seen = append(s.r.seen, grpcRequest(ctx, "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export"))
	s.r.recordMetrics(req)
	s.r.mu.Unlock()
	return &collectormetrics.ExportMetricsServiceResponse{}, nil
}

// grpcRequest is what a gRPC call's metadata says.
func grpcRequest(ctx context.Context, path string) Request {
	req := Request{Path: path, Header: map[string]string{}}
	md, _ := metadata.FromIncomingContext(ctx)
	for k, v := range md {
		switch k {
		case "content-type":
			req.ContentType = strings.Join(v, ",")
		case "grpc-encoding":
			req.ContentEncoding = strings.Join(v, ",")
		default:
			req.Header[k] = strings.Join(v, ",")
		}
	}
	// grpc-go keeps grpc-encoding out of the metadata; its stream knows
	// which compressor the call came with.
	if st, ok := grpc.ServerTransportStreamFromContext(ctx).(interface{ RecvCompress() string }); ok && req.ContentEncoding == "" {
		req.ContentEncoding = st.RecvCompress()
	}
	return req
}

// Requests returns what the receiver saw of each request so far.
func (r *Receiver) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.seen...)
}

// Spans returns the spans received so far, with the requests that
// carried them and any request that could not be decoded.
func (r *Receiver) Spans() (spans []Span, requests int, errs []error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...), r.requests, append([]error(nil), r.errs...)
}

// Sums returns the sum metrics received: each one's total over its data
// points in the last export that carried it.
func (r *Receiver) Sums() map[string]float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.sums)
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	seen := Request{Path: req.URL.Path, ContentType: req.Header.Get("Content-Type"),
		ContentEncoding: req.Header.Get("Content-Encoding"), Header: map[string]string{}}
	for k, v := range req.Header {
		if k != "Content-Type" && k != "Content-Encoding" {
			seen.Header[strings.ToLower(k)] = strings.Join(v, ",")
		}
	}
	var (
		traces  collectortrace.ExportTraceServiceRequest
		metrics collectormetrics.ExportMetricsServiceRequest
		msg     proto.Message = &traces
		reply   proto.Message = &collectortrace.ExportTraceServiceResponse{}
	)
	body, err := readBody(req)
	switch {
	case err != nil:
	case req.URL.Path == "/v1/metrics":
		msg, reply = &metrics, &collectormetrics.ExportMetricsServiceResponse{}
	case req.URL.Path != "/v1/traces":
		err = fmt.Errorf("POST to %s, want /v1/traces or /v1/metrics", req.URL.Path)
	}
	json := seen.ContentType == "application/json"
	if err == nil {
		switch {
		case json:
			err = protojson.Unmarshal(body, msg)
			if err == nil && msg == &metrics {
				err = FixJSONMetricIDs(&metrics)
			} else if err == nil {
				err = FixJSONTraceIDs(&traces)
			}
		case seen.ContentType == "application/x-protobuf":
			err = proto.Unmarshal(body, msg)
		default:
			err = fmt.Errorf("content type %q, want application/x-protobuf or application/json", seen.ContentType)
		}
	}
	r.mu.Lock()
	r.requests++
	r.seen = append(r.seen, seen)
	if err != nil {
		r.errs = append(r.errs, err)
		r.mu.Unlock()
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if msg == &metrics {
		r.recordMetrics(&metrics)
	} else {
		r.record(&traces)
	}
	r.mu.Unlock()
	var b []byte
	if json {
		b, _ = protojson.Marshal(reply)
	} else {
		b, _ = proto.Marshal(reply)
	}
	w.Header().Set("Content-Type", seen.ContentType)
	_, _ = w.Write(b)
}

// readBody reads a request's body, gunzipped when it says gzip.
func readBody(req *http.Request) ([]byte, error) {
	var body io.Reader = req.Body
	switch enc := req.Header.Get("Content-Encoding"); enc {
	case "gzip":
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			return nil, fmt.Errorf("gzip body: %w", err)
		}
		body = zr
	case "":
	default:
		return nil, fmt.Errorf("content encoding %q, want gzip or none", enc)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	return b, nil
}

// record keeps the spans of msg; r.mu is held.
func (r *Receiver) record(msg *collectortrace.ExportTraceServiceRequest) {
	for _, rs := range msg.GetResourceSpans() {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = value(kv.GetValue())
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				sp := Span{Name: s.GetName(), Kind: s.GetKind(), TraceID: hex.EncodeToString(s.GetTraceId()),
					SpanID: hex.EncodeToString(s.GetSpanId()), ParentID: hex.EncodeToString(s.GetParentSpanId()),
					Attrs: map[string]string{}, Service: service}
				for _, l := range s.GetLinks() {
					sp.Links = append(sp.Links, hex.EncodeToString(l.GetSpanId()))
				}
				for _, kv := range s.GetAttributes() {
					sp.Attrs[kv.GetKey()] = value(kv.GetValue())
				}
				r.spans = append(r.spans, sp)
			}
		}
	}
}

// recordMetrics keeps the sums of msg; r.mu is held.
func (r *Receiver) recordMetrics(msg *collectormetrics.ExportMetricsServiceRequest) {
	for _, rm := range msg.GetResourceMetrics() {
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				if m.GetSum() == nil {
					continue
				}
				total := 0.0
				for _, dp := range m.GetSum().GetDataPoints() {
					total += dp.GetAsDouble() + float64(dp.GetAsInt())
				}
				r.sums[m.GetName()] = total
			}
		}
	}
}

// value renders an attribute value as the SDK's attribute.Value.Emit
// does for the scalar kinds and string slices.
func value(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonpb.AnyValue_DoubleValue:
		return fmt.Sprint(x.DoubleValue)
	case *commonpb.AnyValue_ArrayValue:
		var parts []string
		for _, e := range x.ArrayValue.GetValues() {
			parts = append(parts, fmt.Sprintf("%q", value(e)))
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	return ""
}

// The OTLP/JSON encoding writes trace and span ids in hex where the
// protobuf JSON mapping (protojson) expects base64. Hex digits are base64
// too, so protojson decodes such an id to the wrong bytes without
// complaint; the functions below turn them back: the base64 of what it
// decoded is the hex the sender wrote.

// FixJSONTraceIDs corrects the ids of a trace request decoded by
// protojson from OTLP/JSON; an id that is not hex is an error.
func FixJSONTraceIDs(msg *collectortrace.ExportTraceServiceRequest) error {
	for _, rs := range msg.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				for _, id := range []*[]byte{&s.TraceId, &s.SpanId, &s.ParentSpanId} {
					if err := fixID(id); err != nil {
						return fmt.Errorf("span %s: %w", s.GetName(), err)
					}
				}
				for _, l := range s.GetLinks() {
					for _, id := range []*[]byte{&l.TraceId, &l.SpanId} {
						if err := fixID(id); err != nil {
							return fmt.Errorf("span %s, link: %w", s.GetName(), err)
						}
					}
				}
			}
		}
	}
	return nil
}

// FixJSONMetricIDs corrects the exemplars' ids of a metrics request
// decoded by protojson from OTLP/JSON.
func FixJSONMetricIDs(msg *collectormetrics.ExportMetricsServiceRequest) error {
	for _, rm := range msg.GetResourceMetrics() {
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				var exs [][]*metricspb.Exemplar
				for _, dp := range m.GetSum().GetDataPoints() {
					exs = append(exs, dp.Exemplars)
				}
				for _, dp := range m.GetGauge().GetDataPoints() {
					exs = append(exs, dp.Exemplars)
				}
				for _, dp := range m.GetHistogram().GetDataPoints() {
					exs = append(exs, dp.Exemplars)
				}
				for _, dp := range m.GetExponentialHistogram().GetDataPoints() {
					exs = append(exs, dp.Exemplars)
				}
				for _, list := range exs {
					for _, e := range list {
						for _, id := range []*[]byte{&e.TraceId, &e.SpanId} {
							if err := fixID(id); err != nil {
								return fmt.Errorf("metric %s, exemplar: %w", m.GetName(), err)
							}
						}
					}
				}
			}
		}
	}
	return nil
}

func fixID(id *[]byte) error {
	if len(*id) == 0 {
		return nil
	}
	s := base64.StdEncoding.EncodeToString(*id)
	b, err := hex.DecodeString(s)
	if err != nil {
		return fmt.Errorf("id %q is not hex, as OTLP/JSON writes ids", s)
	}
	*id = b
	return nil
}
