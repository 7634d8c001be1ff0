package otelsetup

import (
	"context"
	"strings"
	"testing"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// TestEnabled: which variables switch a signal on.
func TestEnabled(t *testing.T) {
	for _, c := range []struct {
		name    string
		getenv  func(string) string
		want    bool
		wantErr string
	}{
		{"nothing set", env(), false, ""},
		{"exporter otlp", env("OTEL_TRACES_EXPORTER", "otlp"), true, ""},
		{"exporter none", env("OTEL_TRACES_EXPORTER", "none", "CLAUDE_CODE_ENABLE_TELEMETRY", "1", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://x"), false, ""},
		{"switch and endpoint", env("CLAUDE_CODE_ENABLE_TELEMETRY", "1", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://x"), true, ""},
		{"cadre switch and signal endpoint", env("CADRE_ENABLE_TELEMETRY", "true", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://x"), true, ""},
		{"switch without endpoint", env("CLAUDE_CODE_ENABLE_TELEMETRY", "1"), false, ""},
		{"endpoint without switch", env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://x"), false, ""},
		{"switch off", env("CLAUDE_CODE_ENABLE_TELEMETRY", "0", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://x"), false, ""},
		{"sdk disabled", env("OTEL_SDK_DISABLED", "true", "OTEL_TRACES_EXPORTER", "otlp"), false, ""},
		{"unknown exporter", env("OTEL_TRACES_EXPORTER", "zipkin"), false, "OTEL_TRACES_EXPORTER=zipkin"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Enabled(c.getenv, "TRACES")
			if got != c.want {
				t.Errorf("Enabled = %v, want %v", got, c.want)
			}
			if (err != nil) != (c.wantErr != "") || err != nil && !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("err %v, want one naming %q", err, c.wantErr)
			}
		})
	}
}

// TestSetup: off builds nothing; a protocol cadre does not speak is an
// error naming the variable, and that signal stays off; the content
// switches are read.
func TestSetup(t *testing.T) {
	ctx := context.Background()
	set, stop, err := Setup(ctx, env(), "test")
	if err != nil || set.TracerProvider != nil || set.MeterProvider != nil {
		t.Fatalf("off: %+v, %v", set, err)
	}
	if err := stop(ctx); err != nil {
		t.Fatal(err)
	}
	set, stop, err = Setup(ctx, env("OTEL_TRACES_EXPORTER", "otlp", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "thrift",
		"OTEL_METRICS_EXPORTER", "otlp", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/xml", "OTEL_LOG_USER_PROMPTS", "1", "OTEL_LOG_TOOL_DETAILS", "1"), "test")
	if err == nil || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=thrift") || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL=http/xml") {
		t.Errorf("err %v, want both protocols named", err)
	}
	if set.TracerProvider != nil || set.MeterProvider != nil || !set.LogPrompts || !set.LogToolContent {
		t.Errorf("settings %+v", set)
	}
	if err := stop(ctx); err != nil {
		t.Fatal(err)
	}
	// Every OTLP protocol builds both providers (http/json and metrics
	// over gRPC too, since the exporters are the project's own).
	for _, p := range []string{"http/protobuf", "http/json", "grpc"} {
		set, stop, err = Setup(ctx, env("OTEL_TRACES_EXPORTER", "otlp", "OTEL_METRICS_EXPORTER", "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL", p,
			"OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1"), "test")
		if err != nil || set.TracerProvider == nil || set.MeterProvider == nil {
			t.Errorf("%s: %+v, %v", p, set, err)
		}
		_ = stop(ctx) // nothing was recorded: nothing to send
	}
}
