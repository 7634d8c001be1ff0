package otlpexport

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/cadre-dev/cadre/internal/telemetry/otlptest"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// fast is a retry schedule for tests: the waits are a millisecond.
var fast = Retry{Initial: time.Millisecond, Max: 2 * time.Millisecond}

// exportBoth sends the recorded spans and the collected metrics with
// exporters built from the variables of getenv.
func exportBoth(t *testing.T, getenv func(string) string) {
	t.Helper()
	ctx := context.Background()
	tcfg, err := FromEnv(getenv, Traces)
	if err != nil {
		t.Fatal(err)
	}
	tcfg.Retry = fast
	se, err := NewSpanExporter(tcfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := se.ExportSpans(ctx, recordSpans(t)); err != nil {
		t.Fatalf("export spans: %v", err)
	}
	mcfg, err := FromEnv(getenv, Metrics)
	if err != nil {
		t.Fatal(err)
	}
	mcfg.Retry = fast
	me, err := NewMetricExporter(mcfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := me.Export(ctx, collectMetrics(t)); err != nil {
		t.Fatalf("export metrics: %v", err)
	}
	_ = se.Shutdown(ctx)
	_ = me.Shutdown(ctx)
	if err := se.ExportSpans(ctx, recordSpans(t)); err == nil {
		t.Error("an export after Shutdown succeeded")
	}
}

// checkReceived: the receiver got both spans (under the right parent)
// and the tokens sum, with the requests as want says.
func checkReceived(t *testing.T, rcv *otlptest.Receiver, want []otlptest.Request) {
	t.Helper()
	spans, requests, errs := rcv.Spans()
	if len(errs) > 0 || requests != 2 {
		t.Fatalf("%d requests, errors %v", requests, errs)
	}
	names := map[string]otlptest.Span{}
	for _, s := range spans {
		names[s.Name] = s
	}
	root, child := names["invoke_agent main"], names["chat claude"]
	if root.Service != "wire-test" || root.ParentID != "00f067aa0ba902b7" || child.ParentID != root.SpanID || root.Attrs["i"] != "-7" {
		t.Errorf("spans %+v", spans)
	}
	if sums := rcv.Sums(); sums["tokens"] != 12 || sums["cost"] != 0.25 {
		t.Errorf("sums %v", sums)
	}
	got := rcv.Requests()
	for i, w := range want {
		g := got[i]
		if g.Path != w.Path || g.ContentType != w.ContentType || g.ContentEncoding != w.ContentEncoding {
			t.Errorf("request %d: %s %q %q, want %s %q %q", i, g.Path, g.ContentType, g.ContentEncoding, w.Path, w.ContentType, w.ContentEncoding)
		}
		for k, v := range w.Header {
			if g.Header[k] != v {
				t.Errorf("request %d: header %s = %q, want %q (headers %v)", i, k, g.Header[k], v, g.Header)
			}
		}
	}
}

// TestExportOverHTTP: spans to /v1/traces and metrics to /v1/metrics of
// the general endpoint, in protobuf and in JSON, gzip or not, with the
// headers of both variables, decoded by the receiver with the generated
// types.
func TestExportOverHTTP(t *testing.T) {
	for _, tc := range []struct {
		protocol, ctype, compression, encoding string
	}{
		{"http/protobuf", "application/x-protobuf", "", ""},
		{"http/json", "application/json", "gzip", "gzip"},
		{"http/protobuf", "application/x-protobuf", "gzip", "gzip"},
	} {
		t.Run(tc.protocol+"/"+tc.compression, func(t *testing.T) {
			rcv := otlptest.NewReceiver()
			defer rcv.Close()
			exportBoth(t, env("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL()+"/", "OTEL_EXPORTER_OTLP_PROTOCOL", tc.protocol,
				"OTEL_EXPORTER_OTLP_COMPRESSION", tc.compression,
				"OTEL_EXPORTER_OTLP_HEADERS", "x-team=a%20b,authorization=Bearer t", "OTEL_EXPORTER_OTLP_METRICS_HEADERS", "x-team=metrics"))
			checkReceived(t, rcv, []otlptest.Request{
				{Path: "/v1/traces", ContentType: tc.ctype, ContentEncoding: tc.encoding, Header: map[string]string{"x-team": "a b", "authorization": "Bearer t"}},
				{Path: "/v1/metrics", ContentType: tc.ctype, ContentEncoding: tc.encoding, Header: map[string]string{"x-team": "metrics", "authorization": "Bearer t"}},
			})
		})
	}
}

// TestExportOverGRPC: the same through the collector's gRPC services,
// served by grpc-go, over cleartext HTTP/2: plain and gzip, the headers
// as metadata.
func TestExportOverGRPC(t *testing.T) {
	for _, compression := range []string{"", "gzip"} {
		t.Run("compression="+compression, func(t *testing.T) {
			rcv, err := otlptest.NewGRPCReceiver()
			if err != nil {
				t.Fatal(err)
			}
			defer rcv.Close()
			exportBoth(t, env("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.GRPCEndpoint(), "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc",
				"OTEL_EXPORTER_OTLP_COMPRESSION", compression, "OTEL_EXPORTER_OTLP_HEADERS", "x-team=grpc"))
			checkReceived(t, rcv, []otlptest.Request{
				{Path: "/opentelemetry.proto.collector.trace.v1.TraceService/Export", ContentType: "application/grpc", ContentEncoding: compression, Header: map[string]string{"x-team": "grpc"}},
				{Path: "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export", ContentType: "application/grpc", ContentEncoding: compression, Header: map[string]string{"x-team": "grpc"}},
			})
		})
	}
}

// answers is an HTTP receiver that answers each request with the next
// status of its script (200 after it), the body of a 200 being reply.
type answers struct {
	mu     sync.Mutex
	script []int
	reply  []byte
	got    int
	// after is the Retry-After header of the error answers ("": none).
	after string
}

func (a *answers) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	code := http.StatusOK
	if a.got < len(a.script) {
		code = a.script[a.got]
	}
	a.got++
	a.mu.Unlock()
	if code != http.StatusOK {
		if a.after != "" {
			w.Header().Set("Retry-After", a.after)
		}
		http.Error(w, "try later", code)
		return
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(a.reply)
}

func (a *answers) requests() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.got
}

func spanExporterTo(t *testing.T, rawURL, protocol string, r Retry) *SpanExporter {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewSpanExporter(Config{Protocol: protocol, URL: u, Retry: r})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestRetryOverHTTP: 429, 502, 503 and 504 are tried again with backoff
// until the receiver takes the request; another error status is not, and
// its message is in the error; retries stop at MaxElapsed; a partial
// success is an error that says how many spans were rejected.
func TestRetryOverHTTP(t *testing.T) {
	ctx := context.Background()
	spans := recordSpans(t)
	for _, tc := range []struct {
		name     string
		script   []int
		retry    Retry
		requests int
		wantErr  string
	}{
		{"retryable", []int{429, 502, 503, 504}, fast, 5, ""},
		{"bad request", []int{400}, fast, 1, "400 Bad Request: try later"},
		{"retries off", []int{503}, Retry{Disabled: true}, 1, "503"},
		{"gives up", []int{503, 503, 503, 503, 503, 503, 503, 503, 503, 503}, Retry{Initial: time.Hour, MaxElapsed: time.Minute}, 1, "gave up retrying"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &answers{script: tc.script}
			srv := httptest.NewServer(a)
			defer srv.Close()
			err := spanExporterTo(t, srv.URL+"/v1/traces", HTTPProtobuf, tc.retry).ExportSpans(ctx, spans)
			if (err != nil) != (tc.wantErr != "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err %v, want one with %q", err, tc.wantErr)
			}
			if a.requests() != tc.requests {
				t.Errorf("%d requests, want %d", a.requests(), tc.requests)
			}
		})
	}
	// The receiver's Retry-After replaces the backoff: two minutes is past
	// MaxElapsed, so the exporter gives up after one request where its own
	// millisecond waits would have retried.
	a := &answers{script: []int{503, 503}, after: "120"}
	slow := httptest.NewServer(a)
	defer slow.Close()
	if err := spanExporterTo(t, slow.URL, HTTPProtobuf, Retry{Initial: time.Millisecond, MaxElapsed: time.Minute}).ExportSpans(ctx, spans); err == nil ||
		!strings.Contains(err.Error(), "gave up retrying") || a.requests() != 1 {
		t.Errorf("Retry-After 120: %v after %d requests, want a give-up after 1", err, a.requests())
	}
	reply, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{PartialSuccess: &collectortrace.ExportTracePartialSuccess{RejectedSpans: 1, ErrorMessage: "too old"}})
	srv := httptest.NewServer(&answers{reply: reply})
	defer srv.Close()
	if err := spanExporterTo(t, srv.URL+"/v1/traces", HTTPProtobuf, fast).ExportSpans(ctx, spans); err == nil || !strings.Contains(err.Error(), "1 spans rejected: too old") {
		t.Errorf("partial success: %v", err)
	}
}

// flakyTraces is a gRPC TraceService (grpc-go) that fails its first calls
// with the codes of fail.
type flakyTraces struct {
	collectortrace.UnimplementedTraceServiceServer
	mu    sync.Mutex
	fail  []codes.Code
	calls int
	spans int
	// partial is the partial success of every answer (nil: none).
	partial *collectortrace.ExportTracePartialSuccess
}

func (f *flakyTraces) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.calls <= len(f.fail) {
		return nil, status.Error(f.fail[f.calls-1], "not now: 100% busy")
	}
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			f.spans += len(ss.Spans)
		}
	}
	return &collectortrace.ExportTraceServiceResponse{PartialSuccess: f.partial}, nil
}

// TestRetryOverGRPC: UNAVAILABLE and the other retryable codes are tried
// again until grpc-go's server takes the call; INVALID_ARGUMENT is not,
// and the error names the code and the (percent-decoded) message.
func TestRetryOverGRPC(t *testing.T) {
	ctx := context.Background()
	spans := recordSpans(t)
	for _, tc := range []struct {
		name    string
		fail    []codes.Code
		calls   int
		wantErr string
	}{
		{"unavailable", []codes.Code{codes.Unavailable, codes.Unavailable, codes.Aborted, codes.DeadlineExceeded}, 5, ""},
		{"invalid", []codes.Code{codes.InvalidArgument}, 1, "INVALID_ARGUMENT: not now: 100% busy"},
		{"resource exhausted without retry info", []codes.Code{codes.ResourceExhausted}, 1, "RESOURCE_EXHAUSTED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			srv := grpc.NewServer()
			f := &flakyTraces{fail: tc.fail}
			collectortrace.RegisterTraceServiceServer(srv, f)
			go func() { _ = srv.Serve(lis) }() // ends with Stop below
			defer srv.Stop()
			err = spanExporterTo(t, "http://"+lis.Addr().String()+"/opentelemetry.proto.collector.trace.v1.TraceService/Export", GRPC, fast).ExportSpans(ctx, spans)
			if (err != nil) != (tc.wantErr != "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err %v, want one with %q", err, tc.wantErr)
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.calls != tc.calls || tc.wantErr == "" && f.spans != 2 {
				t.Errorf("%d calls, %d spans; want %d calls", f.calls, f.spans, tc.calls)
			}
		})
	}
}

// TestGRPCPartialSuccess: grpc-go's answer, gzip-compressed as the call
// was, is read: a partial success is an error naming the rejected spans.
func TestGRPCPartialSuccess(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(srv, &flakyTraces{partial: &collectortrace.ExportTracePartialSuccess{RejectedSpans: 2, ErrorMessage: "span too large"}})
	go func() { _ = srv.Serve(lis) }() // ends with Stop below
	defer srv.Stop()
	for _, gz := range []bool{false, true} {
		u, _ := url.Parse("http://" + lis.Addr().String() + "/opentelemetry.proto.collector.trace.v1.TraceService/Export")
		e, err := NewSpanExporter(Config{Protocol: GRPC, URL: u, Gzip: gz, Retry: fast})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.ExportSpans(context.Background(), recordSpans(t)); err == nil || !strings.Contains(err.Error(), "2 spans rejected: span too large") {
			t.Errorf("gzip %v: %v, want the partial success", gz, err)
		}
	}
}

// TestFromEnv: which URL, headers, timeout and compression the variables
// give, and the errors that name the variable.
func TestFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		getenv  func(string) string
		signal  Signal
		url     string
		wantErr string
	}{
		{"default http", env(), Traces, "http://localhost:4318/v1/traces", ""},
		{"default grpc", env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"), Metrics, "http://localhost:4317/opentelemetry.proto.collector.metrics.v1.MetricsService/Export", ""},
		{"base with path", env("OTEL_EXPORTER_OTLP_ENDPOINT", "https://c.example/otlp/"), Metrics, "https://c.example/otlp/v1/metrics", ""},
		{"signal endpoint as is", env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:1", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://b:2/custom"), Traces, "http://b:2/custom", ""},
		{"signal protocol", env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT", "https://c:4317/ignored"), Traces,
			"https://c:4317/opentelemetry.proto.collector.trace.v1.TraceService/Export", ""},
		{"grpc without scheme, insecure", env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT", "c:4317", "OTEL_EXPORTER_OTLP_INSECURE", "true"), Traces,
			"http://c:4317/opentelemetry.proto.collector.trace.v1.TraceService/Export", ""},
		{"grpc without scheme", env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT", "c:4317"), Traces,
			"https://c:4317/opentelemetry.proto.collector.trace.v1.TraceService/Export", ""},
		{"bad protocol", env("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "thrift"), Metrics, "", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL=thrift"},
		{"bad endpoint", env("OTEL_EXPORTER_OTLP_ENDPOINT", "ftp://x"), Traces, "", "OTEL_EXPORTER_OTLP_ENDPOINT=ftp://x"},
		{"bad timeout", env("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "soon"), Traces, "", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT=soon"},
		{"bad compression", env("OTEL_EXPORTER_OTLP_COMPRESSION", "zstd"), Traces, "", "OTEL_EXPORTER_OTLP_COMPRESSION=zstd"},
		{"bad header", env("OTEL_EXPORTER_OTLP_HEADERS", "novalue"), Traces, "", "OTEL_EXPORTER_OTLP_HEADERS"},
		{"missing certificate", env("OTEL_EXPORTER_OTLP_ENDPOINT", "https://c", "OTEL_EXPORTER_OTLP_CERTIFICATE", "/nonexistent/ca.pem"), Traces, "", "OTEL_EXPORTER_OTLP_CERTIFICATE"},
		{"client key alone", env("OTEL_EXPORTER_OTLP_ENDPOINT", "https://c", "OTEL_EXPORTER_OTLP_CLIENT_KEY", "/k.pem"), Traces, "", "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := FromEnv(tc.getenv, tc.signal)
			if (err != nil) != (tc.wantErr != "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err %v, want one naming %q", err, tc.wantErr)
			}
			if err == nil && cfg.URL.String() != tc.url {
				t.Errorf("URL %s, want %s", cfg.URL, tc.url)
			}
		})
	}
	cfg, err := FromEnv(env("OTEL_EXPORTER_OTLP_TIMEOUT", "2500", "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", "700",
		"OTEL_EXPORTER_OTLP_COMPRESSION", "gzip", "OTEL_EXPORTER_OTLP_HEADERS", " a = 1 ,b=x%3Dy"), Metrics)
	if err != nil || cfg.Timeout != 700*time.Millisecond || !cfg.Gzip || cfg.Headers["a"] != "1" || cfg.Headers["b"] != "x=y" {
		t.Errorf("%+v %v", cfg, err)
	}
	if _, err := TemporalityFromEnv(env("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "sometimes")); err == nil {
		t.Error("want an error for an unknown temporality preference")
	}
	sel, err := TemporalityFromEnv(env("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "delta"))
	if err != nil || sel(sdkmetric.InstrumentKindCounter).String() != "DeltaTemporality" || sel(sdkmetric.InstrumentKindUpDownCounter).String() != "CumulativeTemporality" {
		t.Errorf("delta preference: %v", err)
	}
}
