package config

import (
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/mcpx"
	"github.com/cadre-dev/cadre/mcp"
)

// MCP servers come from the user's settings, the project's .mcp.json, the
// project's settings, the local settings, --mcp-config and managed
// settings; a higher one replaces a server of the same name, and each
// keeps where it came from (scope, file, line) so project servers can be
// told apart.
func TestMCPServersPrecedence(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"HOME/.config/cadre/settings.json":   `{"mcpServers": {"a": {"command": "user-a"}, "u": {"command": "user-u"}}}`,
		"CWD/.mcp.json":                      "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"project-a\"},\n    \"b\": {\"command\": \"project-b\"},\n    \"h\": {\"type\": \"http\", \"url\": \"${BASE:-http://localhost:1}/mcp\", \"headers\": {\"Authorization\": \"Bearer ${TOKEN}\"}}\n  }\n}\n",
		"CWD/.cadre/settings.json":           "{\n  \"model\": \"m\",\n  \"mcpServers\": {\"b\": {\"command\": \"settings-b\"}}\n}",
		"CWD/.cadre/settings.local.json":     `{"mcpServers": {"l": {"type": "sse", "url": "https://example.com/sse"}}}`,
		"MANAGED/managed-settings.json":      `{"mcpServers": {"m": {"command": "managed-m"}, "c": {"command": "managed-c"}}}`,
		"MANAGED/managed-settings.d/x.json":  `{}`,
		"CWD/.cadre/agents/unused/README.md": "",
	}
	env := withDefault(anthropicKey, "TOKEN", "t0k")
	cfg, diags, err, tr := loadIn(t, files, env, Options{TrustProject: true /* the workspace's servers need trust (trust.go) */, MCPConfigs: []string{`{"mcpServers": {"c": {"command": "flag-c"}, "f": {"command": "flag-f"}}}`}})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diags {
		if d.Topic == TopicMCP {
			t.Errorf("diagnostic %v", d)
		}
	}
	got := map[string]mcp.Server{}
	for _, s := range cfg.MCPServers {
		got[s.Name] = s
	}
	want := map[string]struct {
		what  string
		scope mcpx.Scope
	}{
		"a": {"project-a", mcpx.ScopeProject}, "b": {"settings-b", mcpx.ScopeSettings}, "u": {"user-u", mcpx.ScopeUser},
		"c": {"managed-c", mcpx.ScopeManaged}, "f": {"flag-f", mcpx.ScopeFlag}, "m": {"managed-m", mcpx.ScopeManaged},
		"h": {"http://localhost:1/mcp", mcpx.ScopeProject}, "l": {"https://example.com/sse", mcpx.ScopeLocal},
	}
	if len(got) != len(want) {
		t.Fatalf("servers %+v", cfg.MCPServers)
	}
	for name, w := range want {
		s := got[name]
		if (s.Command != w.what && s.URL != w.what) || s.Source.Scope != w.scope {
			t.Errorf("%s: %+v, want %s from %s", name, s, w.what, w.scope)
		}
	}
	if s := got["a"]; s.Source.File != tr.cwd+"/.mcp.json" || s.Source.Line != 3 {
		t.Errorf("a's source %+v", s.Source)
	}
	if s := got["b"]; s.Source.Line != 3 {
		t.Errorf("b's source %+v (the settings file's mcpServers starts on line 3)", s.Source)
	}
	if h := got["h"]; h.Headers["Authorization"] != "Bearer t0k" || h.Transport != mcpx.HTTP {
		t.Errorf("h %+v", h)
	}

	// --strict-mcp-config: only the flag's servers.
	cfg, _, err, _ = loadIn(t, files, env, Options{TrustProject: true, StrictMCPConfig: true, MCPConfigs: []string{`{"mcpServers": {"f": {"command": "flag-f"}}}`}})
	if err != nil || len(cfg.MCPServers) != 1 || cfg.MCPServers[0].Name != "f" {
		t.Fatalf("strict: %v %+v", err, cfg.MCPServers)
	}
}

// A malformed configuration is an error naming file and line; an entry
// with an unknown key loads with a warning that names its line.
func TestMCPServersErrors(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		files map[string]string
		err   string
		warn  string
	}{
		"not an object in settings": {files: map[string]string{"CWD/.cadre/settings.json": "{\n\n  \"mcpServers\": [1]\n}"}, err: "settings.json:3: \"mcpServers\" must be an object"},
		"bad JSON in .mcp.json":     {files: map[string]string{"CWD/.mcp.json": "{\"mcpServers\": {\n\"a\": {\"command\": }}}"}, err: ".mcp.json: line 2, column"},
		"unknown key":               {files: map[string]string{"CWD/.mcp.json": "{\"mcpServers\": {\n\"a\": {\"command\": \"x\",\n \"argz\": []}}}"}, warn: `.mcp.json:3: warning: server "a": unknown key "argz" ignored (did you mean "args"?)`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, diags, err, _ := loadIn(t, c.files, anthropicKey, Options{TrustProject: true})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, d := range diags {
				found = found || strings.HasSuffix(d.String(), c.warn)
			}
			if !found {
				t.Fatalf("no warning %q in %v", c.warn, diags)
			}
		})
	}
}

// Workspace trust gates the project's servers: an untrusted workspace's
// .mcp.json and settings servers are left out with a warning naming each
// (and in the provenance); the user's and the flag's still start.
func TestMCPServersNeedTrust(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"HOME/.config/cadre/settings.json": `{"mcpServers": {"u": {"command": "user-u"}}}`,
		"CWD/.mcp.json":                    `{"mcpServers": {"p": {"command": "project-p"}}}`,
		"CWD/.cadre/settings.json":         `{"mcpServers": {"s": {"command": "settings-s"}}}`,
	}
	cfg, diags, err, _ := loadIn(t, files, anthropicKey, Options{MCPConfigs: []string{`{"mcpServers": {"f": {"command": "x"}}}`}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range cfg.MCPServers {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "f,u" {
		t.Fatalf("servers %v", names)
	}
	var warned []string
	for _, d := range diags {
		if d.Topic == TopicTrust && strings.Contains(d.Message, "mcpServers.") {
			warned = append(warned, d.Message)
		}
	}
	if len(warned) != 2 || len(cfg.Provenance.Ignored) < 2 {
		t.Fatalf("warnings %q, provenance %+v", warned, cfg.Provenance.Ignored)
	}
}

// --mcp-config is repeatable and takes a file (relative to the project)
// or inline JSON; on a name clash the later value wins, and a malformed
// file among them is an error naming it and its line. A file the flag
// names is the user's choice: it needs no workspace trust even inside the
// (here untrusted) project.
func TestMCPConfigRepeatable(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"CWD/tools/mcp.json": "{\"mcpServers\": {\n  \"files\": {\"command\": \"from-file\"},\n  \"both\": {\"command\": \"file-both\"}\n}}\n",
		"CWD/bad.json":       "{\"mcpServers\": {\n  \"x\": {\"command\": }\n}}\n",
	}
	cfg, _, err, tr := loadIn(t, files, anthropicKey, Options{MCPConfigs: []string{
		"tools/mcp.json",
		`{"mcpServers": {"inline": {"type": "http", "url": "http://localhost:1/mcp"}, "both": {"command": "json-both"}}}`,
	}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]mcp.Server{}
	for _, s := range cfg.MCPServers {
		got[s.Name] = s
	}
	if len(got) != 3 || got["files"].Command != "from-file" || got["files"].Source.File != tr.cwd+"/tools/mcp.json" || got["files"].Source.Line != 2 ||
		got["inline"].URL != "http://localhost:1/mcp" || got["inline"].Source.File != "--mcp-config" || got["both"].Command != "json-both" {
		t.Fatalf("servers %+v", cfg.MCPServers)
	}
	_, _, err, tr = loadIn(t, files, anthropicKey, Options{MCPConfigs: []string{"tools/mcp.json", "bad.json"}})
	if err == nil || !strings.Contains(err.Error(), tr.cwd+"/bad.json: line 2, column") {
		t.Fatalf("err %v", err)
	}
}

// MCP_TIMEOUT, MCP_TOOL_TIMEOUT and MAX_MCP_OUTPUT_TOKENS from the
// environment reach the session's MCP options.
func TestMCPOptionsFromTheEnvironment(t *testing.T) {
	t.Parallel()
	env := withDefault(anthropicKey, "MCP_TIMEOUT", "4000")
	env["MCP_TOOL_TIMEOUT"], env["MAX_MCP_OUTPUT_TOKENS"] = "90000", "5000"
	cfg, _, err, _ := loadIn(t, nil, env, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if o := cfg.MCPOptions; o.ConnectTimeout != 4*time.Second || o.CallTimeout != 90*time.Second || o.MaxOutputChars != 20000 {
		t.Fatalf("MCP options %+v", o)
	}
}
