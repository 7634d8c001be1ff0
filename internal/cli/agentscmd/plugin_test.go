package agentscmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPluginAgentsListed lists agents with --plugin-dir and with a plugin
// Claude Code installed and enabled: each plugin agent shows as
// plugin:agent, with the plugin source; an installed plugin that is not
// enabled shows nothing.
func TestPluginAgentsListed(t *testing.T) {
	fx := func(p string) string {
		a, _ := filepath.Abs(filepath.Join("..", "..", "plugin", "testdata", p))
		return a
	}
	for _, c := range []struct {
		name    string
		args    []string
		enabled bool
		want    []string
		absent  []string
	}{
		{name: "plugin-dir", args: []string{"--plugin-dir", fx("agent-teams"), "--plugin-dir", fx("claude-ecosystem")},
			want: []string{"agent-teams:team-reviewer", "agent-teams:team-debugger", "claude-ecosystem:hook-auditor", "claude-ecosystem:agent-auditor"}},
		{name: "installed and enabled", enabled: true, want: []string{"agent-teams:team-reviewer"}, absent: []string{"claude-ecosystem:"}},
		{name: "installed, not enabled", absent: []string{"agent-teams:", "claude-ecosystem:"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			installed, _ := json.Marshal(map[string]any{"version": 2, "plugins": map[string]any{
				"agent-teams@acme": []map[string]string{{"scope": "user", "installPath": fx("agent-teams")}}}})
			for path, body := range map[string]string{
				filepath.Join(e.home, ".claude", "plugins", "installed_plugins.json"): string(installed),
				filepath.Join(e.home, ".claude", "settings.json"):                     `{"enabledPlugins": {"agent-teams@acme": ` + map[bool]string{true: "true", false: "false"}[c.enabled] + `}}`,
			} {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			out, errOut, err := e.run(append([]string{"--json"}, c.args...)...)
			if err != nil {
				t.Fatalf("%v: %s", err, errOut)
			}
			var doc struct {
				Agents []struct {
					Name, Source, Plugin string
				} `json:"agents"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			got := map[string]string{}
			for _, a := range doc.Agents {
				got[a.Name] = a.Source + "/" + a.Plugin
			}
			for _, w := range c.want {
				if src := got[w]; src != "plugin/"+strings.Split(w, ":")[0] {
					t.Errorf("%s: %q in %v", w, src, got)
				}
			}
			for _, a := range c.absent {
				for n := range got {
					if strings.HasPrefix(n, a) {
						t.Errorf("%s listed", n)
					}
				}
			}
			table, _, err := e.run(c.args...)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(table, w) {
					t.Errorf("table lacks %s:\n%s", w, table)
				}
			}
		})
	}
}
