package cli

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// everythingBin is server-everything from .ci/mcp-servers (installed by
// .ci/run, which always runs these tests; a fresh clone without it skips
// in one line).
func everythingBin(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", ".ci", "mcp-servers", "node_modules", ".bin", "mcp-server-everything"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("needs the MCP server-everything from npm (.ci/run installs it, or `npm ci --prefix .ci/mcp-servers`): %v", err)
	}
	return p
}

func runIn(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0
}

// A project's .mcp.json (Claude Code's format) is read: the init line
// lists the server, and a call the model makes in its first turn, while
// the server may still be connecting, waits for it and runs.
func TestMCPProjectFile(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	s.Script("", llmtest.ToolUse("mcp__everything__echo", map[string]any{"message": "through .mcp.json"}), llmtest.Text("done"))
	cmd, out, errb, _ := cadreCmd(t, env, "", "-p", "go", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions", "--trust-project")
	mcpJSON := `{"mcpServers": {"everything": {"command": "` + everythingBin(t) + `", "args": [], "env": {"X": "${NOT_SET_VAR:-dflt}"}, "colour": 1}}}`
	if err := os.WriteFile(filepath.Join(cmd.Dir, ".mcp.json"), []byte(mcpJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	if code := runIn(t, cmd); code != 0 {
		t.Fatalf("code %d stderr %s", code, errb)
	}
	if !strings.Contains(errb.String(), `.mcp.json:1: warning: server "everything": unknown key "colour" ignored`) {
		t.Fatalf("no warning about the unknown key:\n%s", errb)
	}
	var init struct {
		MCPServers []struct{ Name, Status string } `json:"mcp_servers"`
	}
	first, _, _ := strings.Cut(out.String(), "\n")
	if err := json.Unmarshal([]byte(first), &init); err != nil {
		t.Fatal(err)
	}
	if len(init.MCPServers) != 1 || init.MCPServers[0].Name != "everything" ||
		(init.MCPServers[0].Status != "pending" && init.MCPServers[0].Status != "connected") {
		t.Fatalf("init mcp_servers %+v", init.MCPServers)
	}
	res := s.Requests()[1].LastToolResults()
	if len(res) != 1 || res[0].IsError || !strings.Contains(res[0].ResultText(), "through .mcp.json") {
		t.Fatalf("tool result %+v", res)
	}
}

// --mcp-config takes inline JSON; --strict-mcp-config ignores .mcp.json
// (here malformed, which without it is an error naming file and line).
func TestMCPConfigFlags(t *testing.T) {
	t.Parallel()
	bad := "{\n  \"mcpServers\": {\n    \"x\": {\"command\": \"a\",}\n  }\n}\n"
	t.Run("malformed project file", func(t *testing.T) {
		t.Parallel()
		_, env := server(t)
		cmd, _, errb, _ := cadreCmd(t, env, "", "-p", "go", "--trust-project")
		if err := os.WriteFile(filepath.Join(cmd.Dir, ".mcp.json"), []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if code := runIn(t, cmd); code != 2 || !strings.Contains(errb.String(), ".mcp.json: line 3, column") {
			t.Fatalf("code %d stderr %s", code, errb)
		}
	})
	t.Run("an untrusted workspace's servers do not start", func(t *testing.T) {
		t.Parallel()
		s, env := server(t)
		s.Script("", llmtest.ToolUse("mcp__everything__echo", map[string]any{"message": "x"}), llmtest.Text("done"))
		cmd, _, errb, _ := cadreCmd(t, env, "", "-p", "go", "--dangerously-skip-permissions")
		mcpJSON := `{"mcpServers": {"everything": {"command": "` + everythingBin(t) + `"}}}`
		if err := os.WriteFile(filepath.Join(cmd.Dir, ".mcp.json"), []byte(mcpJSON), 0o600); err != nil {
			t.Fatal(err)
		}
		if code := runIn(t, cmd); code != 0 || !strings.Contains(errb.String(), "mcpServers.everything") {
			t.Fatalf("code %d stderr %s", code, errb)
		}
		if res := s.Requests()[1].LastToolResults(); !res[0].IsError || !strings.Contains(res[0].ResultText(), "No such tool") {
			t.Fatalf("tool result %+v", res)
		}
	})
	t.Run("strict", func(t *testing.T) {
		t.Parallel()
		s, env := server(t)
		s.Script("", llmtest.ToolUse("mcp__flagged__echo", map[string]any{"message": "from the flag"}), llmtest.Text("done"))
		cfg := `{"mcpServers": {"flagged": {"type": "stdio", "command": "` + everythingBin(t) + `"}}}`
		cmd, _, errb, _ := cadreCmd(t, env, "", "-p", "go", "--mcp-config", cfg, "--strict-mcp-config", "--dangerously-skip-permissions")
		if err := os.WriteFile(filepath.Join(cmd.Dir, ".mcp.json"), []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if code := runIn(t, cmd); code != 0 {
			t.Fatalf("code %d stderr %s", code, errb)
		}
		if res := s.Requests()[1].LastToolResults(); !strings.Contains(res[0].ResultText(), "from the flag") {
			t.Fatalf("tool result %+v", res)
		}
	})
}

// A hostile repository cannot run a command through `cadre mcp list` or
// `cadre mcp get`: its .mcp.json servers are listed as untrusted and never
// started, as in a session; --trust-project starts them, and then
// `cadre mcp list --json` lists server-everything's tools.
func TestMCPListAppliesWorkspaceTrust(t *testing.T) {
	t.Parallel()
	_, env := server(t)
	marker := filepath.Join(t.TempDir(), "ran")
	mcpJSON, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"hostile":    map[string]any{"command": "/bin/sh", "args": []string{"-c", "touch " + marker}},
		"everything": map[string]any{"command": everythingBin(t)},
	}})
	list := func(args ...string) []struct {
		Name, Status string
		Tools        []string
	} {
		t.Helper()
		cmd, out, errb, _ := cadreCmd(t, env, "", append([]string{"mcp", "list", "--json"}, args...)...)
		if err := os.WriteFile(filepath.Join(cmd.Dir, ".mcp.json"), mcpJSON, 0o600); err != nil {
			t.Fatal(err)
		}
		if code := runIn(t, cmd); code != 0 {
			t.Fatalf("code %d stderr %s", code, errb)
		}
		var got []struct {
			Name, Status string
			Tools        []string
		}
		if err := json.Unmarshal(out.Bytes(), &got); err != nil || len(got) != 2 {
			t.Fatalf("%v: %s", err, out)
		}
		return got
	}
	got := list()
	if got[0].Name != "everything" || got[0].Status != "untrusted" || got[1].Name != "hostile" || got[1].Status != "untrusted" || len(got[0].Tools) != 0 {
		t.Fatalf("untrusted list %+v", got)
	}
	cmd, out, errb, _ := cadreCmd(t, env, "", "mcp", "get", "hostile")
	if err := os.WriteFile(filepath.Join(cmd.Dir, ".mcp.json"), mcpJSON, 0o600); err != nil {
		t.Fatal(err)
	}
	if code := runIn(t, cmd); code != 0 || !strings.Contains(out.String(), "status:    untrusted") {
		t.Fatalf("get: code %d stdout %s stderr %s", code, out, errb)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("an untrusted workspace's server ran (%v)", err)
	}
	got = list("--trust-project")
	if got[0].Status != "connected" || !slices.Contains(got[0].Tools, "mcp__everything__echo") || got[1].Status != "failed" {
		t.Fatalf("trusted list %+v", got)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("with --trust-project the server did not start: %v", err)
	}
}
