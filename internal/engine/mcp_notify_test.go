package engine

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/mcp"
)

// A server whose tool list changes mid-run (notifications/tools/list_changed)
// has the new tool in the agent's very next model request.
func TestMCPToolListChangedAtTheNextTurn(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	rt := newRuntime(t, h.mcpConfig(testServer(t, "dyn", map[string]string{"CADRE_TEST_MCP_DYNAMIC": "1"})))
	waitMCP(t, rt)
	h.srv.Script("MAIN",
		llmtest.ToolUse("mcp__dyn__grow", map[string]any{}),
		llmtest.ToolUse("mcp__dyn__grown", map[string]any{"text": "fresh"}),
		llmtest.Text("done"))
	_, res := runMCP(t, rt, "MAIN: grow")
	if res.Text != "done" {
		t.Fatal(res.Text)
	}
	reqs := h.srv.RequestsFor("MAIN")
	if slices.Contains(reqs[0].ToolNames(), "mcp__dyn__grown") || !slices.Contains(reqs[0].ToolNames(), "mcp__dyn__grow") {
		t.Fatalf("first request's tools %v", reqs[0].ToolNames())
	}
	contains(t, reqs[1].LastToolResults()[0].ResultText(), "grew")
	if !slices.Contains(reqs[1].ToolNames(), "mcp__dyn__grown") {
		t.Fatalf("the request after the change lacks the new tool: %v", reqs[1].ToolNames())
	}
	contains(t, reqs[2].LastToolResults()[0].ResultText(), "grown: fresh")
	if st := rt.MCPStatus(); !slices.Contains(st[0].Tools, "mcp__dyn__grown") {
		t.Fatalf("status %+v", st)
	}
}

// Log messages and progress a server sends during a call are kept in the
// server's log, which by default lives in the session's directory.
func TestMCPServerNotificationsAreLogged(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cfg := h.mcpConfig(testServer(t, "chat", map[string]string{"CADRE_TEST_MCP_DYNAMIC": "1"}))
	cfg.MCPOptions.LogDir = "" // the default: beside the session's transcripts
	rt := newRuntime(t, cfg)
	waitMCP(t, rt)
	h.srv.Script("MAIN", llmtest.ToolUse("mcp__chat__chatty", map[string]any{}), llmtest.Text("done"))
	runMCP(t, rt, "MAIN: chat")
	contains(t, h.toolResults("MAIN")[0], "chatted")
	// Close waits for the notifications the client had read to be handled.
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(mcpLogDir(cfg.StateDir, cfg.Cwd, rt.SessionID()), "chat.log"))
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	for _, want := range []string{"[log info] cadre-test: warming up the flux", "[progress cadre-1] 1/2 half way"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, "below the level") {
		t.Errorf("a debug message was logged at level info:\n%s", log)
	}
}

// The model lists and reads a real server's resources through
// ListMcpResources and ReadMcpResource (server-everything from npm); a
// result over the size cap reaches it cut, with a note saying so.
func TestMCPResourcesAndSizeCap(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cfg := h.mcpConfig(mcp.Server{Name: "everything", Transport: mcp.Stdio, Command: npmServer(t, "mcp-server-everything")})
	cfg.MCPOptions.MaxOutputChars = 300
	rt := newRuntime(t, cfg)
	waitMCP(t, rt)
	h.srv.Script("MAIN",
		llmtest.ToolUse("ListMcpResources", map[string]any{"server": "everything"}),
		llmtest.ToolUse("ReadMcpResource", map[string]any{"server": "everything", "uri": "demo://resource/static/document/features.md"}),
		llmtest.Text("read"))
	runMCP(t, rt, "MAIN: resources")
	reqs := h.srv.RequestsFor("MAIN")
	for _, n := range []string{"ListMcpResources", "ReadMcpResource"} {
		if !slices.Contains(reqs[0].ToolNames(), n) {
			t.Fatalf("%s not offered: %v", n, reqs[0].ToolNames())
		}
	}
	list := reqs[1].LastToolResults()[0]
	if list.IsError || !strings.Contains(list.ResultText(), `"server":"everything"`) || !strings.Contains(list.ResultText(), "demo://resource/") {
		t.Fatalf("ListMcpResources %+v", list)
	}
	read := reqs[2].LastToolResults()[0]
	if read.IsError || !strings.Contains(read.ResultText(), "first 300 of") || len(read.ResultText()) > 600 {
		t.Fatalf("ReadMcpResource %q", read.ResultText())
	}
}
