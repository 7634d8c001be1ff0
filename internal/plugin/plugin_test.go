package plugin

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLoadFixtures reads the two fixture plugins (real agent files from the
// corpus in a plugin layout) and checks every part the loader finds.
func TestLoadFixtures(t *testing.T) {
	abs := func(p string) string { a, _ := filepath.Abs(p); return a }
	cases := []struct {
		dir         string
		name, ver   string
		agents      []string
		skills      []string
		hooksFile   string
		hooksHas    string
		mcpFile     string
		mcpHas      string
		diagHas     []string
		noDiagFiles bool
	}{
		{
			dir: "testdata/agent-teams", name: "agent-teams", ver: "1.2.0",
			agents:    []string{abs("testdata/agent-teams/agents")},
			hooksFile: abs("testdata/agent-teams/hooks/hooks.json"),
			hooksHas:  abs("testdata/agent-teams/hooks/guard.sh"),
		},
		{
			dir: "testdata/claude-ecosystem", name: "claude-ecosystem", ver: "0.4.1",
			agents:  []string{abs("testdata/claude-ecosystem/agents"), abs("testdata/claude-ecosystem/auditors/agent-auditor.md")},
			skills:  []string{abs("testdata/claude-ecosystem/skills")},
			mcpFile: abs("testdata/claude-ecosystem/mcp.json"),
			mcpHas:  abs("testdata/claude-ecosystem/bin/notes-server"),
			diagHas: []string{`"commands": plugin commands are not supported`},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, diags, err := Load(c.dir, "--plugin-dir")
			if err != nil {
				t.Fatal(err)
			}
			if p.Name != c.name || p.Version != c.ver || p.Description == "" {
				t.Errorf("name %q version %q description %q", p.Name, p.Version, p.Description)
			}
			if !slices.Equal(p.AgentPaths, c.agents) {
				t.Errorf("agent paths %v, want %v", p.AgentPaths, c.agents)
			}
			if !slices.Equal(p.SkillDirs, c.skills) {
				t.Errorf("skill dirs %v, want %v", p.SkillDirs, c.skills)
			}
			if p.HooksFile != c.hooksFile || !strings.Contains(string(p.Hooks), c.hooksHas) || strings.Contains(string(p.Hooks), RootVar) {
				t.Errorf("hooks from %q: %s", p.HooksFile, p.Hooks)
			}
			if c.hooksFile != "" && !strings.Contains(string(p.Hooks), "export CLAUDE_PLUGIN_ROOT=") {
				t.Errorf("hook commands lack CLAUDE_PLUGIN_ROOT: %s", p.Hooks)
			}
			if c.mcpFile != "" && !strings.Contains(string(p.MCPServers), `"CLAUDE_PLUGIN_ROOT":"`+p.Root+`"`) {
				t.Errorf("servers lack CLAUDE_PLUGIN_ROOT: %s", p.MCPServers)
			}
			if c.hooksFile != "" {
				var h map[string]json.RawMessage
				if err := json.Unmarshal(p.Hooks, &h); err != nil || h["PreToolUse"] == nil {
					t.Errorf("hooks is not the inner hooks object: %s", p.Hooks)
				}
			}
			if p.MCPFile != c.mcpFile || !strings.Contains(string(p.MCPServers), c.mcpHas) || strings.Contains(string(p.MCPServers), RootVar) {
				t.Errorf("mcp from %q: %s", p.MCPFile, p.MCPServers)
			}
			var msgs []string
			for _, d := range diags {
				msgs = append(msgs, d.Message)
			}
			for _, want := range c.diagHas {
				if !slices.ContainsFunc(msgs, func(m string) bool { return strings.Contains(m, want) }) {
					t.Errorf("no diagnostic %q in %q", want, msgs)
				}
			}
			if len(c.diagHas) == 0 && len(diags) > 0 {
				t.Errorf("unexpected diagnostics %q", msgs)
			}
		})
	}
}

// TestLoadBad checks that bad manifests are errors naming the problem, and
// bad parts are diagnostics.
func TestLoadBad(t *testing.T) {
	cases := []struct {
		name, manifest  string
		errHas, diagHas string
	}{
		{name: "not json", manifest: `{"name":`, errHas: "plugin manifest"},
		{name: "no name", manifest: `{"version":"1"}`, errHas: `"name" is required`},
		{name: "colon name", manifest: `{"name":"a:b"}`, errHas: `invalid name "a:b"`},
		{name: "slash name", manifest: `{"name":"../x"}`, errHas: "invalid name"},
		{name: "escaping path", manifest: `{"name":"p","agents":"./../../etc"}`, diagHas: "leaves the plugin directory"},
		{name: "no dot slash", manifest: `{"name":"p","agents":"agents"}`, diagHas: `must start with "./"`},
		{name: "missing path", manifest: `{"name":"p","agents":["./nope.md"]}`, diagHas: "does not exist"},
		{name: "bad agents type", manifest: `{"name":"p","agents":3}`, diagHas: "want a path or a list"},
		{name: "bad inline hooks", manifest: `{"name":"p","hooks":"./h.json"}`, diagHas: "does not exist"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, ".claude-plugin"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, ManifestPath), []byte(c.manifest), 0o644); err != nil {
				t.Fatal(err)
			}
			_, diags, err := Load(dir, "--plugin-dir")
			if c.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), c.errHas) {
					t.Fatalf("err %v, want %q", err, c.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(diags, func(d Diagnostic) bool { return strings.Contains(d.Message, c.diagHas) }) {
				t.Errorf("diagnostics %+v, want %q", diags, c.diagHas)
			}
		})
	}
}

// TestNoManifest names a plugin without a manifest after its directory.
func TestNoManifest(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bare-plugin")
	if err := os.MkdirAll(filepath.Join(dir, "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	p, _, err := Load(dir, "--plugin-dir")
	if err != nil || p.Name != "bare-plugin" || len(p.AgentPaths) != 1 {
		t.Fatalf("%+v %v", p, err)
	}
}

// TestInstalled reads installed_plugins.json of both versions: only
// enabled plugins load, an enabled one not installed is reported, and
// --plugin-dir replaces an installed plugin of the same name.
func TestInstalled(t *testing.T) {
	fixture, _ := filepath.Abs("testdata/agent-teams")
	eco, _ := filepath.Abs("testdata/claude-ecosystem")
	for _, doc := range []string{
		`{"version":2,"plugins":{"agent-teams@acme":[{"scope":"user","installPath":%q,"version":"1.2.0"}],"claude-ecosystem@acme":[{"scope":"user","installPath":%q}]}}`,
		`{"version":1,"plugins":{"agent-teams@acme":{"installPath":%q,"version":"1.2.0"},"claude-ecosystem@acme":{"installPath":%q}}}`,
	} {
		home := t.TempDir()
		if err := os.MkdirAll(filepath.Dir(InstalledFile(home)), 0o755); err != nil {
			t.Fatal(err)
		}
		data := []byte(strings.Replace(strings.Replace(doc, "%q", `"`+fixture+`"`, 1), "%q", `"`+eco+`"`, 1))
		if err := os.WriteFile(InstalledFile(home), data, 0o644); err != nil {
			t.Fatal(err)
		}
		enabled := map[string]bool{"agent-teams@acme": true, "claude-ecosystem@acme": false, "ghost@acme": true}
		list, diags := Discover(home, nil, enabled)
		if len(list) != 1 || list[0].Name != "agent-teams" || list[0].Origin != "agent-teams@acme" {
			t.Fatalf("plugins %+v", list)
		}
		if !slices.ContainsFunc(diags, func(d Diagnostic) bool { return strings.Contains(d.Message, `"ghost@acme" is not installed`) }) {
			t.Errorf("diagnostics %+v", diags)
		}
		list, diags = Discover(home, []Dir{{Path: fixture}}, enabled)
		if len(list) != 1 || list[0].Origin != "--plugin-dir" {
			t.Fatalf("plugins %+v", list)
		}
		if !slices.ContainsFunc(diags, func(d Diagnostic) bool { return strings.Contains(d.Message, "which is used instead") }) {
			t.Errorf("diagnostics %+v", diags)
		}
	}
	if list, diags := Discover(t.TempDir(), nil, nil); len(list) != 0 || len(diags) != 0 {
		t.Errorf("empty home: %+v %+v", list, diags)
	}
}

// FuzzLoad feeds arbitrary manifests to Load: an error or a plugin, never
// a panic, and never a name with ":" or a path outside the plugin.
func FuzzLoad(f *testing.F) {
	f.Add(`{"name":"p","agents":["./a"],"hooks":{"hooks":{}},"mcpServers":"./m.json"}`)
	f.Add(`{"name":"p","skills":"./../x"}`)
	f.Fuzz(func(t *testing.T, manifest string) {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, ".claude-plugin"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ManifestPath), []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
		p, _, err := Load(dir, "x")
		if err != nil {
			return
		}
		if CheckName(p.Name) != "" {
			t.Fatalf("bad name %q accepted", p.Name)
		}
		for _, a := range append(slices.Clone(p.AgentPaths), p.SkillDirs...) {
			if r, err := filepath.Rel(p.Root, a); err != nil || strings.HasPrefix(r, "..") {
				t.Fatalf("path %q outside %q", a, p.Root)
			}
		}
	})
}

// FuzzInstalled feeds arbitrary installed_plugins.json files to Installed:
// diagnostics or absolute install paths of enabled plugins, never a panic.
func FuzzInstalled(f *testing.F) {
	f.Add(`{"version":2,"plugins":{"a@m":[{"installPath":"/x"}]}}`)
	f.Add(`{"version":1,"plugins":{"a@m":{"installPath":"rel"}}}`)
	f.Add(`{"plugins":{"a@m":[]}}`)
	f.Fuzz(func(t *testing.T, doc string) {
		home := t.TempDir()
		if err := os.MkdirAll(filepath.Dir(InstalledFile(home)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(InstalledFile(home), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		dirs, keys, _ := Installed(home, map[string]bool{"a@m": true, "b@m": false})
		if len(dirs) != len(keys) {
			t.Fatalf("%d dirs, %d keys", len(dirs), len(keys))
		}
		for i, d := range dirs {
			if !filepath.IsAbs(d) || keys[i] != "a@m" {
				t.Fatalf("dir %q key %q", d, keys[i])
			}
		}
	})
}

// TestCheckName is the table of plugin names.
func TestCheckName(t *testing.T) {
	for name, ok := range map[string]bool{
		"agent-teams": true, "claude-ecosystem": true, "p1.v2_x": true, "A": true,
		"": false, "-lead": false, ".hidden": false, "a:b": false, "a/b": false, `a\b`: false, "a..b": false,
		"sp ace": false, "é": false, strings.Repeat("a", 64): true, strings.Repeat("a", 65): false,
	} {
		if got := CheckName(name) == ""; got != ok {
			t.Errorf("CheckName(%q) ok=%v, want %v", name, got, ok)
		}
	}
}
