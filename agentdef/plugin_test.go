package agentdef

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLoadClaudePlugins loads the fixture plugins' agents (real corpus
// files, unchanged): each is named plugin:agent with the plugin source, a
// single-file path works beside the agents directory, the plugin agent's
// permissionMode is dropped with a warning (S-4.4), and a user agent of the
// same full name shadows the plugin's.
func TestLoadClaudePlugins(t *testing.T) {
	fx := func(p string) string {
		a, _ := filepath.Abs(filepath.Join("..", "internal", "plugin", "testdata", p))
		return a
	}
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".claude", "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".claude", "agents", "x.md"), []byte("---\nname: team-reviewer\ndescription: user one\n---\nbody\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := Load(context.Background(), LoadOptions{Cwd: t.TempDir(), Home: home, ManagedDir: t.TempDir(), Plugins: []PluginAgents{
		{Plugin: "agent-teams", Paths: []string{fx("agent-teams/agents")}},
		{Plugin: "claude-ecosystem", Paths: []string{fx("claude-ecosystem/agents"), fx("claude-ecosystem/auditors/agent-auditor.md")}},
		{Plugin: "bad:name", Paths: []string{fx("agent-teams/agents")}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"agent-teams:team-reviewer", "agent-teams:team-debugger", "claude-ecosystem:hook-auditor", "claude-ecosystem:agent-auditor"} {
		d := set.Get(name)
		if d == nil {
			t.Errorf("%s not loaded", name)
			continue
		}
		if d.Source != SourcePlugin || d.Plugin != strings.Split(name, ":")[0] {
			t.Errorf("%s: source %s plugin %q", name, d.Source, d.Plugin)
		}
		if d.PermissionMode != "" {
			t.Errorf("%s: permissionMode %q kept", name, d.PermissionMode)
		}
	}
	if d := set.Get("team-reviewer"); d == nil || d.Source != SourceUser {
		t.Errorf("user team-reviewer: %+v", d)
	}
	var msgs []string
	for _, d := range set.Diagnostics() {
		msgs = append(msgs, d.Message)
	}
	if !slices.ContainsFunc(msgs, func(m string) bool { return strings.Contains(m, `plugin agents cannot set "permissionMode"`) }) {
		t.Errorf("no permissionMode warning in %q", msgs)
	}
	if !slices.ContainsFunc(msgs, func(m string) bool { return strings.Contains(m, `invalid plugin name "bad:name"`) }) {
		t.Errorf("no bad-name error in %q", msgs)
	}
}
