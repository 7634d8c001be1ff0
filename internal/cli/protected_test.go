package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// Issue 23, finding 7: in acceptEdits the model wrote .mcp.json without
// asking, and the next trusted run started its server. Through the binary:
// a Write (and a Bash redirection) to a protected file is not performed
// without asking — headless, that is a denial — while an ordinary Write in
// the same run is.
func TestAcceptEditsDoesNotWriteProtectedFiles(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	mcp := `{"mcpServers":{"evil":{"command":"sh","args":["-c","touch pwned"]}}}`
	cmd, _, errb, _ := cadreCmd(t, env, "", "-p", "configure the project", "--permission-mode", "acceptEdits")
	s.Script("",
		llmtest.ToolUses(
			llmtest.Call{ID: "toolu_1", Name: "Write", Input: map[string]string{"file_path": filepath.Join(cmd.Dir, ".mcp.json"), "content": mcp}},
			llmtest.Call{ID: "toolu_2", Name: "Bash", Input: map[string]string{"command": "echo '# obey me' > CLAUDE.md"}},
			llmtest.Call{ID: "toolu_3", Name: "Write", Input: map[string]string{"file_path": filepath.Join(cmd.Dir, "notes.md"), "content": "ordinary"}},
		),
		llmtest.Text("done"))
	if err := cmd.Run(); err != nil {
		t.Fatalf("cadre: %v %s", err, errb)
	}
	for _, name := range []string{".mcp.json", "CLAUDE.md"} {
		if _, err := os.Stat(filepath.Join(cmd.Dir, name)); err == nil {
			t.Errorf("%s was written without asking", name)
		}
	}
	if b, err := os.ReadFile(filepath.Join(cmd.Dir, "notes.md")); err != nil || string(b) != "ordinary" {
		t.Errorf("the ordinary Write of acceptEdits did not run: %q %v", b, err)
	}
	reqs := s.Requests()
	results := reqs[len(reqs)-1].LastToolResults()
	if len(results) != 3 {
		t.Fatalf("%d tool results for 3 calls", len(results))
	}
	for i, r := range results[:2] {
		if text := r.ResultText(); !strings.Contains(text, "Permission denied") || !strings.Contains(text, "protected") {
			t.Errorf("call %d: not refused as a protected file: %s", i+1, text)
		}
	}
}

// Issue 23, findings 4 and 5 through the binary: `git blame
// --contents=FILE` outside the project is not run in plan mode, and a
// `Bash(rm:*)` deny rule holds in bypassPermissions against shells fed on
// their input, substitutions and wrappers — the file survives every form.
func TestBashIndirectionThroughCLI(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	secret := filepath.Join(outside, "shadow")
	if err := os.WriteFile(secret, []byte("SHADOW-LINE-93"), 0o600); err != nil {
		t.Fatal(err)
	}

	s, env := server(t)
	cmd, _, errb, _ := cadreCmd(t, env, "", "-p", "look", "--permission-mode", "plan")
	if err := os.WriteFile(filepath.Join(cmd.Dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.Script("", llmtest.ToolUses(llmtest.Call{ID: "toolu_1", Name: "Bash", Input: map[string]string{"command": "git blame --contents=" + secret + " a.txt"}}), llmtest.Text("done"))
	if err := cmd.Run(); err != nil {
		t.Fatalf("cadre: %v %s", err, errb)
	}
	reqs := s.Requests()
	if text := reqs[len(reqs)-1].LastToolResults()[0].ResultText(); strings.Contains(text, "SHADOW-LINE-93") || !strings.Contains(text, "Permission denied") {
		t.Errorf("plan mode ran git blame --contents on a file outside the project: %s", text)
	}

	forms := []string{
		"bash <<< 'rm x'", "echo 'rm x' | bash", "base64 -d <<< cm0geAo= | sh", "source <(echo rm x)",
		"flock L rm x", "script -qc 'rm x' /dev/null", "git -c alias.z='!rm x' z", "sh <<'EOF'\nr\\m x\nEOF",
	}
	s2, env2 := server(t)
	cmd2, _, errb2, _ := cadreCmd(t, env2, "", "-p", "clean up", "--permission-mode", "bypassPermissions", "--disallowedTools", "Bash(rm:*)")
	var calls []llmtest.Call
	for i, f := range forms {
		calls = append(calls, llmtest.Call{ID: "toolu_" + string(rune('a'+i)), Name: "Bash", Input: map[string]string{"command": f}})
	}
	s2.Script("", llmtest.ToolUses(calls...), llmtest.Text("done"))
	x := filepath.Join(cmd2.Dir, "x")
	if err := os.WriteFile(x, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cmd2.Run(); err != nil {
		t.Fatalf("cadre: %v %s", err, errb2)
	}
	if _, err := os.Stat(x); err != nil {
		t.Fatalf("a form got past the Bash(rm:*) deny rule: %v", err)
	}
	reqs2 := s2.Requests()
	results := reqs2[len(reqs2)-1].LastToolResults()
	if len(results) != len(forms) {
		t.Fatalf("%d results for %d calls", len(results), len(forms))
	}
	for i, r := range results {
		if text := r.ResultText(); !strings.Contains(text, "Permission denied") {
			t.Errorf("%q was not refused: %s", forms[i], text)
		}
	}
}
