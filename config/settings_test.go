package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/permission"
)

type tree struct {
	home, cwd, managed string
}

func newTree(t *testing.T, files map[string]string) tree {
	t.Helper()
	root := t.TempDir()
	tr := tree{home: filepath.Join(root, "home"), cwd: filepath.Join(root, "proj"), managed: filepath.Join(root, "etc")}
	for _, d := range []string{tr.home, tr.cwd, tr.managed} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range files {
		p := strings.NewReplacer("HOME", tr.home, "CWD", tr.cwd, "MANAGED", tr.managed).Replace(name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return tr
}

func (tr tree) opts() SettingsOptions {
	return SettingsOptions{Cwd: tr.cwd, Home: tr.home, ManagedDir: tr.managed, ClaudeManagedDir: filepath.Join(tr.managed, "claude-code")}
}

func TestLoadMergesInPrecedenceOrder(t *testing.T) {
	tr := newTree(t, map[string]string{
		"HOME/.config/cadre/settings.json": `{"model":"user-model","provider":"openai","permissions":{"allow":["Bash(ls:*)"],"defaultMode":"plan"},
			"env":{"A":"user","B":"user"},"modelAliases":{"anthropic":{"sonnet":"s-user","opus":"o-user"}},"hooks":{"Stop":[]}}`,
		"CWD/.cadre/settings.json":             `{"model":"project-model","permissions":{"deny":["Bash(rm:*)"],"additionalDirectories":["../shared","~/notes"]},"env":{"B":"project"}}`,
		"CWD/.cadre/settings.local.json":       `{"permissions":{"ask":["Bash(git push:*)"],"defaultMode":"acceptEdits"},"modelAliases":{"anthropic":{"sonnet":"s-local"}}}`,
		"CWD/extra.json":                       `{"permissions":{"allow":["Read"]},"model":"flag-file-model"}`,
		"MANAGED/managed-settings.json":        `{"permissions":{"deny":["WebFetch"]}}`,
		"MANAGED/managed-settings.d/20-b.json": `{"permissions":{"deny":["Bash(curl:*)"],"disableBypassPermissionsMode":"disable"},"env":{"A":"managed"}}`,
		"MANAGED/managed-settings.d/10-a.json": `{"permissions":{"deny":["Agent(Explore)"]},"model":"managed-model"}`,
		"MANAGED/managed-settings.d/notes.txt": `not json`,
	})
	opts := tr.opts()
	opts.TrustProject = true // the project files may widen: this test is about precedence
	opts.SettingsFile = "extra.json"
	flagRules, _ := permission.ParseRules(permission.Allow, permission.SourceAllowedTools, "", []string{"Bash(npm test:*)"})
	opts.Flags = Flags{Rules: flagRules, AddDirs: []string{"flagdir"}}
	s, diags, err := LoadSettings(opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(diags) != 0 {
		t.Errorf("diagnostics: %v", diags)
	}
	user := filepath.Join(tr.home, ".config/cadre/settings.json")
	proj := filepath.Join(tr.cwd, ".cadre/settings.json")
	local := filepath.Join(tr.cwd, ".cadre/settings.local.json")
	extra := filepath.Join(tr.cwd, "extra.json")
	m0 := filepath.Join(tr.managed, "managed-settings.json")
	m1 := filepath.Join(tr.managed, "managed-settings.d/10-a.json")
	m2 := filepath.Join(tr.managed, "managed-settings.d/20-b.json")
	type rs struct{ B, R, Src string }
	var got []rs
	for _, r := range s.Permissions.Rules {
		got = append(got, rs{string(r.Behavior), r.String(), r.Source})
	}
	want := []rs{
		{"allow", "Bash(ls:*)", user}, {"deny", "Bash(rm:*)", proj}, {"ask", "Bash(git push:*)", local},
		{"allow", "Read", extra}, {"allow", "Bash(npm test:*)", "--allowedTools"},
		{"deny", "WebFetch", m0}, {"deny", "Agent(Explore)", m1}, {"deny", "Bash(curl:*)", m2},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
	if s.Permissions.Rules[1].Base != tr.cwd {
		t.Errorf("project rule base = %q, want %q", s.Permissions.Rules[1].Base, tr.cwd)
	}
	if diff := cmp.Diff(Value{"acceptEdits", local}, s.Permissions.DefaultMode); diff != "" {
		t.Errorf("defaultMode: %s", diff)
	}
	if diff := cmp.Diff(Value{"managed-model", m1}, s.Model); diff != "" {
		t.Errorf("model: %s", diff)
	}
	if diff := cmp.Diff(Value{"openai", user}, s.Provider); diff != "" {
		t.Errorf("provider: %s", diff)
	}
	if diff := cmp.Diff(map[string]string{"A": "managed", "B": "project"}, s.Env); diff != "" {
		t.Errorf("env: %s", diff)
	}
	if diff := cmp.Diff(map[string]map[string]string{"anthropic": {"sonnet": "s-local", "opus": "o-user"}}, s.ModelAliases); diff != "" {
		t.Errorf("aliases: %s", diff)
	}
	wantDirs := []Dir{
		{filepath.Join(filepath.Dir(tr.cwd), "shared"), proj},
		{filepath.Join(tr.home, "notes"), proj},
		{filepath.Join(tr.cwd, "flagdir"), "--add-dir"},
	}
	if diff := cmp.Diff(wantDirs, s.Permissions.AdditionalDirectories); diff != "" {
		t.Errorf("dirs (-want +got):\n%s", diff)
	}
	if !s.Permissions.DisableBypass || s.Permissions.DisableBypassSource != m2 {
		t.Errorf("disable bypass = %v from %q", s.Permissions.DisableBypass, s.Permissions.DisableBypassSource)
	}
	if len(s.Hooks) != 1 || s.Hooks[0].Source != user {
		t.Errorf("hooks = %+v", s.Hooks)
	}
	if diff := cmp.Diff([]string{user, proj, local, extra, m0, m1, m2}, s.Files); diff != "" {
		t.Errorf("files: %s", diff)
	}
	// The merged rules drive a checker: the managed deny wins over the
	// flag's allow.
	cfg := s.PermissionConfig(tr.cwd, tr.home, "")
	if cfg.Mode != permission.ModeAcceptEdits || !cfg.DisableBypass || len(cfg.Dirs) != 3 {
		t.Errorf("config = %+v", cfg)
	}
	c, err := permission.NewChecker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d := c.Check(permission.Request{Tool: "Bash", Input: []byte(`{"command":"npm test && curl x"}`)})
	if d.Behavior != permission.Deny || d.Source != m2 {
		t.Errorf("decision = %+v", d)
	}
}

func TestLoadFlagsOverrideFiles(t *testing.T) {
	tr := newTree(t, map[string]string{
		"CWD/.cadre/settings.json": `{"permissions":{"defaultMode":"plan"},"model":"m"}`,
	})
	opts := tr.opts()
	opts.Flags = Flags{Mode: "acceptEdits"}
	s, _, err := LoadSettings(opts)
	if err != nil {
		t.Fatal(err)
	}
	if s.Permissions.DefaultMode != (Value{"acceptEdits", "--permission-mode"}) || s.Model.Value != "m" {
		t.Errorf("got %+v %+v", s.Permissions.DefaultMode, s.Model)
	}
	opts.Flags = Flags{Mode: "yolo"}
	if _, _, err := LoadSettings(opts); err == nil || !strings.Contains(err.Error(), "yolo") {
		t.Errorf("bad flag mode: %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	cases := []struct {
		name, body string
		want       []string
	}{
		{"syntax", "{\n  \"model\": \"x\",\n  \"permissions\": {\"allow\": [\"Bash\",]}\n}", []string{"settings.json:3:", "invalid character"}},
		{"unterminated", "{\n  \"model\": \"x\"", []string{"settings.json:2:", "unexpected end"}},
		{"type", "{\n  \"permissions\": {\n    \"allow\": \"Bash\"\n  }\n}", []string{"settings.json:3:", "permissions.allow must be a list"}},
		{"not object", `["x"]`, []string{"settings.json:1:1", "must be a JSON object"}},
		{"trailing", "{}\n{}", []string{"settings.json:2:1", "unexpected data"}},
		{"bad deny rule", `{"permissions":{"deny":["Bash(rm"]}}`, []string{"settings.json", "permissions.deny", "missing closing"}},
		{"bad ask rule", `{"permissions":{"ask":["mcp__"]}}`, []string{"permissions.ask"}},
		{"bad mode", `{"permissions":{"defaultMode":"yolo"}}`, []string{"defaultMode", "yolo", "acceptEdits"}},
		{"bubble mode", `{"permissions":{"defaultMode":"bubble"}}`, []string{"defaultMode", "internal"}},
		{"bad disable", `{"permissions":{"disableBypassPermissionsMode":"yes"}}`, []string{"disableBypassPermissionsMode", "disable"}},
		{"bad provider", `{"provider":"gemini"}`, []string{"provider", "gemini", "anthropic, openai"}},
		{"limit not a number", "{\n  \"maxDepth\": \"3\"\n}", []string{"settings.json:2:", "maxDepth must be a whole number"}},
		{"limit below one", `{"maxConcurrentAgents": 0}`, []string{"maxConcurrentAgents must be 1 or more"}},
		{"negative price", `{"modelPrices": {"m": {"input": -1}}}`, []string{"modelPrices.m", "negative price"}},
		{"price not a number", "{\n  \"modelPrices\": {\"m\": {\"input\": \"3\"}}\n}", []string{"settings.json:2:", "modelPrices"}},
		{"empty model id", `{"modelPrices": {"": {"input": 1}}}`, []string{"modelPrices", "empty model id"}},
		{"worktree base", `{"worktree": {"base": "sideways"}}`, []string{`worktree.base is "sideways"`, `use "head"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTree(t, map[string]string{"CWD/.cadre/settings.json": tc.body})
			_, _, err := LoadSettings(tr.opts())
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("error %v is not ErrMalformed", err)
			}
			for _, w := range append(tc.want, filepath.Join(tr.cwd, ".cadre")) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	t.Run("missing --settings", func(t *testing.T) {
		tr := newTree(t, nil)
		opts := tr.opts()
		opts.SettingsFile = filepath.Join(tr.cwd, "nope.json")
		if _, _, err := LoadSettings(opts); err == nil || !strings.Contains(err.Error(), "nope.json") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("malformed managed", func(t *testing.T) {
		tr := newTree(t, map[string]string{"MANAGED/managed-settings.d/a.json": "{"})
		if _, _, err := LoadSettings(tr.opts()); err == nil || !strings.Contains(err.Error(), "a.json:1:") {
			t.Errorf("err = %v", err)
		}
	})
}

func TestLoadWarnings(t *testing.T) {
	tr := newTree(t, map[string]string{
		"CWD/.cadre/settings.json": "{\n  \"modle\": \"x\",\n  \"permissions\": {\n    \"alow\": [],\n    \"allow\": [\"Bash(ok:*)\", \"Bash(\"]\n  },\n  \"env\": {\"whatever\": \"1\"},\n  \"zzzzzzzz\": 1\n}",
	})
	opts := tr.opts()
	opts.TrustProject = true
	s, diags, err := LoadSettings(opts)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range diags {
		got = append(got, strings.TrimPrefix(d.String(), filepath.Join(tr.cwd, ".cadre", "settings.json")))
	}
	want := []string{
		`:2:3: warning: unknown key "modle" (did you mean "model"?)`,
		`:4:5: warning: unknown key "alow" in permissions (did you mean "allow"?)`,
		`:8:3: warning: unknown key "zzzzzzzz"`,
		`: warning: permissions.allow: rule "Bash(": missing closing parenthesis; rule ignored`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
	if len(s.Permissions.Rules) != 1 {
		t.Errorf("rules = %+v", s.Permissions.Rules)
	}
}

func TestLoadNothing(t *testing.T) {
	s, diags, err := LoadSettings(SettingsOptions{ManagedDir: t.TempDir()})
	if err != nil || len(diags) != 0 || len(s.Files) != 0 {
		t.Errorf("empty load: %+v %v %v", s, diags, err)
	}
	tr := newTree(t, map[string]string{"CWD/.cadre/settings.json": "\ufeff  \n"})
	_, diags, err = LoadSettings(tr.opts())
	if err != nil || len(diags) != 1 {
		t.Errorf("empty file: %v %v", diags, err)
	}
}

func TestDidYouMean(t *testing.T) {
	for in, want := range map[string]string{"allowed": "allow", "Deny": "deny", "defaultmode": "defaultMode", "xyzzy": ""} {
		if got := didYouMean("permissions", in); got != want {
			t.Errorf("didYouMean(permissions, %q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"maxConcurrentAgent": "maxConcurrentAgents", "mdel": "model", "hook": "hooks", "xyzzy": ""} {
		if got := didYouMean("", in); got != want {
			t.Errorf("didYouMean(%q) = %q, want %q", in, got, want)
		}
	}
}
