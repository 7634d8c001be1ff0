package skills

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestPluginSkills loads a plugin's skills as plugin:skill, from the
// plugin source, below the user's: a user skill of the plain name does not
// clash, and a user skill named like the namespaced one shadows it.
func TestPluginSkills(t *testing.T) {
	fixture, _ := filepath.Abs(filepath.Join("..", "internal", "plugin", "testdata", "claude-ecosystem", "skills"))
	home := t.TempDir()
	for _, name := range []string{"audit-notes", "other"} {
		dir := filepath.Join(home, ".claude", "skills", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, FileName), []byte("---\nname: "+name+"\ndescription: the user's\n---\nbody\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	set, err := Load(context.Background(), LoadOptions{Cwd: t.TempDir(), Home: home, Plugins: []PluginSkills{{Plugin: "claude-ecosystem", Dirs: []string{fixture}}}})
	if err != nil {
		t.Fatal(err)
	}
	sk := set.Get("claude-ecosystem:audit-notes")
	if sk == nil || sk.Source != SourcePlugin || sk.Dir != filepath.Join(fixture, "audit-notes") {
		t.Fatalf("plugin skill %+v", sk)
	}
	if u := set.Get("audit-notes"); u == nil || u.Source != SourceUserClaude {
		t.Errorf("user skill %+v", u)
	}
	if len(set.Diagnostics()) != 0 {
		t.Errorf("diagnostics %+v", set.Diagnostics())
	}
}
