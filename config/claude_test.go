package config

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/permission"
)

// TestClaudeCodeSettingsFiles (issue 29): Claude Code's settings files are
// read beside cadre's with Claude Code's precedence (managed > flags >
// local > project > user), cadre's file winning a clash at one level with
// a warning naming both files; lists add up across all of them.
func TestClaudeCodeSettingsFiles(t *testing.T) {
	t.Parallel()
	tr := newTree(t, map[string]string{
		"HOME/.claude/settings.json":                `{"model": "claude-user", "permissions": {"deny": ["Bash(rm:*)"]}, "env": {"A": "claude-user", "B": "claude-user"}}`,
		"HOME/.config/cadre/settings.json":          `{"env": {"A": "cadre-user"}}`,
		"CWD/.claude/settings.json":                 `{"model": "claude-project", "subagentModel": "claude-project", "permissions": {"deny": ["Read(./secret)"]}}`,
		"CWD/.cadre/settings.json":                  `{"subagentModel": "cadre-project"}`,
		"CWD/.claude/settings.local.json":           `{"model": "claude-local"}`,
		"MANAGED/claude-code/managed-settings.json": `{"permissions": {"deny": ["WebFetch"]}, "smallModel": "managed-claude"}`,
		"MANAGED/managed-settings.json":             `{"smallModel": "managed-cadre"}`,
	})
	opts := tr.opts()
	opts.TrustProject = true
	s, diags, err := LoadSettings(opts)
	if err != nil {
		t.Fatal(err)
	}
	p := func(rel string) string {
		return strings.NewReplacer("HOME", tr.home, "CWD", tr.cwd, "MANAGED", tr.managed).Replace(rel)
	}
	if s.Model.Value != "claude-local" || s.Model.Source != p("CWD/.claude/settings.local.json") {
		t.Errorf("model %+v: the project's local file is above the project's and the user's", s.Model)
	}
	if s.SubagentModel.Value != "cadre-project" {
		t.Errorf("subagentModel %+v: cadre's project file wins over Claude Code's", s.SubagentModel)
	}
	if s.SmallModel.Value != "managed-cadre" {
		t.Errorf("smallModel %+v: cadre's managed file wins over Claude Code's", s.SmallModel)
	}
	if s.Env["A"] != "cadre-user" || s.Env["B"] != "claude-user" {
		t.Errorf("env %v", s.Env)
	}
	var deny []string
	for _, r := range s.Permissions.Rules {
		if r.Behavior == permission.Deny {
			deny = append(deny, r.String()+" "+r.Source)
		}
	}
	for _, want := range []string{"Bash(rm:*) " + p("HOME/.claude/settings.json"), "Read(./secret) " + p("CWD/.claude/settings.json"), "WebFetch " + p("MANAGED/claude-code/managed-settings.json")} {
		if !slices.Contains(deny, want) {
			t.Errorf("deny rules %v lack %s", deny, want)
		}
	}
	var clashes []string
	for _, d := range diags {
		if strings.Contains(d.Message, "cadre's file wins") {
			clashes = append(clashes, d.Message)
		}
	}
	wantClash := []string{
		`"env.A" is set in both ` + p("HOME/.claude/settings.json") + " and " + p("HOME/.config/cadre/settings.json"),
		`"subagentModel" is set in both ` + p("CWD/.claude/settings.json") + " and " + p("CWD/.cadre/settings.json"),
		`"smallModel" is set in both ` + p("MANAGED/claude-code/managed-settings.json") + " and " + p("MANAGED/managed-settings.json"),
	}
	if len(clashes) != len(wantClash) {
		t.Errorf("clash warnings %q, want %d", clashes, len(wantClash))
	}
	for _, w := range wantClash {
		if !slices.ContainsFunc(clashes, func(c string) bool { return strings.HasPrefix(c, w) }) {
			t.Errorf("no warning %q in %q", w, clashes)
		}
	}
	// The effective entries say where each value came from.
	got := map[string]string{}
	for _, e := range s.Effective() {
		got[e.Key+"="+string(e.Value)] = e.Source
	}
	for kv, src := range map[string]string{
		`model="claude-local"`:          p("CWD/.claude/settings.local.json"),
		`env.A="cadre-user"`:            p("HOME/.config/cadre/settings.json"),
		`env.B="claude-user"`:           p("HOME/.claude/settings.json"),
		`permissions.deny="Bash(rm:*)"`: p("HOME/.claude/settings.json"),
		`smallModel="managed-cadre"`:    p("MANAGED/managed-settings.json"),
		`subagentModel="cadre-project"`: p("CWD/.cadre/settings.json"),
		`permissions.deny="WebFetch"`:   p("MANAGED/claude-code/managed-settings.json"),
	} {
		if got[kv] != src {
			t.Errorf("entry %s from %q, want %s (entries %v)", kv, got[kv], src, got)
		}
	}
	if _, ok := got[`model="claude-user"`]; ok {
		t.Error("a replaced value is still among the effective entries")
	}
}

// TestClaudeManagedDirFromEnv: Load takes Claude Code's managed directory
// from CADRE_CLAUDE_MANAGED_DIR (tests never touch /etc).
func TestClaudeManagedDirFromEnv(t *testing.T) {
	t.Parallel()
	tr := newTree(t, map[string]string{"MANAGED/cc/managed-settings.json": `{"permissions": {"deny": ["WebSearch"]}}`})
	cfg, _, err := Load(context.Background(), tr.cwd, Options{ManagedDir: tr.managed,
		Getenv: envOf(map[string]string{"HOME": tr.home, "ANTHROPIC_API_KEY": "k", "CADRE_CLAUDE_MANAGED_DIR": filepath.Join(tr.managed, "cc")})})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(cfg.Permissions.Rules, func(r permission.Rule) bool { return r.Behavior == permission.Deny && r.String() == "WebSearch" }) {
		t.Errorf("rules %v", cfg.Permissions.Rules)
	}
}

// TestXDGConfigHome: cadre's user files are in $XDG_CONFIG_HOME/cadre;
// a user who has only the old ~/.config/cadre keeps it.
func TestXDGConfigHome(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"xdg", map[string]string{"XDG/cadre/settings.json": `{"model": "xdg"}`, "HOME/.config/cadre/settings.json": `{"model": "old"}`}, "xdg"},
		{"old location kept", map[string]string{"HOME/.config/cadre/settings.json": `{"model": "old"}`}, "old"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr := newTree(t, nil)
			xdg := filepath.Join(filepath.Dir(tr.home), "xdg")
			for name, body := range tc.files {
				path := strings.NewReplacer("XDG", xdg, "HOME", tr.home).Replace(name)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			opts := tr.opts()
			opts.ConfigHome = xdg
			s, _, err := LoadSettings(opts)
			if err != nil {
				t.Fatal(err)
			}
			if s.Model.Value != tc.want {
				t.Errorf("model %+v, want %s", s.Model, tc.want)
			}
		})
	}
	// The trust file follows: `cadre trust` under XDG_CONFIG_HOME trusts
	// the workspace for Load.
	tr := newTree(t, nil)
	xdg := filepath.Join(filepath.Dir(tr.home), "xdg")
	file := TrustFileIn(tr.home, xdg)
	if file != filepath.Join(xdg, "cadre", TrustFileName) {
		t.Fatalf("trust file %s", file)
	}
	if _, err := TrustWorkspaceIn(file, tr.cwd); err != nil {
		t.Fatal(err)
	}
	trust, err := ResolveTrust(TrustOptions{Cwd: tr.cwd, Home: tr.home, ConfigHome: xdg})
	if err != nil || !trust.Trusted || trust.Source != file {
		t.Errorf("trust %+v %v", trust, err)
	}
}

// In the home directory the project's .claude/settings.json is the user's
// ~/.claude/settings.json: it is read once, so its hooks run once.
func TestClaudeSettingsInHomeReadOnce(t *testing.T) {
	t.Parallel()
	tr := newTree(t, map[string]string{"HOME/.claude/settings.json": `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}, "permissions": {"deny": ["WebFetch"]}}`})
	opts := tr.opts()
	opts.Cwd = tr.home
	s, _, err := LoadSettings(opts)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := s.GatedHooksConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Len() != 1 || len(s.Permissions.Rules) != 1 {
		t.Errorf("hooks %d, rules %v: the file was read more than once", cfg.Len(), s.Permissions.Rules)
	}
}

// SettingsOptions.Sources (the SDK's settingSources, --setting-sources)
// reads only the levels named, cadre's and Claude Code's file of each;
// managed settings always.
func TestSettingSources(t *testing.T) {
	t.Parallel()
	tr := newTree(t, map[string]string{
		"HOME/.claude/settings.json":       `{"permissions": {"deny": ["Bash(user-claude:*)"]}}`,
		"HOME/.config/cadre/settings.json": `{"permissions": {"deny": ["Bash(user-cadre:*)"]}}`,
		"CWD/.claude/settings.json":        `{"permissions": {"deny": ["Bash(project-claude:*)"]}}`,
		"CWD/.cadre/settings.local.json":   `{"permissions": {"deny": ["Bash(local-cadre:*)"]}}`,
		"MANAGED/managed-settings.json":    `{"permissions": {"deny": ["Bash(managed:*)"]}}`,
	})
	for _, tc := range []struct {
		sources string
		want    []string
	}{
		{"user,project,local", []string{"user-claude", "user-cadre", "project-claude", "local-cadre", "managed"}},
		{"project", []string{"project-claude", "managed"}},
		{"user, local", []string{"user-claude", "user-cadre", "local-cadre", "managed"}},
		{"", []string{"managed"}},
	} {
		src, err := ParseSources(tc.sources)
		if err != nil {
			t.Fatal(err)
		}
		opts := tr.opts()
		opts.Sources = src
		s, _, err := LoadSettings(opts)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range s.Permissions.Rules {
			got = append(got, strings.TrimSuffix(strings.TrimPrefix(r.String(), "Bash("), ":*)"))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("sources %q: rules %v, want %v", tc.sources, got, tc.want)
		}
	}
	if _, err := ParseSources("user,policy"); err == nil || !strings.Contains(err.Error(), `"policy"`) {
		t.Errorf("bad source: %v", err)
	}
}
