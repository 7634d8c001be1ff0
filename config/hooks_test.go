package config

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/hooks"
)

// hookJSON is a settings file with one PreToolUse hook running cmd.
func hookJSON(extra, cmd string) string {
	return `{` + extra + `"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "` + cmd + `"}]}]}}`
}

func TestHooksConfigMergesEveryFile(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		files map[string]string
		trust TrustProject
		// want are the commands that run, in order; warn a warning expected.
		want []string
		warn string
	}{
		{name: "hooks add up, lowest file first", files: map[string]string{
			"HOME/.config/cadre/settings.json": hookJSON("", "user"),
			"CWD/.cadre/settings.json":         hookJSON("", "project"),
			"CWD/.cadre/settings.local.json":   hookJSON("", "local"),
			"MANAGED/managed-settings.json":    hookJSON("", "managed"),
		}, want: []string{"user", "project", "local", "managed"}},
		{name: "allowManagedHooksOnly keeps the managed ones", files: map[string]string{
			"HOME/.config/cadre/settings.json": hookJSON("", "user"),
			"CWD/.cadre/settings.json":         hookJSON("", "project"),
			"MANAGED/managed-settings.json":    hookJSON(`"allowManagedHooksOnly": true,`, "managed"),
		}, want: []string{"managed"}, warn: "allow only managed hooks"},
		{name: "allowManagedHooksOnly outside managed settings is ignored", files: map[string]string{
			"CWD/.cadre/settings.json": hookJSON(`"allowManagedHooksOnly": true,`, "project"),
		}, want: []string{"project"}, warn: "honoured only in managed settings"},
		{name: "disableAllHooks in a user file leaves managed hooks", files: map[string]string{
			"HOME/.config/cadre/settings.json": hookJSON(`"disableAllHooks": true,`, "user"),
			"CWD/.cadre/settings.json":         hookJSON("", "project"),
			"MANAGED/managed-settings.json":    hookJSON("", "managed"),
		}, want: []string{"managed"}},
		{name: "disableAllHooks in managed settings turns every hook off", files: map[string]string{
			"CWD/.cadre/settings.json":      hookJSON("", "project"),
			"MANAGED/managed-settings.json": hookJSON(`"disableAllHooks": true,`, "managed"),
		}, want: nil},
		{name: "a lower file cannot undo managed disableAllHooks", files: map[string]string{
			"CWD/.cadre/settings.json":      hookJSON(`"disableAllHooks": false,`, "project"),
			"MANAGED/managed-settings.json": `{"disableAllHooks": true}`,
		}, want: nil},
		{name: "untrusted project hooks are dropped", files: map[string]string{
			"HOME/.config/cadre/settings.json": hookJSON("", "user"),
			"CWD/.cadre/settings.json":         hookJSON("", "project"),
			"CWD/.cadre/settings.local.json":   hookJSON("", "local"),
		}, trust: func(string) bool { return false }, want: []string{"user"}, warn: "is not trusted"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tr := newTree(t, c.files)
			opts := tr.opts()
			// Workspace trust (trust.go) gates project hooks before
			// HooksConfig sees them: the cases that keep them trust it.
			opts.TrustProject = c.trust == nil
			s, diags, err := LoadSettings(opts)
			if err != nil {
				t.Fatal(err)
			}
			cfg, hdiags, err := s.HooksConfig(c.trust)
			if err != nil {
				t.Fatal(err)
			}
			diags = append(diags, hdiags...)
			var got []string
			for _, e := range cfg.Entries() {
				got = append(got, e.Command)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("hooks %v, want %v", got, c.want)
			}
			var text []string
			for _, d := range diags {
				text = append(text, d.String())
			}
			if joined := strings.Join(text, "\n"); (c.warn == "") != (joined == "") || !strings.Contains(joined, c.warn) {
				t.Errorf("diagnostics %q, want one about %q", joined, c.warn)
			}
		})
	}
}

func TestHooksKeepTheirSource(t *testing.T) {
	t.Parallel()
	tr := newTree(t, map[string]string{
		"HOME/.config/cadre/settings.json": hookJSON("", "user"),
		"CWD/.cadre/settings.local.json":   hookJSON("", "local"),
		"MANAGED/managed-settings.json":    hookJSON("", "managed"),
	})
	s, _, err := LoadSettings(tr.trustedOpts())
	if err != nil {
		t.Fatal(err)
	}
	type src struct {
		file             string
		managed, project bool
	}
	var got []src
	for _, h := range s.Hooks {
		got = append(got, src{h.Source, h.Managed, h.Project})
	}
	want := []src{
		{filepath.Join(tr.home, ".config/cadre/settings.json"), false, false},
		{filepath.Join(tr.cwd, ".cadre/settings.local.json"), false, true},
		{filepath.Join(tr.managed, "managed-settings.json"), true, false},
	}
	if !slices.Equal(got, want) {
		t.Errorf("sources %+v, want %+v", got, want)
	}
	cfg, _, _ := s.HooksConfig(nil)
	if e := cfg.Entries(); len(e) != 3 || e[1].Source != want[1].file {
		t.Errorf("entries %+v", e)
	}
}

func TestHooksConfigRejectsABadValue(t *testing.T) {
	t.Parallel()
	tr := newTree(t, map[string]string{
		"CWD/.cadre/settings.json": `{"hooks": {"PreToolUse": [{"hooks": [{"type": "command"}]}]}}`,
	})
	s, _, err := LoadSettings(tr.trustedOpts())
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = s.HooksConfig(nil)
	if !errors.Is(err, ErrMalformed) || !errors.Is(err, hooks.ErrInvalid) || !strings.Contains(err.Error(), "settings.json") {
		t.Errorf("err = %v", err)
	}
}

// trustedOpts are tr's options with the workspace trusted, so its own
// hooks load (trust.go gates them otherwise).
func (tr tree) trustedOpts() SettingsOptions {
	o := tr.opts()
	o.TrustProject = true
	return o
}
