package agentdef

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProtectedLinksNotLoaded (issue 23): an agents directory link into
// ~/.ssh, or an agent file linked to a key, is not read; a link cycle and
// a deep chain of links end within the scan's bounds.
func TestProtectedLinksNotLoaded(t *testing.T) {
	t.Parallel()
	home, repo := t.TempDir(), t.TempDir()
	write := func(p, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	def := func(name string) string { return "---\nname: " + name + "\ndescription: d\n---\nYou help.\n" }
	write(filepath.Join(home, ".ssh", "a", "keys.md"), def("keys"))
	write(filepath.Join(home, ".aws", "credentials"), def("aws"))
	write(filepath.Join(home, "dotfiles", "ok.md"), def("ok"))
	dir := filepath.Join(repo, ".cadre", "agents")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		filepath.Join(dir, "ssh"):    filepath.Join(home, ".ssh", "a"),
		filepath.Join(dir, "aws.md"): filepath.Join(home, ".aws", "credentials"),
		filepath.Join(dir, "ok.md"):  filepath.Join(home, "dotfiles", "ok.md"),
		filepath.Join(dir, "loop"):   dir,
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	files, diags := scanDir(dir, home)
	var got []string
	for _, f := range files {
		got = append(got, filepath.Base(f.path))
	}
	if len(got) != 1 || got[0] != "ok.md" {
		t.Errorf("found %v, want only ok.md", got)
	}
	var notes int
	for _, d := range diags {
		if strings.Contains(d.Message, "credentials") {
			notes++
		}
	}
	if notes != 2 {
		t.Errorf("diagnostics %v: want one per refused link", diags)
	}
	if _, err := Load(context.Background(), LoadOptions{Cwd: repo, Home: home}); err != nil {
		t.Fatal(err)
	}
}
