package otlpexport

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// The OTLP protocols (OTEL_EXPORTER_OTLP_PROTOCOL).
const (
	HTTPProtobuf = "http/protobuf"
	HTTPJSON     = "http/json"
	GRPC         = "grpc"
)

// Signal is what an exporter sends: traces or metrics.
type Signal string

// The signals, as the OTEL_EXPORTER_OTLP_<SIGNAL>_* variables name them.
const (
	Traces  Signal = "TRACES"
	Metrics Signal = "METRICS"
)

// httpPath is the signal's path under an OTLP/HTTP base endpoint.
func (s Signal) httpPath() string {
	if s == Metrics {
		return "/v1/metrics"
	}
	return "/v1/traces"
}

// grpcPath is the signal's gRPC method, as an HTTP/2 path.
func (s Signal) grpcPath() string {
	if s == Metrics {
		return "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export"
	}
	return "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
}

// Retry is the backoff between attempts of one export when the receiver
// answers with a retryable status (HTTP 429, 502, 503, 504; gRPC
// UNAVAILABLE and the other codes the OTLP specification names).
type Retry struct {
	// Disabled sends once.
	Disabled bool
	// Initial is the first wait (5 s when zero); each next one is 1.5
	// times longer, up to Max (30 s), with ±50 % jitter, and none starts
	// after MaxElapsed (1 min) or past the export's deadline. A
	// receiver's Retry-After replaces the computed wait.
	Initial, Max, MaxElapsed time.Duration
}

// Config is one exporter's settings.
type Config struct {
	// Signal is what the exporter sends.
	Signal Signal
	// Protocol is HTTPProtobuf, HTTPJSON or GRPC.
	Protocol string
	// URL is where requests go: for OTLP/HTTP the full URL
	// (…/v1/traces), for gRPC the scheme (http: cleartext HTTP/2, https:
	// TLS) and the host.
	URL *url.URL
	// Headers are sent with every request (gRPC metadata for GRPC).
	Headers map[string]string
	// Timeout bounds one export, its retries included (10 s when zero).
	Timeout time.Duration
	// Gzip compresses each request.
	Gzip bool
	// TLS is the client's TLS configuration for https endpoints; nil is
	// the system's roots.
	TLS *tls.Config
	// Retry is the backoff on retryable answers.
	Retry Retry
}

// FromEnv reads the OTEL_EXPORTER_OTLP_* variables for signal, the
// signal's own (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT…) before the general
// ones: protocol, endpoint, headers, timeout, compression, insecure,
// certificate, client certificate and key. A value it cannot use is an
// error naming the variable.
func FromEnv(getenv func(string) string, signal Signal) (Config, error) {
	cfg := Config{Signal: signal, Headers: map[string]string{}}
	get := func(name string) (value, variable string) {
		v := "OTEL_EXPORTER_OTLP_" + string(signal) + "_" + name
		if s := strings.TrimSpace(getenv(v)); s != "" {
			return s, v
		}
		v = "OTEL_EXPORTER_OTLP_" + name
		return strings.TrimSpace(getenv(v)), v
	}
	cfg.Protocol, _ = get("PROTOCOL")
	if cfg.Protocol == "" {
		cfg.Protocol = HTTPProtobuf
	}
	if cfg.Protocol != HTTPProtobuf && cfg.Protocol != HTTPJSON && cfg.Protocol != GRPC {
		_, v := get("PROTOCOL")
		return cfg, fmt.Errorf("%s=%s: the OTLP protocols are http/protobuf, http/json and grpc", v, cfg.Protocol)
	}
	u, err := endpoint(getenv, signal, cfg.Protocol)
	if err != nil {
		return cfg, err
	}
	cfg.URL = u
	// The general headers first, the signal's over them.
	for _, v := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_" + string(signal) + "_HEADERS"} {
		if err := parseHeaders(getenv(v), cfg.Headers); err != nil {
			return cfg, fmt.Errorf("%s: %w", v, err)
		}
	}
	cfg.Timeout = 10 * time.Second
	if s, v := get("TIMEOUT"); s != "" {
		ms, err := strconv.ParseInt(s, 10, 64)
		if err != nil || ms <= 0 {
			return cfg, fmt.Errorf("%s=%s: want a positive number of milliseconds", v, s)
		}
		cfg.Timeout = time.Duration(ms) * time.Millisecond
	}
	switch s, v := get("COMPRESSION"); s {
	case "gzip":
		cfg.Gzip = true
	case "", "none":
	default:
		return cfg, fmt.Errorf("%s=%s: the compressions are gzip and none", v, s)
	}
	if cfg.URL.Scheme == "https" {
		if cfg.TLS, err = tlsFromEnv(get); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

// endpoint is where the signal's requests go. For OTLP/HTTP the signal's
// endpoint is the URL itself and the general one a base that gets
// /v1/traces or /v1/metrics; for gRPC either names the host, with http:
// for cleartext or, without a scheme, OTEL_EXPORTER_OTLP_INSECURE.
func endpoint(getenv func(string) string, signal Signal, protocol string) (*url.URL, error) {
	sigVar, genVar := "OTEL_EXPORTER_OTLP_"+string(signal)+"_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"
	raw, variable, own := strings.TrimSpace(getenv(sigVar)), sigVar, true
	if raw == "" {
		raw, variable, own = strings.TrimSpace(getenv(genVar)), genVar, false
	}
	if protocol == GRPC {
		if raw == "" {
			raw = "http://localhost:4317"
		}
		if !strings.Contains(raw, "://") {
			scheme := "https"
			for _, v := range []string{"OTEL_EXPORTER_OTLP_" + string(signal) + "_INSECURE", "OTEL_EXPORTER_OTLP_INSECURE"} {
				if s := strings.TrimSpace(getenv(v)); s != "" {
					if strings.EqualFold(s, "true") {
						scheme = "http"
					}
					break
				}
			}
			raw = scheme + "://" + raw
		}
		u, err := parseURL(variable, raw)
		if err != nil {
			return nil, err
		}
		return &url.URL{Scheme: u.Scheme, Host: u.Host, Path: signal.grpcPath()}, nil
	}
	if raw == "" {
		raw, own = "http://localhost:4318", false
	}
	u, err := parseURL(variable, raw)
	if err != nil {
		return nil, err
	}
	if !own {
		u.Path = strings.TrimSuffix(u.Path, "/") + signal.httpPath()
		u.RawPath = ""
	}
	return u, nil
}

func parseURL(variable, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s=%s: %w", variable, raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("%s=%s: want an http:// or https:// URL with a host", variable, raw)
	}
	return u, nil
}

// parseHeaders adds the "key=value,key2=value2" list s (values
// percent-encoded) to into.
func parseHeaders(s string, into map[string]string) error {
	for part := range strings.SplitSeq(s, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return fmt.Errorf("header %q is not key=value", strings.TrimSpace(part))
		}
		val, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("header %s: %w", k, err)
		}
		into[k] = val
	}
	return nil
}

// tlsFromEnv builds the TLS configuration of the certificate variables:
// CERTIFICATE (the roots that verify the receiver), CLIENT_CERTIFICATE and
// CLIENT_KEY (for mutual TLS). Nil when none is set.
func tlsFromEnv(get func(string) (string, string)) (*tls.Config, error) {
	ca, caVar := get("CERTIFICATE")
	cert, certVar := get("CLIENT_CERTIFICATE")
	key, keyVar := get("CLIENT_KEY")
	if ca == "" && cert == "" && key == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", caVar, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s=%s: no PEM certificate in it", caVar, ca)
		}
		cfg.RootCAs = pool
	}
	if cert != "" || key != "" {
		if cert == "" || key == "" {
			return nil, fmt.Errorf("%s and %s go together: set both or neither", certVar, keyVar)
		}
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("%s, %s: %w", certVar, keyVar, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}
