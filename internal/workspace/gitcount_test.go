package workspace

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadGitStatusRunsGitThrice: the snapshot a session takes at its
// start reads the repository's configuration once for its two commands:
// three git processes (config, status, log), not four. They run while
// the first model request is in flight, on the cores the first children
// spawn on. (Not parallel: it sets PATH.)
func TestReadGitStatusRunsGitThrice(t *testing.T) {
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	gitRun(t, dir, "init", "-q", "-b", "main")
	write(t, filepath.Join(dir, "a.txt"), "a")
	gitRun(t, dir, "add", ".")
	gitRun(t, dir, "commit", "-q", "-m", "first commit")

	bin := t.TempDir()
	log := filepath.Join(t.TempDir(), "calls")
	script := "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '" + log + "'\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	g := ReadGitStatus(context.Background(), dir)
	if !strings.HasPrefix(g.Status, "## main") || !strings.Contains(g.Log, "first commit") {
		t.Fatalf("snapshot through the wrapper: %+v", g)
	}
	raw, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	calls := strings.Split(strings.TrimSpace(string(raw)), "\n")
	configs := 0
	for _, c := range calls {
		if strings.Contains(c, "config --list") {
			configs++
		}
	}
	if len(calls) != 3 || configs != 1 {
		t.Fatalf("git ran %d times (%d configuration reads), want 3 (1):\n%s", len(calls), configs, raw)
	}
}
