// Package otelsetup builds the OpenTelemetry SDK's providers and OTLP
// exporters the standard OTEL_* variables ask for, for the CLI: traces
// and metrics over OTLP/HTTP (http/protobuf, the default, or http/json)
// or gRPC, with the project's exporters (package otlpexport, which link
// no grpc-go). Nothing is built, and nothing runs, when telemetry is
// off; the endpoint, headers, timeout, compression and TLS settings come
// from the OTEL_EXPORTER_OTLP_* variables.
package otelsetup

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/cadre-dev/cadre/internal/telemetry"
	"github.com/cadre-dev/cadre/internal/telemetry/otlpexport"
)

// Enabled reports whether signal ("TRACES" or "METRICS") is to be
// exported: OTEL_<signal>_EXPORTER=otlp, or, with it unset, telemetry
// switched on (CLAUDE_CODE_ENABLE_TELEMETRY or CADRE_ENABLE_TELEMETRY) and
// an OTLP endpoint set. OTEL_SDK_DISABLED=true switches everything off.
// Another exporter than otlp or none is an error naming it.
func Enabled(getenv func(string) string, signal string) (bool, error) {
	if truthy(getenv("OTEL_SDK_DISABLED")) {
		return false, nil
	}
	switch exp := strings.TrimSpace(getenv("OTEL_" + signal + "_EXPORTER")); exp {
	case "otlp":
		return true, nil
	case "none":
		return false, nil
	case "":
		on := truthy(getenv("CLAUDE_CODE_ENABLE_TELEMETRY")) || truthy(getenv("CADRE_ENABLE_TELEMETRY"))
		return on && (getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_"+signal+"_ENDPOINT") != ""), nil
	default:
		return false, fmt.Errorf("OTEL_%s_EXPORTER=%s: cadre exports only otlp (or none)", signal, exp)
	}
}

// Setup returns the telemetry settings the variables ask for (zero when
// off) and the function that flushes and stops the exporters, to call
// before the process exits. A variable it cannot honour is an error; the
// caller runs without that signal and says why. traceOpts are added to
// the tracer provider's (a remote worker's id generator).
func Setup(ctx context.Context, getenv func(string) string, version string, traceOpts ...sdktrace.TracerProviderOption) (telemetry.Settings, func(context.Context) error, error) {
	var set telemetry.Settings
	var stops []func(context.Context) error
	shutdown := func(ctx context.Context) error {
		var errs []error
		for _, stop := range stops {
			errs = append(errs, stop(ctx))
		}
		return errors.Join(errs...)
	}
	traces, terr := Enabled(getenv, "TRACES")
	metrics, merr := Enabled(getenv, "METRICS")
	errs := []error{terr, merr}
	if !traces && !metrics {
		return set, shutdown, errors.Join(errs...)
	}
	res, err := resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", serviceName(getenv)), attribute.String("service.version", version)))
	if err != nil {
		errs = append(errs, fmt.Errorf("telemetry resource: %w", err))
	}
	if traces {
		exp, err := traceExporter(getenv)
		if err != nil {
			errs = append(errs, err)
		} else {
			tp := sdktrace.NewTracerProvider(append([]sdktrace.TracerProviderOption{sdktrace.WithBatcher(exp), sdktrace.WithResource(res)}, traceOpts...)...)
			set.TracerProvider = tp
			stops = append(stops, tp.Shutdown)
		}
	}
	if metrics {
		if exp, err := metricExporter(getenv); err != nil {
			errs = append(errs, err)
		} else {
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)), sdkmetric.WithResource(res))
			set.MeterProvider = mp
			stops = append(stops, mp.Shutdown)
		}
	}
	set.LogPrompts = truthy(getenv("OTEL_LOG_USER_PROMPTS"))
	set.LogToolContent = truthy(getenv("OTEL_LOG_TOOL_CONTENT")) || truthy(getenv("OTEL_LOG_TOOL_DETAILS"))
	return set, shutdown, errors.Join(errs...)
}

// traceExporter is the OTLP span exporter the variables ask for.
func traceExporter(getenv func(string) string) (sdktrace.SpanExporter, error) {
	cfg, err := otlpexport.FromEnv(getenv, otlpexport.Traces)
	if err != nil {
		return nil, fmt.Errorf("OTLP span exporter: %w", err)
	}
	exp, err := otlpexport.NewSpanExporter(cfg)
	if err != nil {
		return nil, fmt.Errorf("OTLP span exporter: %w", err)
	}
	return exp, nil
}

// metricExporter is the OTLP metric exporter the variables ask for.
func metricExporter(getenv func(string) string) (sdkmetric.Exporter, error) {
	cfg, err := otlpexport.FromEnv(getenv, otlpexport.Metrics)
	if err != nil {
		return nil, fmt.Errorf("OTLP metric exporter: %w", err)
	}
	sel, err := otlpexport.TemporalityFromEnv(getenv)
	if err != nil {
		return nil, fmt.Errorf("OTLP metric exporter: %w", err)
	}
	exp, err := otlpexport.NewMetricExporter(cfg, sel)
	if err != nil {
		return nil, fmt.Errorf("OTLP metric exporter: %w", err)
	}
	return exp, nil
}

// serviceName is OTEL_SERVICE_NAME, else "cadre".
func serviceName(getenv func(string) string) string {
	if s := strings.TrimSpace(getenv("OTEL_SERVICE_NAME")); s != "" {
		return s
	}
	return "cadre"
}

// truthy reads a boolean variable: 1, true, yes or on.
func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}
