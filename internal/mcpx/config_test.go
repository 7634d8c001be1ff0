package mcpx

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestParseFile(t *testing.T) {
	t.Parallel()
	getenv := env(map[string]string{"TOKEN": "s3cret", "HOME": "/home/u"})
	tests := []struct {
		name  string
		in    string
		want  []ServerConfig
		diags []string // "line: severity: message" substrings, in order
		err   string
	}{
		{
			name: "claude code's shapes",
			in: `{
  "mcpServers": {
    "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "${HOME}/src"], "env": {"K": "${TOKEN}"}},
    "api": {"type": "http", "url": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}, "timeout": 5000},
    "old": {"type": "sse", "url": "${BASE:-http://localhost:9000}/sse"},
    "explicit": {"type": "stdio", "command": "srv"}
  }
}`,
			want: []ServerConfig{
				{Name: "api", Transport: HTTP, URL: "https://api.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer s3cret"}, CallTimeout: 5 * time.Second, Source: Source{Scope: ScopeProject, File: "f", Line: 4}},
				{Name: "explicit", Transport: Stdio, Command: "srv", Source: Source{Scope: ScopeProject, File: "f", Line: 6}},
				{Name: "files", Transport: Stdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/home/u/src"}, Env: map[string]string{"K": "s3cret"}, Source: Source{Scope: ScopeProject, File: "f", Line: 3}},
				{Name: "old", Transport: SSE, URL: "http://localhost:9000/sse", Source: Source{Scope: ScopeProject, File: "f", Line: 5}},
			},
		},
		{
			name: "unknown keys warn with their line",
			in: `{"mcpServers": {
  "a": {"command": "x",
        "arg": ["y"],
        "alwaysLoad": true}
},
"servers": {}}`,
			want: []ServerConfig{{Name: "a", Transport: Stdio, Command: "x", Source: Source{Scope: ScopeProject, File: "f", Line: 2}}},
			diags: []string{
				`f:6: warning: unknown key "servers" ignored (did you mean "mcpServers"?)`,
				`f:4: warning: server "a": "alwaysLoad" is not supported by cadre; ignored`,
				`f:3: warning: server "a": unknown key "arg" ignored (did you mean "args"?)`,
			},
		},
		{
			name:  "unset variable stays and warns",
			in:    `{"mcpServers": {"a": {"command": "${NOPE}/bin"}}}`,
			want:  []ServerConfig{{Name: "a", Transport: Stdio, Command: "${NOPE}/bin", Source: Source{Scope: ScopeProject, File: "f", Line: 1}}},
			diags: []string{`f:1: warning: server "a": environment variable NOPE is not set`},
		},
		{
			name: "bad entries are skipped, others load",
			in: `{"mcpServers": {
  "nocmd": {"args": []},
  "ws": {"type": "ws", "url": "ws://x"},
  "urlnotype": {"url": "https://x"},
  "badurl": {"type": "http", "url": "ftp://x"},
  "badargs": {"command": "x", "args": "y"},
  "notobj": 3,
  "ok": {"command": "fine", "timeout": 10}
}}`,
			want: []ServerConfig{{Name: "ok", Transport: Stdio, Command: "fine", Source: Source{Scope: ScopeProject, File: "f", Line: 8}}},
			diags: []string{
				`f:6: error: server "badargs" skipped: "args" must be a list of strings`,
				`f:5: error: server "badurl" skipped: "ftp://x" is not an http:// or https:// URL`,
				`f:2: error: server "nocmd" skipped: a stdio server needs a "command"`,
				`f:7: error: server "notobj" skipped: its configuration must be an object`,
				`f:8: warning: server "ok": "timeout" below 1000 ms is ignored`,
				`f:4: error: server "urlnotype" skipped: it has a "url" but no "type"`,
				`f:3: error: server "ws" skipped: transport type "ws" is not supported`,
			},
		},
		{name: "syntax error names the line", in: "{\"mcpServers\": {\n  \"a\": {\"command\": \"x\",}\n}}", err: "f: line 2, column"},
		{name: "truncated", in: "{\"mcpServers\": {\n", err: "f: line 2, column 1: unexpected end of JSON"},
		{name: "not an object", in: `[1]`, err: "f:1: an MCP configuration must be a JSON object"},
		{name: "mcpServers not an object", in: "{\n\"mcpServers\": []}", err: `f:2: "mcpServers" must be an object`},
		{name: "trailing data", in: `{"mcpServers": {}} {}`, err: "unexpected data after the JSON value"},
		{name: "no mcpServers", in: `{}`, diags: []string{`f: warning: no "mcpServers" object`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, diags, err := ParseFile("f", []byte(tt.in), ScopeProject, getenv)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("servers (-want +got):\n%s", d)
			}
			if len(diags) != len(tt.diags) {
				t.Fatalf("diags = %q, want %d", diags, len(tt.diags))
			}
			for i, d := range diags {
				if !strings.Contains(d.String(), tt.diags[i]) {
					t.Errorf("diag %d = %q, want %q", i, d, tt.diags[i])
				}
			}
		})
	}
}

func TestParseServersFromSettings(t *testing.T) {
	t.Parallel()
	file := "{\n  \"model\": \"x\",\n  \"mcpServers\": {\n    \"a\": {\"command\": \"srv\", \"bogus\": 1}\n  }\n}"
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(file), &top); err != nil {
		t.Fatal(err)
	}
	got, diags, err := ParseServers("settings.json", 3, top["mcpServers"], ScopeSettings, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Source != (Source{Scope: ScopeSettings, File: "settings.json", Line: 4}) {
		t.Errorf("servers = %+v", got)
	}
	if len(diags) != 1 || diags[0].Line != 4 || !strings.Contains(diags[0].Message, `"bogus"`) {
		t.Errorf("diags = %v", diags)
	}
	if _, _, err := ParseServers("s.json", 7, json.RawMessage(`[]`), ScopeUser, nil); err == nil || !strings.Contains(err.Error(), "s.json:7:") {
		t.Errorf("err = %v", err)
	}
}

func TestParseFlag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "m.json"), []byte(`{"mcpServers": {"f": {"command": "from-file"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _, err := ParseFlag("m.json", dir, nil)
	if err != nil || len(got) != 1 || got[0].Command != "from-file" || got[0].Source.File != filepath.Join(dir, "m.json") || got[0].Source.Scope != ScopeFlag {
		t.Fatalf("file: %+v %v", got, err)
	}
	got, _, err = ParseFlag(` {"mcpServers": {"j": {"type": "http", "url": "http://h/mcp"}}}`, dir, nil)
	if err != nil || len(got) != 1 || got[0].URL != "http://h/mcp" || got[0].Source.File != "--mcp-config" {
		t.Fatalf("inline: %+v %v", got, err)
	}
	if _, _, err := ParseFlag("missing.json", dir, nil); err == nil || !strings.Contains(err.Error(), "--mcp-config") {
		t.Errorf("missing file: %v", err)
	}
	if _, _, err := ParseFlag(`{"mcpServers": `, dir, nil); err == nil || !strings.Contains(err.Error(), "--mcp-config: line 1") {
		t.Errorf("bad inline JSON: %v", err)
	}
}

func TestParseInline(t *testing.T) {
	t.Parallel()
	s, _, err := ParseInline("agents/a.md", "pw", json.RawMessage(`{"command": "npx", "args": ["@playwright/mcp"]}`), nil)
	if err != nil || s.Name != "pw" || s.Source.Scope != ScopeAgent || s.Command != "npx" {
		t.Fatalf("%+v %v", s, err)
	}
	if _, _, err := ParseInline("agents/a.md", "pw", json.RawMessage(`{"type": "ws"}`), nil); err == nil || !strings.Contains(err.Error(), "agents/a.md: mcpServers pw: ") {
		t.Errorf("err = %v", err)
	}
}

func TestMerge(t *testing.T) {
	t.Parallel()
	user := []ServerConfig{{Name: "a", Command: "user-a"}, {Name: "b", Command: "user-b"}}
	project := []ServerConfig{{Name: "b", Command: "project-b"}, {Name: "c", Command: "project-c"}}
	flag := []ServerConfig{{Name: "c", Command: "flag-c"}}
	got := Merge(user, project, flag)
	want := []string{"a=user-a", "b=project-b", "c=flag-c"}
	var have []string
	for _, s := range got {
		have = append(have, s.Name+"="+s.Command)
	}
	if d := cmp.Diff(want, have); d != "" {
		t.Error(d)
	}
}

func TestExpand(t *testing.T) {
	t.Parallel()
	getenv := env(map[string]string{"A": "1", "EMPTY": ""})
	for _, tt := range []struct{ in, want, missing string }{
		{"plain", "plain", ""},
		{"${A}", "1", ""},
		{"x${A}y${A}z", "x1y1z", ""},
		{"${B:-two}", "two", ""},
		{"${EMPTY:-d}", "d", ""},
		{"${A:-d}", "1", ""},
		{"${B}", "${B}", "B"},
		{"${B:-}", "", ""},
		{"$A ${", "$A ${", ""},
		{"${B:-a:-b}", "a:-b", ""},
	} {
		got, missing := Expand(tt.in, getenv)
		if got != tt.want || strings.Join(missing, ",") != tt.missing {
			t.Errorf("Expand(%q) = %q %v, want %q %q", tt.in, got, missing, tt.want, tt.missing)
		}
	}
}

func FuzzParseFile(f *testing.F) {
	f.Add([]byte(`{"mcpServers": {"a": {"command": "x", "args": ["${A:-b}"], "env": {"K": "${K}"}}}}`))
	f.Add([]byte(`{"mcpServers": {"h": {"type": "http", "url": "https://x", "headers": {"a": "b"}, "timeout": 2000}}}`))
	f.Add([]byte(`{"mcpServers": {"s": {"type": "sse", "url": 3}}, "x": [1, {"y": null}]}`))
	f.Add([]byte("{\"mcpServers\": {\n\"a\":"))
	f.Add([]byte(`{"a/b~c": {"": {}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		servers, diags, err := ParseFile("f", data, ScopeProject, env(map[string]string{"A": "1"}))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f:") && !strings.HasPrefix(err.Error(), "f: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, d := range diags {
			if d.File != "f" || d.Message == "" {
				t.Fatalf("bad diagnostic %+v", d)
			}
		}
		for _, s := range servers {
			if ValidateName(s.Name) != nil {
				t.Fatalf("invalid name accepted: %q", s.Name)
			}
			switch s.Transport {
			case Stdio:
				if strings.TrimSpace(s.Command) == "" {
					t.Fatalf("stdio server without command: %+v", s)
				}
			case HTTP, SSE:
				if !strings.HasPrefix(s.URL, "http://") && !strings.HasPrefix(s.URL, "https://") {
					t.Fatalf("bad url accepted: %+v", s)
				}
			default:
				t.Fatalf("bad transport: %+v", s)
			}
		}
	})
}

func TestParseAgentServers(t *testing.T) {
	t.Parallel()
	entries := []json.RawMessage{
		json.RawMessage(`"github"`),
		json.RawMessage(`"github"`),
		json.RawMessage(`{"pw": {"command": "npx", "args": ["@playwright/mcp@latest"]}, "api": {"type": "http", "url": "${API:-http://localhost:1}/mcp"}}`),
		json.RawMessage(`{"bad": {"type": "ws"}}`),
		json.RawMessage(`3`),
	}
	got, diags := ParseAgentServers("agents/x.md", entries, []string{"github", " ", "pw"}, nil)
	if d := cmp.Diff([]string{"github"}, got.Names); d != "" {
		t.Error(d)
	}
	if len(got.Inline) != 2 || got.Inline[0].Name != "api" || got.Inline[0].URL != "http://localhost:1/mcp" || got.Inline[1].Name != "pw" || got.Inline[1].Source.Scope != ScopeAgent {
		t.Errorf("inline = %+v", got.Inline)
	}
	if d := cmp.Diff([]string{"github", "pw"}, got.Required); d != "" {
		t.Error(d)
	}
	if len(diags) != 2 || !strings.Contains(diags[0].String(), `agents/x.md: error: server "bad" skipped`) || !strings.Contains(diags[1].Message, "3 is neither") {
		t.Errorf("diags = %v", diags)
	}
}

// Claude Code's variables: MCP_TIMEOUT (connect) and MCP_TOOL_TIMEOUT
// (one call) in milliseconds, MAX_MCP_OUTPUT_TOKENS (about four
// characters a token); unset or bad values keep the defaults.
func TestOptionsFromEnv(t *testing.T) {
	t.Parallel()
	got := OptionsFromEnv(env(map[string]string{"MCP_TIMEOUT": "1500", "MCP_TOOL_TIMEOUT": " 2500 ", "MAX_MCP_OUTPUT_TOKENS": "100"}))
	if got.ConnectTimeout != 1500*time.Millisecond || got.CallTimeout != 2500*time.Millisecond || got.MaxOutputChars != 400 {
		t.Errorf("options %+v", got)
	}
	bad := OptionsFromEnv(env(map[string]string{"MCP_TIMEOUT": "soon", "MCP_TOOL_TIMEOUT": "-3", "MAX_MCP_OUTPUT_TOKENS": "0"}))
	if d := withDefaults(bad); bad != (Options{}) || d.ConnectTimeout != 30*time.Second || d.CallTimeout != 10*time.Minute || d.MaxOutputChars != 100_000 {
		t.Errorf("bad values: %+v, defaults %+v", bad, d)
	}
}
