package agentwf_test

import (
	"net/http"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	oteltrace "go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/internal/remote/agentwf"
	"github.com/cadre-dev/cadre/internal/telemetry"
	"github.com/cadre-dev/cadre/llm/anthropic"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/tool/builtin"
)

// A remote agent whose spawn request carries the launcher's trace context
// joins that trace on a worker with telemetry on: its invoke_agent
// SERVER span is the child of the launcher's span, its chat and
// execute_tool spans are children of it, and its sub-agent's invoke_agent
// span hangs under it with the sub-agent's own calls below — one tree.
func TestRemoteAgentJoinsTheLaunchersTrace(t *testing.T) {
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	rec := tracetest.NewSpanRecorder()
	tp := trace.NewTracerProvider(trace.WithSpanProcessor(rec), trace.WithIDGenerator(telemetry.RemoteIDs{}))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	m, err := anthropic.New(anthropic.Config{APIKey: "test", BaseURL: srv.URL(), HTTPClient: &http.Client{Transport: tr}, RetryBase: 1, RetryMax: 2})
	if err != nil {
		t.Fatal(err)
	}
	var s testsuite.WorkflowTestSuite
	e := s.NewTestWorkflowEnvironment()
	acts := &agentwf.Activities{Model: m, Tools: builtin.Tools(builtin.Config{}),
		Tel: telemetry.New(telemetry.Settings{TracerProvider: tp, Provider: "anthropic"}, "", nil)}
	e.RegisterWorkflowWithOptions(agentwf.Agent, workflow.RegisterOptions{Name: agentwf.WorkflowName})
	e.RegisterActivityWithOptions(acts.ModelCall, activity.RegisterOptions{Name: agentwf.ModelActivity})
	e.RegisterActivityWithOptions(acts.ToolCall, activity.RegisterOptions{Name: agentwf.ToolActivity})
	e.RegisterActivityWithOptions(acts.RecordSpan, activity.RegisterOptions{Name: agentwf.SpanActivity})

	srv.Script("TRACED", llmtest.ToolUse("Bash", map[string]string{"command": "true"}),
		llmtest.ToolUse("Agent", map[string]any{"description": "nested", "prompt": "NESTED look"}), llmtest.Text("traced done"))
	srv.Script("NESTED", llmtest.Text("nested done"))
	const traceID, launcherSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	req := spawn(t, "TRACED run", 0, permission.ModeBypassPermissions)
	req.RootID = "session-1"
	req.Ceiling.Tools = append(req.Ceiling.Tools, "Agent")
	req.Trace = executor.TraceContext{TraceParent: "00-" + traceID + "-" + launcherSpan + "-01"}
	e.ExecuteWorkflow(agentwf.WorkflowName, agentwf.Input{Request: req})
	if res := result(t, e).Result; res.Status != task.Completed {
		t.Fatalf("result %+v", res)
	}
	spans := rec.Ended()
	byID := map[string]trace.ReadOnlySpan{}
	for _, sp := range spans {
		if sp.SpanContext().TraceID().String() != traceID {
			t.Fatalf("span %q is in trace %s, not the launcher's", sp.Name(), sp.SpanContext().TraceID())
		}
		byID[sp.SpanContext().SpanID().String()] = sp
	}
	parentName := func(sp trace.ReadOnlySpan) string {
		if p, ok := byID[sp.Parent().SpanID().String()]; ok {
			return p.Name()
		}
		return "launcher:" + sp.Parent().SpanID().String()
	}
	var got []string
	for _, sp := range spans {
		got = append(got, sp.Name()+" <- "+parentName(sp))
	}
	want := map[string]int{
		"invoke_agent general-purpose <- launcher:" + launcherSpan:     1, // the agent
		"chat claude-sonnet-4-5 <- invoke_agent general-purpose":       4, // its 3 and the nested one's 1
		"execute_tool Bash <- invoke_agent general-purpose":            1,
		"invoke_agent general-purpose <- invoke_agent general-purpose": 1, // the nested agent
	}
	count := map[string]int{}
	for _, g := range got {
		count[g]++
	}
	for k, n := range want {
		if count[k] != n {
			t.Fatalf("%d spans %q, want %d; spans: %q", count[k], k, n, got)
		}
	}
	if len(got) != 7 {
		t.Fatalf("%d spans, want 7: %q", len(got), got)
	}
	for _, sp := range spans {
		if sp.Parent().SpanID().String() == launcherSpan {
			if sp.SpanKind() != oteltrace.SpanKindServer || !sp.Parent().IsRemote() {
				t.Fatalf("the agent's span is %s, remote parent %v", sp.SpanKind(), sp.Parent().IsRemote())
			}
			attrs := map[string]string{}
			for _, kv := range sp.Attributes() {
				attrs[string(kv.Key)] = kv.Value.String()
			}
			if attrs[telemetry.AttrAgentID] != req.AgentID || attrs[telemetry.AttrConversationID] != "session-1" || attrs[telemetry.AttrStatus] != "completed" {
				t.Fatalf("the agent's span attributes %v", attrs)
			}
		}
	}
}

// A worker that cannot record the span (one without the span call) costs
// the span, never the agent: it ends as it would.
func TestRemoteAgentEndsWhenItsSpanCannotBeRecorded(t *testing.T) {
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	e := env(t, srv) // registers no SpanActivity
	srv.Script("NOSPAN", llmtest.Text("done without a span"))
	req := spawn(t, "NOSPAN go", 0, permission.ModeBypassPermissions)
	req.Trace = executor.TraceContext{TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
	e.ExecuteWorkflow(agentwf.WorkflowName, agentwf.Input{Request: req})
	if res := result(t, e).Result; res.Status != task.Completed || res.Text != "done without a span" {
		t.Fatalf("result %+v", res)
	}
}
