package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/mcp"
	"github.com/cadre-dev/cadre/run"
)

// BenchmarkMCPLaunchToFirstRequest measures a run from New to its result
// (one model request), and New to the model server receiving that request
// (first-request-ns/op), with 0 and 3 stdio MCP servers configured
// (processes that never answer, go-sdk test binaries, or the real npm
// servers under Node.js): servers connect in the background, so nothing
// waits for them; what grows is the CPU their start-up takes.
func BenchmarkMCPLaunchToFirstRequest(b *testing.B) {
	for _, kind := range []string{"servers=0", "servers=3-silent", "servers=3", "servers=3-npm"} {
		b.Run(kind, func(b *testing.B) {
			t := &testing.T{}
			h := &harness{t: t, srv: llmtest.NewServer(), dir: b.TempDir()}
			b.Cleanup(h.srv.Close)
			var servers []mcp.Server
			switch kind {
			case "servers=3-silent":
				// Processes that start and never answer: the cost of
				// launching three servers without their own start-up work.
				for i := range 3 {
					servers = append(servers, mcp.Server{Name: fmt.Sprintf("s%d", i), Transport: mcp.Stdio, Command: "sleep", Args: []string{"600"}})
				}
			case "servers=3":
				for i := range 3 {
					servers = append(servers, testServer(t, fmt.Sprintf("s%d", i), nil))
				}
			case "servers=3-npm":
				for _, bin := range []string{"mcp-server-everything", "mcp-server-memory", "mcp-server-filesystem"} {
					p, err := filepath.Abs(filepath.Join("..", "..", ".ci", "mcp-servers", "node_modules", ".bin", bin))
					if err == nil {
						_, err = os.Stat(p)
					}
					if err != nil {
						b.Fatalf("%s is not installed (%v): run .ci/run", bin, err)
					}
					sv := mcp.Server{Name: bin, Transport: mcp.Stdio, Command: p}
					if bin == "mcp-server-filesystem" {
						sv.Args = []string{h.dir} // the directory it serves
					}
					servers = append(servers, sv)
				}
			}
			var toFirst time.Duration
			for b.Loop() {
				h.srv.Script("MAIN", llmtest.Text("ok"))
				cfg := h.mcpConfig(servers...)
				cfg.NoTranscript, cfg.StateDir = true, ""
				began := time.Now()
				rt, err := New(cfg)
				if err != nil {
					b.Fatal(err)
				}
				if _, res, err := runAll(t, context.Background(), rt, "MAIN"); err != nil || res == nil {
					b.Fatal(err)
				}
				b.StopTimer()
				reqs := h.srv.RequestsFor("MAIN")
				toFirst += reqs[len(reqs)-1].Arrived.Sub(began)
				_ = rt.Close()
				b.StartTimer()
			}
			// New → the model server receiving the run's first request.
			b.ReportMetric(float64(toFirst/time.Duration(b.N)), "first-request-ns/op")
		})
	}
}

// BenchmarkMCPSpawnInlineServer measures a run whose main agent spawns one
// child, with and without an inline stdio server in the child's
// definition: the difference is the server's start (a process and the
// MCP initialize handshake), which the spawn waits for.
func BenchmarkMCPSpawnInlineServer(b *testing.B) {
	for _, inline := range []bool{false, true} {
		b.Run(fmt.Sprintf("inline=%v", inline), func(b *testing.B) {
			t := &testing.T{}
			h := &harness{t: t, srv: llmtest.NewServer(), dir: b.TempDir()}
			b.Cleanup(h.srv.Close)
			fm := ""
			if inline {
				raw, _ := json.Marshal([]json.RawMessage{inlineServer(t, "own", nil)})
				fm = "mcpServers: " + string(raw)
			}
			def := defineAgent(t, "helper", fm)
			var serverStart time.Duration
			for b.Loop() {
				h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("helper", "CHILD: go")), llmtest.Text("done"))
				h.srv.Script("CHILD", llmtest.Text("child done"))
				cfg := h.mcpConfig()
				cfg.NoTranscript, cfg.StateDir = true, ""
				cfg.Agents = []*agentdef.Definition{def}
				rt, err := New(cfg)
				if err != nil {
					b.Fatal(err)
				}
				evs, res, err := runAll(t, context.Background(), rt, "MAIN")
				if err != nil || res == nil {
					b.Fatal(err)
				}
				for _, ev := range evs {
					if ev.Type == run.EventTaskStarted {
						serverStart += ev.Task.Receipt.MCPStart
					}
				}
				b.StopTimer()
				_ = rt.Close()
				b.StartTimer()
			}
			// The inline server's own start (process and handshake, the
			// receipt's MCPStart) apart from the rest of the run.
			n := time.Duration(b.N)
			b.ReportMetric(float64(serverStart/n), "server-start-ns/op")
			b.ReportMetric(float64((b.Elapsed()-serverStart)/n), "rest-ns/op")
		})
	}
}
