package mcpcmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/cli/agentscmd"
)

// everythingBin is server-everything as .ci/run installs it; a fresh
// clone without it skips in one line.
func everythingBin(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("CADRE_MCP_SERVERS")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", ".ci", "mcp-servers")
	}
	p, err := filepath.Abs(filepath.Join(dir, "node_modules", ".bin", "mcp-server-everything"))
	if err == nil {
		_, err = os.Stat(p)
	}
	if err != nil {
		t.Skipf("needs the MCP server-everything from npm (.ci/run installs it, or `npm ci --prefix .ci/mcp-servers` from the repository root): %v", err)
	}
	return p
}

func project(t *testing.T, mcpJSON string) string {
	t.Helper()
	dir := t.TempDir()
	if mcpJSON != "" {
		if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(mcpJSON), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func run(t *testing.T, dir string, args ...string) (string, string, error) {
	t.Helper()
	cmd := New()
	var out, errb bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SetArgs(append(args, "--cwd", dir))
	err := cmd.Execute()
	return out.String(), errb.String(), err
}

func TestListJSONWithServerEverything(t *testing.T) {
	t.Parallel()
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": everythingBin(t)},
		"broken":     map[string]any{"command": "/nonexistent/server", "typo": 1},
	}})
	dir := project(t, string(cfg))
	out, stderr, err := run(t, dir, "list", "--json", "--trust-project")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, `.mcp.json:1: warning: server "broken": unknown key "typo"`) {
		t.Errorf("stderr = %q", stderr)
	}
	var got []struct {
		Name   string `json:"name"`
		Source struct {
			Scope, File string
		} `json:"source"`
		Transport string   `json:"transport"`
		Status    string   `json:"status"`
		Error     string   `json:"error"`
		Tools     []string `json:"tools"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(got) != 2 || got[0].Name != "broken" || got[1].Name != "everything" {
		t.Fatalf("servers = %+v", got)
	}
	b, e := got[0], got[1]
	if b.Status != "failed" || !strings.Contains(b.Error, "/nonexistent/server") {
		t.Errorf("broken = %+v", b)
	}
	if e.Status != "connected" || e.Transport != "stdio" || e.Source.Scope != "project" || e.Source.File != filepath.Join(dir, ".mcp.json") {
		t.Errorf("everything = %+v", e)
	}
	for _, want := range []string{"mcp__everything__echo", "mcp__everything__get-sum", "mcp__everything__get-tiny-image"} {
		if !slices.Contains(e.Tools, want) {
			t.Errorf("tools %v lack %s", e.Tools, want)
		}
	}
}

func TestListTextGetAndFlags(t *testing.T) {
	t.Parallel()
	bin := everythingBin(t)
	dir := project(t, `{"mcpServers": {"fromfile": {"command": "/nonexistent"}}}`)
	flag, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"e": map[string]any{"command": bin}}})

	out, _, err := run(t, dir, "list", "--mcp-config", string(flag), "--strict-mcp-config")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "NAME") || !strings.Contains(out, "e ") || !strings.Contains(out, "flag (--mcp-config") || strings.Contains(out, "fromfile") {
		t.Errorf("strict list = %q", out)
	}

	out, _, err = run(t, dir, "get", "e", "--mcp-config", string(flag))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "status:    connected") || !strings.Contains(out, "mcp__e__echo — Echoes back the input string") {
		t.Errorf("get = %q", out)
	}

	_, _, err = run(t, dir, "get", "nope")
	var ee *agentscmd.ExitError
	if !errors.As(err, &ee) || ee.Code != 1 || !strings.Contains(err.Error(), `no MCP server named "nope" (configured: "fromfile")`) {
		t.Errorf("get nope: %v", err)
	}
}

func TestMalformedConfigNamesFileAndLine(t *testing.T) {
	t.Parallel()
	dir := project(t, "{\"mcpServers\": {\n  \"a\": {\"command\": }\n}}")
	_, _, err := run(t, dir, "list")
	var ee *agentscmd.ExitError
	if !errors.As(err, &ee) || ee.Code != 2 || !strings.Contains(err.Error(), filepath.Join(dir, ".mcp.json")+": line 2, column") {
		t.Fatalf("err = %v", err)
	}
	out, _, err := run(t, project(t, ""), "list")
	if err != nil || !strings.Contains(out, "No MCP servers configured") {
		t.Errorf("empty project: %q %v", out, err)
	}
}

// An untrusted workspace's servers are listed as untrusted and never
// started, by list or by get; --trust-project starts them.
func TestUntrustedWorkspaceServersAreNotStarted(t *testing.T) {
	t.Parallel()
	marker := filepath.Join(t.TempDir(), "ran")
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"hostile": map[string]any{"command": "/bin/sh", "args": []string{"-c", "touch " + marker}},
	}})
	dir := project(t, string(cfg))
	out, _, err := run(t, dir, "list", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got []struct{ Name, Status, Error string }
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(got) != 1 || got[0].Name != "hostile" || got[0].Status != "untrusted" || !strings.Contains(got[0].Error, "not trusted") {
		t.Fatalf("list = %+v", got)
	}
	out, _, err = run(t, dir, "get", "hostile")
	if err != nil || !strings.Contains(out, "status:    untrusted") || !strings.Contains(out, "tools:     0") {
		t.Fatalf("get = %q %v", out, err)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("an untrusted workspace's server ran (%v)", err)
	}
	out, _, err = run(t, dir, "list", "--trust-project")
	if err != nil || !strings.Contains(out, "failed") {
		t.Fatalf("trusted list = %q %v", out, err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("with --trust-project the server did not start: %v", err)
	}
}
