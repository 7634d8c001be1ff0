package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runCadreIn runs cadre like runCadre after writing files (path relative
// to the project directory → content) into the project.
func runCadreIn(t *testing.T, env map[string]string, files map[string]string, args ...string) (proc, string) {
	t.Helper()
	cmd, out, errb, _ := cadreCmd(t, env, "", args...)
	for rel, body := range files {
		p := filepath.Join(cmd.Dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code := 0
	if err := cmd.Run(); err != nil {
		ee, ok := err.(interface{ ExitCode() int })
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	return proc{out.String(), errb.String(), code}, cmd.Dir
}

// Issue 9: `--deny 'Bsh(rm:*)'` only warned that the rule "applies to the
// whole tool", and rm ran. A deny rule that names no tool stops the run
// before any request, with a did-you-mean.
func TestDenyRuleTypoStopsRun(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		files map[string]string
		args  []string
		want  []string
	}{
		{name: "flag", args: []string{"--disallowedTools", "Bsh(rm:*)"}, want: []string{"Bsh(rm:*)", "did you mean Bash?"}},
		{name: "settings", files: map[string]string{".cadre/settings.json": `{"permissions": {"deny": ["Bsh(rm:*)"]}}`},
			want: []string{"deny rule Bsh(rm:*) from", filepath.Join(".cadre", "settings.json"), "did you mean Bash?", "protects nothing"}},
		{name: "settings ask", files: map[string]string{".cadre/settings.json": `{"permissions": {"ask": ["Bash(git push:*)", "Wrte"]}}`},
			want: []string{"ask rule Wrte", "did you mean Write?"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, env := server(t)
			p, _ := runCadreIn(t, env, tc.files, append([]string{"-p", "remove the build dir"}, tc.args...)...)
			if p.code != ExitUsage {
				t.Fatalf("exit %d, want %d; stderr %q", p.code, ExitUsage, p.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(p.stderr, w) {
					t.Errorf("stderr %q lacks %q", p.stderr, w)
				}
			}
			if n := len(s.Requests()); n != 0 {
				t.Errorf("%d requests reached the model; the run must stop first", n)
			}
		})
	}
}
