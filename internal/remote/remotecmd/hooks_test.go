package remotecmd_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/task"
)

// A worker runs its own hooks (--settings), never the launcher's: its
// PreToolUse hook on Bash blocks the remote agent's call (the command
// does not run, the model reads the hook's reason), and the hook the
// launcher's definition carries does not run on the worker.
func TestWorkerHookBlocksARemoteAgentsCall(t *testing.T) {
	c := dial(t)
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	queue := unique("hooks")
	dir := t.TempDir()
	settings := filepath.Join(t.TempDir(), "worker-settings.json")
	hook := map[string]any{"hooks": map[string]any{"PreToolUse": []any{map[string]any{"matcher": "Bash",
		"hooks": []any{map[string]any{"type": "command", "command": "echo 'WORKER-POLICY: no shell here' >&2; exit 2"}}}}}}
	raw, _ := json.Marshal(hook)
	if err := os.WriteFile(settings, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	startWorker(t, queue, srv, "test", "--settings", settings)
	srv.Script("HOOKED", bash("touch ran.txt"), llmtest.Text("could not run it"))
	x := newExecutor(t, c, queue)
	req := request(unique("agent"), dir, "HOOKED try the shell")
	// The launcher's definition hooks are its own code: they stay there.
	req.Definition.Hooks = json.RawMessage(`{"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "touch ` + filepath.Join(dir, "launcher-hook-ran") + `"}]}]}`)
	req.Definition.HooksFrom = "/launcher/agents/x.md"
	h, err := x.Start(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := h.Wait(ctx)
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	if res.Status != task.Completed || res.Text != "could not run it" {
		t.Fatalf("status %s, text %q, error %q", res.Status, res.Text, res.Error)
	}
	for _, f := range []string{"ran.txt", "launcher-hook-ran"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Fatalf("%s exists: the blocked call or the launcher's hook ran", f)
		}
	}
	reqs := srv.RequestsFor("HOOKED")
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	told := reqs[1].LastToolResults()
	if len(told) != 1 || !told[0].IsError || !strings.Contains(told[0].ResultText(), "WORKER-POLICY: no shell here") {
		t.Fatalf("the model did not read the worker hook's reason: %+v", told)
	}
}

// A worker connects the MCP servers of its own settings and gives their
// tools to a remote agent whose definition names the server: the agent
// reads the worker's memory server's graph. An agent whose definition
// names no server is not offered them.
func TestWorkerMCPServerServesARemoteAgent(t *testing.T) {
	c := dial(t)
	memory, err := filepath.Abs(filepath.Join("..", "..", "..", ".ci", "mcp-servers", "node_modules", ".bin", "mcp-server-memory"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(memory); err != nil {
		t.Skipf("needs the MCP server mcp-server-memory from npm (.ci/run installs it): %v", err)
	}
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	queue := unique("mcp")
	settings := filepath.Join(t.TempDir(), "worker-settings.json")
	cfg := map[string]any{"mcpServers": map[string]any{"memory": map[string]any{"command": memory,
		"env": map[string]string{"MEMORY_FILE_PATH": filepath.Join(t.TempDir(), "memory.jsonl")}}}}
	raw, _ := json.Marshal(cfg)
	if err := os.WriteFile(settings, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	w := startWorker(t, queue, srv, "test", "--settings", settings)
	if !strings.Contains(w.output(), "MCP server memory: connected") {
		t.Fatalf("the worker did not connect its server: %s", w.output())
	}
	srv.Script("WITH-MCP", llmtest.ToolUse("mcp__memory__read_graph", map[string]any{}), llmtest.Text("read the graph"))
	srv.Script("NO-MCP", llmtest.Text("nothing to read"))
	x := newExecutor(t, c, queue)
	run := func(prompt string, servers []string) {
		t.Helper()
		req := request(unique("agent"), t.TempDir(), prompt)
		req.Definition.MCPServers = servers
		h, err := x.Start(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		res, err := h.Wait(ctx)
		if err != nil || res.Status != task.Completed {
			t.Fatalf("wait: %v, result %+v", err, res)
		}
	}
	run("WITH-MCP read it", []string{"memory"})
	run("NO-MCP nothing", nil)
	with := srv.RequestsFor("WITH-MCP")
	if len(with) != 2 || !slices.Contains(with[0].ToolNames(), "mcp__memory__read_graph") {
		t.Fatalf("the agent naming the server was not offered its tools: %d requests", len(with))
	}
	got := with[1].LastToolResults()
	if len(got) != 1 || got[0].IsError || !strings.Contains(got[0].ResultText(), "entities") {
		t.Fatalf("the server's answer: %+v", got)
	}
	if names := srv.RequestsFor("NO-MCP")[0].ToolNames(); slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "mcp__") }) {
		t.Fatalf("an agent naming no server was offered MCP tools: %v", names)
	}
}
