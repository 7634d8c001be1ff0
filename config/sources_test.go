package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSettingSources loads each combination of the levels a program may
// name (--setting-sources): the model comes from the highest level loaded,
// and a level left out is not read at all (its broken file is no error).
func TestSettingSourcesPickLevels(t *testing.T) {
	t.Parallel()
	home, cwd := t.TempDir(), t.TempDir()
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(home, ".config", "cadre", "settings.json"), `{"model": "user-model"}`)
	write(filepath.Join(cwd, ".cadre", "settings.json"), `{"model": "project-model"}`)
	write(filepath.Join(cwd, ".cadre", "settings.local.json"), `{"model": "local-model"}`)
	for _, tc := range []struct {
		sources []string
		want    string
	}{
		{nil, "local-model"},
		{[]string{SourceUser, SourceProject, SourceLocal}, "local-model"},
		{[]string{SourceUser, SourceProject}, "project-model"},
		{[]string{SourceUser}, "user-model"},
		{[]string{SourceProject}, "project-model"},
		{[]string{}, ""},
	} {
		s, _, err := LoadSettings(SettingsOptions{Cwd: cwd, Home: home, ManagedDir: t.TempDir(), TrustProject: true, Sources: tc.sources})
		if err != nil {
			t.Fatalf("%v: %v", tc.sources, err)
		}
		if s.Model.Value != tc.want {
			t.Errorf("sources %v: model %q from %s, want %q", tc.sources, s.Model.Value, s.Model.Source, tc.want)
		}
	}
	// A level not loaded is not read: its broken file is no error.
	write(filepath.Join(cwd, ".cadre", "settings.local.json"), `{"model": `)
	if _, _, err := LoadSettings(SettingsOptions{Cwd: cwd, Home: home, ManagedDir: t.TempDir(), TrustProject: true, Sources: []string{SourceProject}}); err != nil {
		t.Fatalf("the local file was read: %v", err)
	}
	if _, _, err := LoadSettings(SettingsOptions{Cwd: cwd, Home: home, ManagedDir: t.TempDir(), TrustProject: true}); err == nil || !strings.Contains(err.Error(), "settings.local.json") {
		t.Fatalf("all levels: error %v", err)
	}
}
