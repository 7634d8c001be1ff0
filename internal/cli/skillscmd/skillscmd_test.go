package skillscmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSkillsCommand(t *testing.T) {
	root := t.TempDir()
	home, proj := filepath.Join(root, "home"), filepath.Join(root, "proj")
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(proj, ".git", "HEAD"), "ref: refs/heads/main\n")
	write(filepath.Join(home, ".claude", "skills", "pdf", "SKILL.md"), "---\nname: pdf\ndescription: user pdf\n---\nU\n")
	write(filepath.Join(proj, ".cadre", "skills", "pdf", "SKILL.md"), "---\nname: pdf\ndescription: project pdf\n---\nP\n")
	write(filepath.Join(proj, ".claude", "skills", "bad", "SKILL.md"), "---\nname: bad\n---\nno description\n")
	run := func(args ...string) (string, string) {
		cmd := New()
		var out, errb bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&errb)
		cmd.SetArgs(append(args, "--cwd", proj, "--home", home))
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String()
	}
	out, errOut := run()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "pdf") || !strings.Contains(lines[1], "project (.cadre/skills)") || !strings.Contains(lines[1], "project pdf") ||
		!strings.Contains(lines[2], "user (~/.claude/skills)") || !strings.Contains(lines[2], filepath.Join(proj, ".cadre", "skills", "pdf", "SKILL.md")) {
		t.Fatalf("table:\n%s", out)
	}
	if want := filepath.Join(proj, ".claude", "skills", "bad", "SKILL.md") + ":1: error: description is required"; !strings.Contains(errOut, want) {
		t.Fatalf("diagnostics %q lack %q", errOut, want)
	}
	out, _ = run("--json")
	var j struct {
		Skills []struct {
			Name   string  `json:"name"`
			Active bool    `json:"active"`
			Shadow *string `json:"shadowedBy"`
		} `json:"skills"`
		Diagnostics []json.RawMessage `json:"diagnostics"`
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatal(err)
	}
	if len(j.Skills) != 2 || !j.Skills[0].Active || j.Skills[1].Active || j.Skills[1].Shadow == nil || len(j.Diagnostics) != 1 {
		t.Fatalf("json: %s", out)
	}
}
