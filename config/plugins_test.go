package config

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/plugin"
)

// copyDir copies the fixture plugin src to dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-R", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
}

// TestPluginTrust loads the two fixture plugins with --plugin-dir: their
// agents and skills always load, namespaced; their hooks and MCP servers
// load from a plugin outside the workspace, and from one inside the
// repository only when the workspace is trusted — otherwise each is
// reported as ignored.
func TestPluginTrust(t *testing.T) {
	t.Parallel()
	fx := func(p string) string {
		a, _ := filepath.Abs(filepath.Join("..", "internal", "plugin", "testdata", p))
		return a
	}
	for _, c := range []struct {
		name    string
		inside  bool
		trusted bool
		gated   bool
	}{
		{name: "outside the workspace", gated: false},
		{name: "inside an untrusted repository", inside: true, gated: true},
		{name: "inside a trusted repository", inside: true, trusted: true, gated: false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tr := newTree(t, map[string]string{"CWD/.git/HEAD": "ref: refs/heads/main\n"})
			dirs := []string{fx("agent-teams"), fx("claude-ecosystem")}
			if c.inside {
				for i, d := range dirs {
					dst := filepath.Join(tr.cwd, "vendor", filepath.Base(d))
					copyDir(t, d, dst)
					dirs[i] = dst
				}
			}
			cfg, diags, err := Load(t.Context(), tr.cwd, Options{Getenv: envOf(map[string]string{"HOME": tr.home, "ANTHROPIC_API_KEY": "k"}),
				ManagedDir: tr.managed, ClaudeManagedDir: filepath.Join(tr.managed, "cc"), PluginDirs: []plugin.Dir{{Path: dirs[0]}, {Path: dirs[1]}}, TrustProject: c.trusted})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, d := range cfg.Agents {
				names = append(names, d.Name)
			}
			for _, want := range []string{"agent-teams:team-reviewer", "agent-teams:team-debugger", "claude-ecosystem:hook-auditor", "claude-ecosystem:agent-auditor"} {
				if !slices.Contains(names, want) {
					t.Errorf("agent %s missing from %v", want, names)
				}
			}
			if cfg.Skills.Get("claude-ecosystem:audit-notes") == nil {
				t.Errorf("skill claude-ecosystem:audit-notes missing")
			}
			hooked := false
			for _, e := range cfg.Hooks.Entries() {
				if strings.Contains(e.Command, filepath.Join(dirs[0], "hooks", "guard.sh")) {
					hooked = true
				}
			}
			served := false
			for _, s := range cfg.MCPServers {
				if s.Name == "audit-notes" {
					served = true
				}
			}
			if hooked == c.gated || served == c.gated {
				t.Errorf("hook loaded %v, server loaded %v; want %v", hooked, served, !c.gated)
			}
			var msgs []string
			for _, d := range diags {
				msgs = append(msgs, d.String())
			}
			reported := slices.ContainsFunc(msgs, func(m string) bool { return strings.Contains(m, "hooks ignored") && strings.Contains(m, "hooks.json") }) &&
				slices.ContainsFunc(msgs, func(m string) bool { return strings.Contains(m, "mcpServers.audit-notes ignored") })
			if reported != c.gated {
				t.Errorf("reported %v, want %v: %q", reported, c.gated, msgs)
			}
		})
	}
}

// TestUntrustedEnabledPlugins: enabledPlugins in an untrusted workspace's
// settings turns no installed plugin on, and is reported; trusted, or in
// the user's settings, it does.
func TestUntrustedEnabledPlugins(t *testing.T) {
	t.Parallel()
	fixture, _ := filepath.Abs(filepath.Join("..", "internal", "plugin", "testdata", "agent-teams"))
	installed := `{"version": 2, "plugins": {"agent-teams@acme": [{"scope": "user", "installPath": "` + fixture + `"}]}}`
	for _, c := range []struct {
		name, file string
		trusted    bool
		want       bool
	}{
		{name: "untrusted project", file: "CWD/.claude/settings.json"},
		{name: "trusted project", file: "CWD/.claude/settings.json", trusted: true, want: true},
		{name: "user", file: "HOME/.claude/settings.json", want: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg, diags, err, _ := loadIn(t, map[string]string{
				"HOME/.claude/plugins/installed_plugins.json": installed,
				c.file: `{"enabledPlugins": {"agent-teams@acme": true}}`,
			}, anthropicKey, Options{TrustProject: c.trusted})
			if err != nil {
				t.Fatal(err)
			}
			got := slices.ContainsFunc(cfg.Agents, func(d *agentdef.Definition) bool { return d.Name == "agent-teams:team-reviewer" })
			if got != c.want {
				t.Errorf("plugin agent loaded %v, want %v", got, c.want)
			}
			reported := slices.ContainsFunc(diags, func(d Diagnostic) bool { return strings.Contains(d.Message, "enabledPlugins") })
			if reported == c.want {
				t.Errorf("enabledPlugins reported %v: %v", reported, diags)
			}
		})
	}
}
