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
