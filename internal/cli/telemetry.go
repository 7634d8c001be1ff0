package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/cadre-dev/cadre/internal/telemetry"
	"github.com/cadre-dev/cadre/internal/telemetry/otelsetup"
)

// flushTimeout bounds how long the exit waits for the last spans and
// metrics to reach the collector.
const flushTimeout = 5 * time.Second

// startTelemetry builds the exporters the OTEL_* variables ask for
// (nothing when they ask for none), keeps the providers on o for
// configure, and returns ctx joined to TRACEPARENT's trace and the
// function that flushes and stops the exporters at exit. A variable it
// cannot honour is said on stderr; the run goes on without that signal.
func startTelemetry(ctx context.Context, p procIO, o *options) (context.Context, func()) {
	set, shutdown, err := otelsetup.Setup(ctx, p.getenv, Version)
	if err != nil {
		fmt.Fprintf(p.stderr, "cadre: telemetry: %v\n", err)
	}
	o.telemetry = set
	ctx = telemetry.Extract(ctx, telemetry.TraceContext{TraceParent: p.getenv("TRACEPARENT"), TraceState: p.getenv("TRACESTATE")})
	return ctx, func() {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
		defer cancel()
		if err := shutdown(fctx); err != nil {
			fmt.Fprintf(p.stderr, "cadre: telemetry: flush at exit: %v\n", err)
		}
	}
}
