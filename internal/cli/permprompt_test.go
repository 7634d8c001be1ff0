package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// --permission-prompt-tool mcp__<server>__<tool>: a real MCP server (this
// test binary with permServerEnv set, started by cadre from --mcp-config)
// answers the permission prompts of a headless run, as Claude Code's
// permission prompt tools do.

// permServerEnv makes the test binary an MCP server whose tool "approve"
// answers permission prompts: a command containing "forbidden" is
// denied; any other is allowed, rewritten to touch rewritten.txt. Each
// call's arguments are appended to the file named by permLogEnv.
const (
	permServerEnv = "CADRE_TEST_PERMISSION_MCP"
	permLogEnv    = "CADRE_TEST_PERMISSION_LOG"
)

// permPromptIn is what Claude Code calls its permission prompt tool with.
type permPromptIn struct {
	ToolName  string         `json:"tool_name"`
	Input     map[string]any `json:"input"`
	ToolUseID string         `json:"tool_use_id,omitempty"`
}

func servePermissionMCP() {
	s := mcp.NewServer(&mcp.Implementation{Name: "cadre-test-permissions", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "approve", Description: "answers permission prompts"}, func(_ context.Context, _ *mcp.CallToolRequest, in permPromptIn) (*mcp.CallToolResult, any, error) {
		line, _ := json.Marshal(in)
		if f, err := os.OpenFile(os.Getenv(permLogEnv), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
			_, _ = f.Write(append(line, '\n'))
			_ = f.Close()
		}
		cmd, _ := in.Input["command"].(string)
		var answer any
		if strings.Contains(cmd, "forbidden") {
			answer = map[string]any{"behavior": "deny", "message": "PERM-TOOL: not that one"}
		} else {
			answer = map[string]any{"behavior": "allow", "updatedInput": map[string]any{"command": "touch rewritten.txt"}}
		}
		text, _ := json.Marshal(answer)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}, nil, nil
	})
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
	os.Exit(0)
}

func TestPermissionPromptToolMCP(t *testing.T) {
	t.Parallel()
	mcpConfig := func(t *testing.T, log string) string {
		t.Helper()
		b, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"perm": map[string]any{
			"command": os.Args[0], "env": map[string]string{permServerEnv: "1", permLogEnv: log}}}})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	t.Run("the tool denies one call and rewrites another", func(t *testing.T) {
		t.Parallel()
		s, env := server(t)
		s.Script("", llmtest.ToolUse("Bash", map[string]string{"command": "touch forbidden.txt"}),
			llmtest.ToolUse("Bash", map[string]string{"command": "touch original.txt"}), llmtest.Text("done"))
		log := filepath.Join(t.TempDir(), "calls.jsonl")
		cmd, out, errb, _ := cadreCmd(t, env, "", "-p", "run two commands", "--output-format", "json",
			"--mcp-config", mcpConfig(t, log), "--permission-prompt-tool", "mcp__perm__approve")
		if code := runIn(t, cmd); code != 0 {
			t.Fatalf("code %d stderr %s", code, errb)
		}
		reqs := s.Requests()
		if len(reqs) != 3 {
			t.Fatalf("%d requests", len(reqs))
		}
		if res := reqs[1].LastToolResults(); len(res) != 1 || !res[0].IsError || !strings.Contains(res[0].ResultText(), "PERM-TOOL: not that one") {
			t.Fatalf("the model got %+v", res)
		}
		// Issue 29: the prompt tool's message reaches the model as given.
		if got := reqs[1].LastToolResults()[0].ResultText(); got != "PERM-TOOL: not that one" {
			t.Errorf("the model got %q, not the prompt tool's message as given", got)
		}
		for name, want := range map[string]bool{"forbidden.txt": false, "original.txt": false, "rewritten.txt": true} {
			if _, err := os.Stat(filepath.Join(cmd.Dir, name)); (err == nil) != want {
				t.Errorf("%s exists: %v, want %v", name, err == nil, want)
			}
		}
		b, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		var calls []permPromptIn
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var c permPromptIn
			if err := json.Unmarshal([]byte(l), &c); err != nil {
				t.Fatalf("%q: %v", l, err)
			}
			calls = append(calls, c)
		}
		if len(calls) != 2 || calls[0].ToolName != "Bash" || calls[0].Input["command"] != "touch forbidden.txt" || calls[0].ToolUseID == "" ||
			calls[1].Input["command"] != "touch original.txt" {
			t.Fatalf("the tool was called with %+v", calls)
		}
		var res map[string]any
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		if d, _ := res["permission_denials"].([]any); len(d) != 1 || res["result"] != "done" {
			t.Fatalf("result %v", res)
		}
	})

	t.Run("usage errors", func(t *testing.T) {
		t.Parallel()
		_, env := server(t)
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"--permission-prompt-tool", "approve"}, `invalid --permission-prompt-tool "approve"`},
			{[]string{"--permission-prompt-tool", "mcp__nope__approve"}, "mcp__nope__approve: no MCP server of that name is configured"},
			{[]string{"--permission-prompt-tool", "stdio"}, "needs --input-format stream-json"},
		} {
			p := runCadre(t, env, "", append([]string{"-p", "hi"}, c.args...)...)
			if p.code != ExitUsage || !strings.Contains(p.stderr, c.want) {
				t.Errorf("%v: code %d stderr %q", c.args, p.code, p.stderr)
			}
		}
	})
}
