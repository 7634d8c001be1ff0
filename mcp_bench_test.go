package cadre

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/llm/llmtest"
)

// BenchmarkMCPLaunchToFirstRequest measures a run from New to its result
// (one model request) with 0 and 3 stdio MCP servers configured: servers
// connect in the background, so the figure should not grow with them.
func BenchmarkMCPLaunchToFirstRequest(b *testing.B) {
	for _, n := range []int{0, 3} {
		b.Run(fmt.Sprintf("servers=%d", n), func(b *testing.B) {
			t := &testing.T{}
			h := &harness{t: t, srv: llmtest.NewServer(), dir: b.TempDir()}
			b.Cleanup(h.srv.Close)
			var servers []MCPServer
			for i := range n {
				servers = append(servers, testServer(t, fmt.Sprintf("s%d", i), nil))
			}
			for b.Loop() {
				h.srv.Script("MAIN", llmtest.Text("ok"))
				cfg := h.mcpConfig(servers...)
				cfg.NoTranscript, cfg.StateDir = true, ""
				rt, err := New(cfg)
				if err != nil {
					b.Fatal(err)
				}
				if _, res, err := runAll(t, context.Background(), rt, "MAIN"); err != nil || res == nil {
					b.Fatal(err)
				}
				b.StopTimer()
				_ = rt.Close()
				b.StartTimer()
			}
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
				if _, res, err := runAll(t, context.Background(), rt, "MAIN"); err != nil || res == nil {
					b.Fatal(err)
				}
				b.StopTimer()
				_ = rt.Close()
				b.StartTimer()
			}
		})
	}
}
