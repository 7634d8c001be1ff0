package otlpexport

import (
	"context"
	"encoding/pem"
	"io"
	"log"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// TestExportOverTLS: with OTEL_EXPORTER_OTLP_CERTIFICATE naming the
// receiver's certificate, spans go over HTTPS (OTLP/HTTP) and over gRPC
// on TLS (HTTP/2 by ALPN, grpc-go's server); without it the unknown
// certificate is refused.
func TestExportOverTLS(t *testing.T) {
	ctx := context.Background()
	spans := recordSpans(t)
	a := &answers{}
	srv := httptest.NewUnstartedServer(a)
	srv.EnableHTTP2 = true
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	srv.StartTLS()
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(grpc.Creds(credentials.NewServerTLSFromCert(&srv.TLS.Certificates[0])))
	f := &flakyTraces{}
	collectortrace.RegisterTraceServiceServer(gs, f)
	go func() { _ = gs.Serve(lis) }() // ends with Stop below
	defer gs.Stop()

	for _, tc := range []struct{ protocol, endpoint string }{
		{"http/protobuf", srv.URL},
		{"grpc", "https://" + lis.Addr().String()},
	} {
		t.Run(tc.protocol, func(t *testing.T) {
			for _, withCA := range []bool{false, true} {
				vars := []string{"OTEL_EXPORTER_OTLP_ENDPOINT", tc.endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL", tc.protocol}
				if withCA {
					vars = append(vars, "OTEL_EXPORTER_OTLP_CERTIFICATE", ca)
				}
				cfg, err := FromEnv(env(vars...), Traces)
				if err != nil {
					t.Fatal(err)
				}
				cfg.Retry = Retry{Disabled: true}
				e, err := NewSpanExporter(cfg)
				if err != nil {
					t.Fatal(err)
				}
				err = e.ExportSpans(ctx, spans)
				if withCA && err != nil {
					t.Errorf("with the certificate: %v", err)
				}
				if !withCA && (err == nil || !strings.Contains(err.Error(), "certificate")) {
					t.Errorf("without the certificate: %v, want a certificate error", err)
				}
			}
		})
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if a.requests() != 1 || f.calls != 1 || f.spans != 2 {
		t.Errorf("HTTPS requests %d, gRPC calls %d with %d spans; want 1, 1, 2", a.requests(), f.calls, f.spans)
	}
}
