package hookscmd

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestListPluginHooks lists the agent-teams fixture plugin's hook with
// --plugin-dir: from outside the workspace it is listed with its
// hooks.json as the source; with the plugin inside an untrusted
// repository, it is not, and a warning says so.
func TestListPluginHooks(t *testing.T) {
	t.Parallel()
	fixture, _ := filepath.Abs(filepath.Join("..", "..", "plugin", "testdata", "agent-teams"))
	root := t.TempDir()
	home, cwd := filepath.Join(root, "home"), filepath.Join(root, "proj")
	write(t, filepath.Join(cwd, ".git", "HEAD"), "ref: refs/heads/main\n")
	out, stderr, err := run(t, "list", "--cwd", cwd, "--home", home, "--managed-dir", filepath.Join(root, "etc"), "--plugin-dir", fixture, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got []Hook
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(got) != 1 || got[0].Event != "PreToolUse" || got[0].Matcher != "Bash" || got[0].Source != filepath.Join(fixture, "hooks", "hooks.json") ||
		!strings.Contains(got[0].Command, filepath.Join(fixture, "hooks", "guard.sh")) {
		t.Errorf("hooks %+v (stderr %s)", got, stderr)
	}
	// The fixture's own repository (this checkout) as the workspace: the
	// plugin lies inside it, and it is not trusted.
	out, stderr, err = run(t, "list", "--cwd", fixture, "--home", home, "--managed-dir", filepath.Join(root, "etc"), "--plugin-dir", fixture, "--json")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "guard.sh") || !strings.Contains(stderr, "hooks ignored") {
		t.Errorf("untrusted: %s / %s", out, stderr)
	}
}
