package cadre_test

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/telemetry/otlpexport"
	"github.com/cadre-dev/cadre/internal/telemetry/otlptest"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/anthropic"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/run"
)

// treeScript answers every agent of the telemetry scenario: the main
// agent (TREE-MAIN) starts a sync child, then a background child, then a
// fork, and ends; the sync child starts a nested child, which runs one
// Glob before it answers.
func treeScript(r *llmtest.Request) llmtest.Turn {
	first, last := r.FirstUserText(), r.LastUserText()
	turns := 0
	for _, m := range r.Messages {
		if m.Role == llm.RoleAssistant {
			turns++
		}
	}
	agent := func(in map[string]any) llmtest.Turn { return llmtest.ToolUse(cadre.AgentToolName, in) }
	switch {
	case strings.Contains(last, "from Agent call") && strings.Contains(last, "FORK-TASK"):
		return llmtest.Text("fork done")
	case strings.Contains(first, "NESTED-CHILD"):
		if turns == 0 {
			return llmtest.ToolUse("Glob", map[string]any{"pattern": "*.txt"})
		}
		return llmtest.Text("nested done")
	case strings.Contains(first, "BG-CHILD"):
		return llmtest.Text("bg done")
	case strings.Contains(first, "SYNC-CHILD"):
		if turns == 0 {
			return agent(map[string]any{"description": "nested", "prompt": "NESTED-CHILD: list the text files", "subagent_type": "general-purpose"})
		}
		return llmtest.Text("sync done")
	case strings.Contains(first, "TREE-MAIN"):
		switch turns {
		case 0:
			return agent(map[string]any{"description": "sync", "prompt": "SYNC-CHILD: look around", "subagent_type": "general-purpose"})
		case 1:
			return agent(map[string]any{"description": "bg", "prompt": "BG-CHILD: work alone", "subagent_type": "general-purpose", "run_in_background": true})
		case 2:
			return agent(map[string]any{"description": "fork", "prompt": "FORK-TASK: check one thing"})
		}
		return llmtest.Text("main done")
	}
	return llmtest.Text("unexpected request")
}

// runTree runs the scenario with tel and waits for every background
// agent's notification to be handled; it returns the session id.
func runTree(t *testing.T, ctx context.Context, tel cadre.Telemetry) string {
	t.Helper()
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	srv.ScriptFunc("", treeScript)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	m, err := anthropic.New(anthropic.Config{APIKey: "test", BaseURL: srv.URL(), HTTPClient: &http.Client{Transport: tr}, RetryBase: 1, RetryMax: 2})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	rt, err := cadre.New(cadre.Config{Model: m, ModelID: "claude-sonnet-4-5", Cwd: dir, StateDir: t.TempDir(), Home: t.TempDir(),
		Permissions: cadre.AllowAll(), ForkSubagent: true, Telemetry: tel})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	drain := func(seq iter.Seq2[run.Event, error]) {
		for _, err := range seq {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	drain(rt.Run(ctx, "TREE-MAIN: build the tree"))
	for rt.RunningTasks() > 0 || rt.PendingNotifications() {
		drain(rt.RunNotifications(ctx))
	}
	srv.Check(t)
	return rt.SessionID()
}

// node is a span as the tree test reads it, from the SDK or from OTLP.
type node struct {
	name             string
	kind             trace.SpanKind
	traceID          trace.TraceID
	spanID, parentID trace.SpanID
	links            []trace.SpanID
	attrs            map[string]string
}

func nodesOf(spans []sdktrace.ReadOnlySpan) []node {
	var out []node
	for _, s := range spans {
		n := node{name: s.Name(), kind: s.SpanKind(), traceID: s.SpanContext().TraceID(), spanID: s.SpanContext().SpanID(),
			parentID: s.Parent().SpanID(), attrs: map[string]string{}}
		for _, l := range s.Links() {
			n.links = append(n.links, l.SpanContext.SpanID())
		}
		for _, kv := range s.Attributes() {
			n.attrs[string(kv.Key)] = kv.Value.String()
		}
		out = append(out, n)
	}
	return out
}

// checkTree asserts the scenario's spans form one tree: every agent's
// invoke_agent under the right execute_tool Agent span, every chat and
// execute_tool span under its agent's invoke_agent, the background
// child's and the fork's ends linked from a later chat of the main agent.
func checkTree(t *testing.T, nodes []node, session string, outer trace.SpanContext) {
	t.Helper()
	byID := map[trace.SpanID]node{}
	for _, n := range nodes {
		byID[n.spanID] = n
	}
	agents := map[string]node{} // by the Agent call's description
	var mains []node            // one per Run (the first run's, and the runs on notifications)
	for _, n := range nodes {
		if n.traceID != nodes[0].traceID {
			t.Errorf("span %s is in trace %s, not %s: more than one tree", n.name, n.traceID, nodes[0].traceID)
		}
		if outer.IsValid() && n.traceID != outer.TraceID() {
			t.Errorf("span %s did not join the outer trace %s", n.name, outer.TraceID())
		}
		if n.attrs["gen_ai.conversation.id"] != session {
			t.Errorf("span %s: conversation id %q, want the session %q", n.name, n.attrs["gen_ai.conversation.id"], session)
		}
		if !strings.HasPrefix(n.name, "invoke_agent ") {
			continue
		}
		if n.attrs["gen_ai.operation.name"] != "invoke_agent" || n.attrs["cadre.status"] != "completed" {
			t.Errorf("agent span %s attrs %v", n.name, n.attrs)
		}
		switch {
		case n.attrs["gen_ai.agent.id"] == "main":
			if len(mains) == 0 || n.attrs["gen_ai.input.messages"] != "" {
				agents["main"] = n // the first run's: the only one with a prompt
			}
			mains = append(mains, n)
		case n.attrs["gen_ai.agent.description"] != "":
			agents[n.attrs["gen_ai.agent.description"]] = n
		}
	}
	for _, tag := range []string{"main", "sync", "bg", "fork", "nested"} {
		if _, ok := agents[tag]; !ok {
			t.Fatalf("no invoke_agent span for %s among %d spans", tag, len(nodes))
		}
	}
	if len(mains) < 2 {
		t.Errorf("%d invoke_agent spans of the main agent, want one per run (at least the first and one on notifications)", len(mains))
	}
	for _, main := range mains {
		if main.spanID != agents["main"].spanID && !outer.IsValid() {
			if main.parentID != agents["main"].spanID {
				t.Errorf("a run on notifications is under %s, not the first run's span", main.parentID)
			}
			continue
		}
		if outer.IsValid() {
			if main.parentID != outer.SpanID() {
				t.Errorf("main agent's parent %s, want the outer span %s", main.parentID, outer.SpanID())
			}
		} else if main.parentID.IsValid() {
			t.Errorf("main agent has parent %s, want a root", main.parentID)
		}
	}
	// Each child under the execute_tool Agent span of its parent's agent.
	for child, parent := range map[string]string{"sync": "main", "bg": "main", "fork": "main", "nested": "sync"} {
		c := agents[child]
		call, ok := byID[c.parentID]
		if !ok || call.name != "execute_tool Agent" {
			t.Errorf("%s's parent is %q, want execute_tool Agent", child, call.name)
			continue
		}
		if p, ok := byID[call.parentID]; !ok || p.attrs["gen_ai.agent.id"] != agents[parent].attrs["gen_ai.agent.id"] || !strings.HasPrefix(p.name, "invoke_agent ") {
			t.Errorf("%s's Agent call is not under %s's invoke_agent", child, parent)
		}
		if call.attrs["gen_ai.tool.name"] != "Agent" || call.attrs["gen_ai.tool.call.id"] == "" || call.attrs["cadre.tool.decision"] != "accept" {
			t.Errorf("%s's Agent call attrs %v", child, call.attrs)
		}
		if c.kind != trace.SpanKindInternal || c.attrs["gen_ai.agent.name"] == "" || c.attrs["cadre.parent.agent.id"] == "" {
			t.Errorf("%s: kind %v attrs %v", child, c.kind, c.attrs)
		}
	}
	for tag, want := range map[string]map[string]string{
		"sync":   {"cadre.depth": "1", "cadre.background": "false", "gen_ai.agent.name": "general-purpose"},
		"nested": {"cadre.depth": "2", "cadre.background": "false", "gen_ai.agent.name": "general-purpose"},
		"bg":     {"cadre.depth": "1", "cadre.background": "true"},
		"fork":   {"cadre.depth": "1", "cadre.background": "true", "cadre.fork": "true"},
		"main":   {"cadre.depth": "0", "gen_ai.agent.name": "main"},
	} {
		for k, v := range want {
			if got := agents[tag].attrs[k]; got != v {
				t.Errorf("%s: %s = %q, want %q", tag, k, got, v)
			}
		}
	}
	// chat and execute_tool spans under their agent; the nested child's
	// Glob among them.
	agentOf := map[trace.SpanID]string{}
	for tag, n := range agents {
		agentOf[n.spanID] = tag
	}
	for _, n := range mains {
		agentOf[n.spanID] = "main"
	}
	chats := map[string]int{}
	glob := false
	var linked []trace.SpanID
	for _, n := range nodes {
		op := n.attrs["gen_ai.operation.name"]
		if op != "chat" && op != "execute_tool" {
			continue
		}
		tag, ok := agentOf[n.parentID]
		if !ok {
			t.Errorf("%s is not under an invoke_agent span", n.name)
			continue
		}
		if op == "chat" {
			chats[tag]++
			if n.name != "chat claude-sonnet-4-5" || n.kind != trace.SpanKindClient || n.attrs["gen_ai.usage.input_tokens"] == "" ||
				n.attrs["gen_ai.usage.output_tokens"] == "" || n.attrs["gen_ai.usage.cache_read.input_tokens"] == "" {
				t.Errorf("chat span %s kind %v attrs %v", n.name, n.kind, n.attrs)
			}
			if tag == "main" {
				linked = append(linked, n.links...)
			}
		}
		if n.name == "execute_tool Glob" && tag == "nested" {
			glob = true
		}
	}
	for tag, want := range map[string]int{"main": 5, "sync": 2, "nested": 2, "bg": 1, "fork": 1} {
		if chats[tag] < want {
			t.Errorf("%s made %d chat spans, want at least %d", tag, chats[tag], want)
		}
	}
	if !glob {
		t.Error("no execute_tool Glob under the nested child")
	}
	for _, tag := range []string{"bg", "fork"} {
		found := false
		for _, l := range linked {
			found = found || l == agents[tag].spanID
		}
		if !found {
			t.Errorf("no chat of the main agent links back to the %s child's span (links %v)", tag, linked)
		}
	}
}

// TestTelemetryAgentTree: the spans of a run with a sync child (which
// starts a nested child), a background child and a fork form one tree,
// read from the SDK's in-memory recorder.
func TestTelemetryAgentTree(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	session := runTree(t, context.Background(), cadre.Telemetry{Provider: "anthropic", TracerProvider: tp})
	nodes := nodesOf(rec.Ended())
	checkTree(t, nodes, session, trace.SpanContext{})
	for _, n := range nodes {
		if n.attrs["gen_ai.provider.name"] != "anthropic" && n.attrs["gen_ai.operation.name"] != "execute_tool" {
			t.Errorf("%s: provider %q", n.name, n.attrs["gen_ai.provider.name"])
		}
		if _, ok := n.attrs["gen_ai.input.messages"]; ok {
			t.Errorf("%s records the prompt though LogPrompts is off", n.name)
		}
	}
}

// TestTelemetryJoinsCallersSpan: a Run whose context carries a span (an
// embedder's, or TRACEPARENT's through the CLI) puts the whole tree under
// it; with LogPrompts the prompts are on the agents' spans.
func TestTelemetryJoinsCallersSpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	ctx, outer := tp.Tracer("embedder").Start(context.Background(), "outer")
	session := runTree(t, ctx, cadre.Telemetry{TracerProvider: tp, LogPrompts: true})
	outer.End()
	var nodes []node
	for _, n := range nodesOf(rec.Ended()) {
		if n.name != "outer" {
			nodes = append(nodes, n)
		}
	}
	checkTree(t, nodes, session, outer.SpanContext())
	prompts := 0
	for _, n := range nodes {
		if strings.Contains(n.attrs["gen_ai.input.messages"], "NESTED-CHILD") {
			prompts++
		}
	}
	if prompts != 1 {
		t.Errorf("%d spans carry the nested child's prompt, want 1", prompts)
	}
}

// TestTelemetryOverOTLPHTTP: the same run exported over OTLP/HTTP to a
// receiver that decodes the protobuf requests gives the same tree as the
// in-memory recorder beside the exporter: the same spans, parents, links
// and attributes.
func TestTelemetryOverOTLPHTTP(t *testing.T) {
	rcv := otlptest.NewReceiver()
	defer rcv.Close()
	ctx := context.Background()
	u, err := url.Parse(rcv.URL() + "/v1/traces")
	if err != nil {
		t.Fatal(err)
	}
	exp, err := otlpexport.NewSpanExporter(otlpexport.Config{Protocol: otlpexport.HTTPProtobuf, URL: u})
	if err != nil {
		t.Fatal(err)
	}
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithBatcher(exp))
	session := runTree(t, ctx, cadre.Telemetry{Provider: "anthropic", TracerProvider: tp})
	if err := tp.Shutdown(ctx); err != nil { // flushes the batch
		t.Fatal(err)
	}
	got, requests, errs := rcv.Spans()
	if len(errs) > 0 || requests == 0 {
		t.Fatalf("%d requests, errors %v", requests, errs)
	}
	var nodes []node
	for _, s := range got {
		n := node{name: s.Name, kind: trace.SpanKind(s.Kind), attrs: s.Attrs}
		n.traceID, _ = trace.TraceIDFromHex(s.TraceID)
		n.spanID, _ = trace.SpanIDFromHex(s.SpanID)
		if s.ParentID != "" {
			n.parentID, _ = trace.SpanIDFromHex(s.ParentID)
		}
		for _, l := range s.Links {
			id, _ := trace.SpanIDFromHex(l)
			n.links = append(n.links, id)
		}
		nodes = append(nodes, n)
	}
	checkTree(t, nodes, session, trace.SpanContext{})
	want := map[trace.SpanID]node{}
	for _, n := range nodesOf(rec.Ended()) {
		want[n.spanID] = n
	}
	if len(nodes) != len(want) {
		t.Errorf("received %d spans, the recorder has %d", len(nodes), len(want))
	}
	for _, n := range nodes {
		w, ok := want[n.spanID]
		switch {
		case !ok:
			t.Errorf("received span %s %s the recorder does not have", n.name, n.spanID)
		case w.name != n.name || w.kind != n.kind || w.parentID != n.parentID || w.traceID != n.traceID || !slices.Equal(w.links, n.links):
			t.Errorf("span %s: received %+v, recorded %+v", n.spanID, n, w)
		default:
			for k, v := range w.attrs {
				if k != "gen_ai.response.finish_reasons" && n.attrs[k] != v {
					t.Errorf("span %s: %s received %q, recorded %q", n.name, k, n.attrs[k], v)
				}
			}
		}
	}
}
