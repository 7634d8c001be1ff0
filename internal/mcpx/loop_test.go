package mcpx

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/anthropic"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/tool"
)

// The query loop, the official Anthropic client and the scripted model
// server, with MCP tools in the pool: the model calls a tool of a real
// npm server, then one whose server crashes mid-call; the crash is an
// error result naming the server and the loop goes on to its answer.
func TestLoopCallsMCPTools(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	t.Cleanup(func() { srv.Check(t) })
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	model, err := anthropic.New(anthropic.Config{APIKey: "test", BaseURL: srv.URL(), HTTPClient: &http.Client{Transport: tr}, RetryBase: 1, RetryMax: 2})
	if err != nil {
		t.Fatal(err)
	}
	m := newManager(t, []ServerConfig{everything(t, "everything"), crashServer(t, "crashy")}, Options{})
	m.Start()
	waitConnected(t, m)

	srv.Script("",
		llmtest.ToolUse("mcp__everything__get-sum", map[string]any{"a": 20, "b": 22}),
		llmtest.ToolUse("mcp__crashy__crash", map[string]any{}),
		llmtest.Text("the sum is 42; crashy is down"),
	)
	ctx := context.Background()
	cfg := loop.Config{Model: model, ModelID: "claude-sonnet-4-5", System: "test", MaxTokens: 1024,
		Tools: tool.NewPool(m.Tools(ctx)...), Env: &tool.Env{Cwd: t.TempDir()}}
	var res *loop.Result
	for ev, err := range loop.Run(ctx, cfg, []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock("add and crash")}}}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == loop.Done {
			res = ev.Result
		}
	}
	if res == nil || res.Text != "the sum is 42; crashy is down" {
		t.Fatalf("result = %+v", res)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	if got := reqs[0].ToolNames(); !slices.Contains(got, "mcp__everything__get-sum") || !slices.Contains(got, "mcp__crashy__crash") || !slices.Contains(got, tool.ListMcpResources) {
		t.Errorf("tools offered = %v", got)
	}
	sum := reqs[1].LastToolResults()
	if len(sum) != 1 || sum[0].IsError || !strings.Contains(sum[0].ResultText(), "42") {
		t.Errorf("get-sum result = %+v", sum)
	}
	crash := reqs[2].LastToolResults()
	if len(crash) != 1 || !crash[0].IsError || !strings.Contains(crash[0].ResultText(), `MCP server "crashy"`) {
		t.Errorf("crash result = %+v", crash)
	}
}
