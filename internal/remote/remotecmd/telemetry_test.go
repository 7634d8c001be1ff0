package remotecmd_test

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/cadre-dev/cadre/internal/telemetry/otlptest"
	"github.com/cadre-dev/cadre/llm/llmtest"
)

// The launcher and its worker each export over OTLP/HTTP (their own
// OTEL_* variables) to one receiver, and the spans make one tree: the
// launcher's invoke_agent CLIENT span of the remote agent is the parent
// of the worker's invoke_agent SERVER span, under which are the agent's
// chat and execute_tool spans from the worker.
func TestRemoteAgentSpansJoinTheLaunchersTrace(t *testing.T) {
	dial(t) // skips without a server
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	rcv := otlptest.NewReceiver()
	t.Cleanup(rcv.Close)
	otel := func(service string) []string {
		return []string{"OTEL_TRACES_EXPORTER=otlp", "OTEL_METRICS_EXPORTER=none", "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
			"OTEL_EXPORTER_OTLP_ENDPOINT=" + rcv.URL(), "OTEL_SERVICE_NAME=" + service}
	}
	queue := unique("traced")
	w := startWorkerEnv(t, bin, queue, srv, "worker-key", otel("worker"))
	srv.Script("TRACED-FAR", bash("echo traced"), llmtest.Text("TRACED-FAR is done"))
	srv.ScriptFunc("LAUNCH", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.ToolUse("Agent", map[string]any{"description": "far", "prompt": "TRACED-FAR look"})
		}
		return llmtest.Text("LAUNCHER-ANSWER")
	})
	home := launcherHome(t, queue)
	cmd := exec.Command(cadreBin, "-p", "--remote", "LAUNCH a traced agent")
	cmd.Dir = t.TempDir()
	cmd.Env = append(append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME=", "ANTHROPIC_BASE_URL="+srv.URL(), "ANTHROPIC_API_KEY=launcher-key",
		"CADRE_REMOTE_BIN="+bin), otel("launcher")...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("cadre -p --remote: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	// The worker flushes its spans when it stops.
	_ = syscall.Kill(w.cmd.Process.Pid, syscall.SIGTERM)
	<-w.done
	spans, _, errs := rcv.Spans()
	if len(errs) > 0 {
		t.Fatalf("the receiver could not read an export: %v", errs)
	}
	var client, server *otlptest.Span
	for i, sp := range spans {
		if sp.Name == "invoke_agent general-purpose" && sp.Kind == tracepb.Span_SPAN_KIND_CLIENT && sp.Service == "launcher" {
			client = &spans[i]
		}
		if sp.Name == "invoke_agent general-purpose" && sp.Kind == tracepb.Span_SPAN_KIND_SERVER && sp.Service == "worker" {
			server = &spans[i]
		}
	}
	if client == nil || server == nil {
		t.Fatalf("no CLIENT span from the launcher or SERVER span from the worker: %+v\nworker: %s", spans, w.output())
	}
	if server.TraceID != client.TraceID || server.ParentID != client.SpanID {
		t.Fatalf("the worker's span (trace %s, parent %s) is not under the launcher's (trace %s, span %s)", server.TraceID, server.ParentID, client.TraceID, client.SpanID)
	}
	var chats, tools int
	for _, sp := range spans {
		if sp.Service != "worker" || sp.ParentID != server.SpanID || sp.TraceID != server.TraceID {
			continue
		}
		switch {
		case strings.HasPrefix(sp.Name, "chat "):
			chats++
		case sp.Name == "execute_tool Bash":
			tools++
		}
	}
	if chats != 2 || tools != 1 {
		t.Fatalf("under the worker's agent span: %d chat and %d execute_tool spans, want 2 and 1: %+v", chats, tools, spans)
	}
}
