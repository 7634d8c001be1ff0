package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/cadre-dev/cadre/config"
	"github.com/cadre-dev/cadre/internal/telemetry"
	"github.com/cadre-dev/cadre/internal/telemetry/otelsetup"
)

// flushTimeout bounds how long the exit waits for the last spans and
// metrics to reach the collector.
const flushTimeout = 5 * time.Second

// startTelemetry builds the exporters the OTEL_* variables ask for
// (nothing when they ask for none) — the process's own, under those the
// settings files' env blocks set, as Claude Code reads them —, keeps the
// providers on o for configure, and returns ctx joined to TRACEPARENT's
// trace and the function that flushes and stops the exporters at exit. A
// variable it cannot honour is said on stderr; the run goes on without
// that signal.
func startTelemetry(ctx context.Context, p procIO, o *options) (context.Context, func()) {
	getenv := p.getenv
	// Settings that cannot be read are configure's to report.
	if env, err := config.Env("", config.Options{Getenv: p.getenv, SettingsFile: o.settingsFile, SettingsJSON: o.settingsJSON,
		TrustProject: o.trustProject, SettingSources: o.sdk.sources(io.Discard)}); err == nil {
		getenv = config.Overlay(p.getenv, env)
	}
	set, shutdown, err := otelsetup.Setup(ctx, getenv, Version)
	if err != nil {
		fmt.Fprintf(p.stderr, "cadre: telemetry: %v\n", err)
	}
	o.telemetry = set
	ctx = telemetry.Extract(ctx, telemetry.TraceContext{TraceParent: getenv("TRACEPARENT"), TraceState: getenv("TRACESTATE")})
	return ctx, func() {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
		defer cancel()
		if err := shutdown(fctx); err != nil {
			fmt.Fprintf(p.stderr, "cadre: telemetry: flush at exit: %v\n", err)
		}
	}
}
