// Package otlptest is an OTLP receiver for tests: an HTTP server that
// decodes each protobuf ExportTraceServiceRequest posted to /v1/traces
// and keeps its spans, and each ExportMetricsServiceRequest posted to
// /v1/metrics and keeps its sums; with NewGRPCReceiver also the
// collector's gRPC TraceService. Tests only.
package otlptest

import (
	"context"
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
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

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
func (s traceService) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	s.r.mu.Lock()
	s.r.requests++
	s.r.record(req)
	s.r.mu.Unlock()
	return &collectortrace.ExportTraceServiceResponse{}, nil
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
	if req.URL.Path == "/v1/metrics" {
		r.serveMetrics(w, req)
		return
	}
	body, err := io.ReadAll(req.Body)
	if err == nil && req.URL.Path != "/v1/traces" {
		err = fmt.Errorf("POST to %s, want /v1/traces or /v1/metrics", req.URL.Path)
	}
	if err == nil && req.Header.Get("Content-Type") != "application/x-protobuf" {
		err = fmt.Errorf("content type %q, want application/x-protobuf", req.Header.Get("Content-Type"))
	}
	var msg collectortrace.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(body, &msg)
	}
	r.mu.Lock()
	r.requests++
	if err != nil {
		r.errs = append(r.errs, err)
		r.mu.Unlock()
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.record(&msg)
	r.mu.Unlock()
	b, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
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

func (r *Receiver) serveMetrics(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	var msg collectormetrics.ExportMetricsServiceRequest
	if err == nil {
		err = proto.Unmarshal(body, &msg)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	if err != nil {
		r.errs = append(r.errs, err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
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
	b, _ := proto.Marshal(&collectormetrics.ExportMetricsServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
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
