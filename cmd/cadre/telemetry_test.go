package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/telemetry/otlptest"
	"github.com/cadre-dev/cadre/llm/llmtest"
)

// TestHeadlessExportsTheTree runs the real binary's `cadre -p` with
// the OTEL_* variables pointing at an OTLP receiver (HTTP with protobuf
// or JSON bodies, or gRPC served by grpc-go when the protocol says so) and TRACEPARENT set: the spans of the main agent and its child reach the receiver
// before the process exits (the batch is flushed at exit: its schedule is
// seconds, the run is shorter), all in TRACEPARENT's trace, the child's
// under the Agent call's span. With CLAUDE_CODE_ENABLE_TELEMETRY and an
// endpoint alone it exports spans and metrics; with neither it sends
// nothing. The switch set in the user's settings file's env block, not in
// the process's environment, switches it on the same way.
func TestHeadlessExportsTheTree(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the cadre binary")
	}
	bin := buildCadre(t)
	const (
		traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
		outerID = "00f067aa0ba902b7"
	)
	for _, tc := range []struct {
		name   string
		env    []string
		export bool
		grpc   bool
		// metrics: the metrics reach the receiver too.
		metrics bool
		// settingsEnv is the env block of the user's settings file.
		settingsEnv map[string]string
	}{
		{"otlp over grpc", []string{"OTEL_TRACES_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc", "OTEL_SERVICE_NAME=cadre-test"}, true, true, false, nil},
		{"otlp over grpc, metrics too, gzip", []string{"OTEL_TRACES_EXPORTER=otlp", "OTEL_METRICS_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_PROTOCOL=grpc",
			"OTEL_EXPORTER_OTLP_COMPRESSION=gzip", "OTEL_SERVICE_NAME=cadre-test"}, true, true, true, nil},
		{"otlp http/json, metrics too", []string{"OTEL_TRACES_EXPORTER=otlp", "OTEL_METRICS_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_PROTOCOL=http/json",
			"OTEL_SERVICE_NAME=cadre-test"}, true, false, true, nil},
		{"otel variables", []string{"OTEL_TRACES_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf", "OTEL_SERVICE_NAME=cadre-test"}, true, false, false, nil},
		{"claude code switch", []string{"CLAUDE_CODE_ENABLE_TELEMETRY=1", "OTEL_SERVICE_NAME=cadre-test"}, true, false, true, nil},
		{"off", []string{"OTEL_SERVICE_NAME=cadre-test"}, false, false, false, nil},
		{"settings env", nil, true, false, true, map[string]string{"CLAUDE_CODE_ENABLE_TELEMETRY": "1", "OTEL_SERVICE_NAME": "cadre-test"}},
		{"unknown exporter", []string{"OTEL_TRACES_EXPORTER=zipkin"}, false, false, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rcv, endpoint := otlptest.NewReceiver(), ""
			if tc.grpc {
				var err error
				if rcv, err = otlptest.NewGRPCReceiver(); err != nil {
					t.Fatal(err)
				}
				endpoint = rcv.GRPCEndpoint()
			}
			defer rcv.Close()
			endpoint = cmp.Or(endpoint, rcv.URL())
			srv := llmtest.NewServer()
			defer srv.Close()
			srv.Script("HEADLESS", llmtest.ToolUse("Agent", map[string]any{"description": "child", "prompt": "KID: say hi", "subagent_type": "general-purpose"}),
				llmtest.Text("parent done"))
			srv.Script("KID", llmtest.Text("kid done"))
			home, work := t.TempDir(), t.TempDir()
			if tc.settingsEnv != nil {
				raw, err := json.Marshal(map[string]any{"env": tc.settingsEnv})
				if err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(filepath.Join(home, ".config", "cadre"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(home, ".config", "cadre", "settings.json"), raw, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			env := append([]string{
				"HOME=" + home, "PATH=" + os.Getenv("PATH"), "XDG_STATE_HOME=" + filepath.Join(home, "state"),
				"ANTHROPIC_BASE_URL=" + srv.URL(), "ANTHROPIC_API_KEY=sk-ant-test",
				"OTEL_EXPORTER_OTLP_ENDPOINT=" + endpoint, "TRACEPARENT=00-" + traceID + "-" + outerID + "-01",
			}, tc.env...)
			cmd := exec.Command(bin, "-p", "HEADLESS: start a child", "--model", "claude-sonnet-4-5", "--dangerously-skip-permissions")
			cmd.Dir, cmd.Env = work, env
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("cadre -p: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
			}
			if !strings.HasPrefix(stdout.String(), "parent done") {
				t.Fatalf("stdout %q\nstderr: %s", stdout.String(), stderr.String())
			}
			spans, requests, errs := rcv.Spans()
			if len(errs) > 0 {
				t.Fatalf("receiver errors: %v", errs)
			}
			if !tc.export {
				if requests != 0 {
					t.Fatalf("telemetry off, yet %d export requests", requests)
				}
				// An exporter cadre does not have is named on stderr;
				// the run goes on without it.
				if warned := strings.Contains(stderr.String(), "OTEL_TRACES_EXPORTER=zipkin"); warned != (tc.name == "unknown exporter") {
					t.Errorf("stderr %q", stderr.String())
				}
				return
			}
			byID := map[string]otlptest.Span{}
			var main, kid otlptest.Span
			for _, s := range spans {
				byID[s.SpanID] = s
				if s.TraceID != traceID {
					t.Errorf("span %s in trace %s, not TRACEPARENT's", s.Name, s.TraceID)
				}
				if s.Service != "cadre-test" || s.Attrs["gen_ai.conversation.id"] == "" {
					t.Errorf("span %s: service %q attrs %v", s.Name, s.Service, s.Attrs)
				}
				switch {
				case s.Name == "invoke_agent main":
					main = s
				case s.Name == "invoke_agent general-purpose":
					kid = s
				}
			}
			if main.SpanID == "" || kid.SpanID == "" {
				t.Fatalf("no invoke_agent spans for main and the child among %d spans (stderr: %s)", len(spans), stderr.String())
			}
			if main.ParentID != outerID {
				t.Errorf("main agent's parent %q, want TRACEPARENT's span %s", main.ParentID, outerID)
			}
			call := byID[kid.ParentID]
			if call.Name != "execute_tool Agent" || call.ParentID != main.SpanID {
				t.Errorf("child's parent %q (under %q), want execute_tool Agent under the main agent", call.Name, call.ParentID)
			}
			if main.Attrs["gen_ai.provider.name"] != "anthropic" || kid.Attrs["cadre.status"] != "completed" {
				t.Errorf("main %v\nchild %v", main.Attrs, kid.Attrs)
			}
			chats := 0
			for _, s := range spans {
				if s.Name == "chat claude-sonnet-4-5" {
					chats++
				}
			}
			if chats != 3 {
				t.Errorf("%d chat spans, want 3 (two of the main agent, one of the child)", chats)
			}
			if !tc.metrics {
				return
			}
			// Metrics are on too (OTEL_METRICS_EXPORTER, or with it unset
			// the switch and an endpoint), flushed at exit like the spans.
			sums := rcv.Sums()
			if sums["cadre.token.usage"] <= 0 || sums["cadre.agent.count"] != 2 || sums["cadre.tool.decision"] != 1 || sums["cadre.cost.usage"] <= 0 {
				t.Errorf("metrics %v: want tokens and cost, 2 agents (main and child), 1 tool decision", sums)
			}
		})
	}
}
