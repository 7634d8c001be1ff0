package skills

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProtectedLinksNotLoaded (issue 23): a project's skill directory, or
// a SKILL.md, that is a link into ~/.ssh (or another directory holding
// credentials) is not loaded, and a diagnostic says why; an ordinary
// link elsewhere still is.
func TestProtectedLinksNotLoaded(t *testing.T) {
	t.Parallel()
	home, repo := t.TempDir(), t.TempDir()
	skill := "---\nname: %s\ndescription: d\n---\nbody\n"
	write := func(p, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(home, ".ssh", "keys", "SKILL.md"), strings.ReplaceAll(skill, "%s", "keys"))
	write(filepath.Join(home, ".ssh", "id_rsa"), "---\nname: id\ndescription: PRIVATE KEY\n---\n")
	write(filepath.Join(home, "dotfiles", "ok", "SKILL.md"), strings.ReplaceAll(skill, "%s", "ok"))
	dir := filepath.Join(repo, ".cadre", "skills")
	if err := os.MkdirAll(filepath.Join(dir, "file"), 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		filepath.Join(dir, "keys"):             filepath.Join(home, ".ssh", "keys"),
		filepath.Join(dir, "file", "SKILL.md"): filepath.Join(home, ".ssh", "id_rsa"),
		filepath.Join(dir, "ok"):               filepath.Join(home, "dotfiles", "ok"),
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	set, err := Load(context.Background(), LoadOptions{Cwd: repo, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range set.All() {
		names = append(names, s.Name)
	}
	if len(names) != 1 || names[0] != "ok" {
		t.Errorf("loaded %v, want only ok", names)
	}
	var notes int
	for _, d := range set.Diagnostics() {
		if strings.Contains(d.String(), "credentials") {
			notes++
		}
	}
	if notes != 2 {
		t.Errorf("diagnostics %v: want one per refused link", set.Diagnostics())
	}
}
