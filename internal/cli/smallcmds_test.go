package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// Issue 29 point 7: what a new user hit in the small commands. `agents
// show` with an unknown name names the agents there are; `trust --remove`
// names the directory, not "."; an empty `trust --list` says so (on
// stderr, stdout stays a list); `hooks list` says "warning:" once a line.
func TestSmallCommandsSayWhatTheyMean(t *testing.T) {
	t.Parallel()
	home, dir := t.TempDir(), t.TempDir()
	writeFiles(t, dir, map[string]string{
		".cadre/agents/reviewer.md": "---\nname: reviewer\ndescription: Reviews.\n---\nYou review.\n",
		".cadre/settings.json":      `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}`,
	})

	p := cadreAt(t, home, dir, nil, "agents", "show", "nosuchagent")
	if p.code == 0 || !strings.Contains(p.stderr, `unknown agent "nosuchagent"`) || !strings.Contains(p.stderr, "reviewer") || !strings.Contains(p.stderr, "general-purpose") {
		t.Errorf("agents show of an unknown name: exit %d, stderr %q", p.code, p.stderr)
	}

	p = cadreAt(t, home, dir, nil, "trust", "--list")
	if p.code != 0 || p.stdout != "" || !strings.Contains(p.stderr, "No workspace is trusted") {
		t.Errorf("empty trust --list: exit %d, stdout %q, stderr %q", p.code, p.stdout, p.stderr)
	}
	if p = cadreAt(t, home, dir, nil, "trust"); p.code != 0 {
		t.Fatalf("trust: %d %s", p.code, p.stderr)
	}
	abs, _ := filepath.EvalSymlinks(dir)
	p = cadreAt(t, home, dir, nil, "trust", "--remove")
	if p.code != 0 || (p.stdout != "no longer trusted: "+dir+"\n" && p.stdout != "no longer trusted: "+abs+"\n") {
		t.Errorf("trust --remove: exit %d, stdout %q", p.code, p.stdout)
	}

	p = cadreAt(t, home, dir, nil, "hooks", "list")
	if p.code != 0 || !strings.Contains(p.stderr, "hooks ignored") {
		t.Fatalf("hooks list: exit %d, stderr %q", p.code, p.stderr)
	}
	for _, line := range strings.Split(strings.TrimSpace(p.stderr), "\n") {
		if n := strings.Count(line, "warning:"); n != 1 {
			t.Errorf("hooks list: %d times \"warning:\" in %q", n, line)
		}
	}
}
