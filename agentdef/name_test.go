package agentdef

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A plugin's name becomes part of its agents' names and so of directory
// names; a plugin directory whose name could not be one is not loaded.
func TestUnsafePluginName(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, plugin := range []string{`a\b`, "ok", "new\nline"} {
		dir := filepath.Join(root, plugin, "agents")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "x.md"), []byte("---\nname: x\ndescription: d\n---\nbody\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	set, err := Load(context.Background(), LoadOptions{Cwd: t.TempDir(), PluginDirs: []string{root}, NoBuiltins: true, ManagedDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range set.Active() {
		names = append(names, d.Name)
	}
	if strings.Join(names, ",") != "ok:x" {
		t.Errorf("loaded %q, want only ok:x", names)
	}
	var msgs []string
	for _, d := range set.Diagnostics() {
		msgs = append(msgs, d.String())
	}
	all := strings.Join(msgs, "\n")
	for _, w := range []string{`invalid plugin name "a\\b": it contains a path separator`, `invalid plugin name "new\nline": it contains a control character`} {
		if !strings.Contains(all, w) {
			t.Errorf("diagnostics lack %q:\n%s", w, all)
		}
	}
}
