package hookscmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	cmd := New()
	var out, errb bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), errb.String(), err
}

func TestListEveryHookWithItsSource(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	home, cwd, managed := filepath.Join(root, "home"), filepath.Join(root, "proj"), filepath.Join(root, "etc")
	user := filepath.Join(home, ".config", "cadre", "settings.json")
	project := filepath.Join(cwd, ".cadre", "settings.json")
	agent := filepath.Join(cwd, ".cadre", "agents", "reviewer.md")
	write(t, user, `{"hooks": {"SubagentStop": [{"hooks": [{"type": "command", "command": "log-stop.sh"}]}]}}`)
	write(t, project, `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh", "timeout": 5}]}],
	  "Stop": [{"hooks": [{"type": "command", "command": "notify.sh"}]}], "Nope": []}}`)
	write(t, filepath.Join(managed, "managed-settings.json"), `{"hooks": {"SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "audit.sh"}]}]}}`)
	write(t, agent, "---\nname: reviewer\ndescription: reviews\nhooks:\n  PostToolUse:\n    - matcher: Edit|Write\n      hooks:\n        - type: command\n          command: fmt.sh\n  Stop:\n    - hooks:\n        - type: command\n          command: done.sh\n---\nYou review.\n")
	write(t, filepath.Join(home, ".config", "cadre", "plugins", "kit", "agents", "helper.md"), "---\nname: helper\ndescription: helps\nhooks:\n  Stop:\n    - hooks:\n        - type: command\n          command: plugin.sh\n---\nYou help.\n")
	args := []string{"list", "--cwd", cwd, "--home", home, "--managed-dir", managed, "--trust-project"}

	out, stderr, err := run(t, append(args, "--json")...)
	if err != nil {
		t.Fatal(err)
	}
	var got []Hook
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	// Settings hooks in event order, then agents' hooks.
	want := []Hook{
		{Event: "PreToolUse", Matcher: "Bash", Command: "guard.sh", Timeout: 5, Source: project, AppliesTo: "every agent"},
		{Event: "Stop", Command: "notify.sh", Source: project, AppliesTo: "main agent"},
		{Event: "SubagentStop", Command: "log-stop.sh", Source: user, AppliesTo: "every sub-agent"},
		{Event: "SessionStart", Matcher: "startup", Command: "audit.sh", Source: filepath.Join(managed, "managed-settings.json"), AppliesTo: "the session"},
		{Event: "PostToolUse", Matcher: "Edit|Write", Command: "fmt.sh", Source: agent, AppliesTo: "agent reviewer, while it runs"},
		{Event: "SubagentStop", Command: "done.sh", Source: agent, AppliesTo: "agent reviewer, while it runs"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hooks (-want +got):\n%s", diff)
	}
	for _, w := range []string{`unknown hook event "Nope"`, `plugin agents cannot set "hooks"`} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}

	out, _, err = run(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 7 || !strings.HasPrefix(lines[0], "EVENT") || !strings.Contains(lines[1], "PreToolUse") || !strings.Contains(lines[1], project) {
		t.Errorf("table:\n%s", out)
	}

	// Untrusted, the repository's hooks (settings and agent files) are
	// left out, as a session leaves them out, and the warning says so.
	out, stderr, err = run(t, append(args[:len(args)-1], "--json")...)
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Hook{want[2], want[3]}, got); diff != "" {
		t.Errorf("untrusted hooks (-want +got):\n%s", diff)
	}
	if strings.Count(stderr, "hooks ignored: the workspace") != 2 {
		t.Errorf("stderr:\n%s", stderr)
	}
}

func TestListWithoutHooks(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	out, _, err := run(t, "list", "--cwd", root, "--home", root, "--managed-dir", root)
	if err != nil || out != "No hooks configured.\n" {
		t.Errorf("%q %v", out, err)
	}
}

func TestListReportsABadHooksValue(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write(t, filepath.Join(root, ".cadre", "settings.json"), `{"hooks": {"Stop": [{"hooks": [{"type": "command"}]}]}}`)
	_, _, err := run(t, "list", "--cwd", root, "--home", root, "--managed-dir", root)
	if err == nil || !strings.Contains(err.Error(), "non-empty \"command\"") {
		t.Errorf("err = %v", err)
	}
}
