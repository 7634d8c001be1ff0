package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// Issue 29 point 6, S-10.3: an agent definition's declared permissionMode
// applies under a default-mode parent, as in Claude Code — acceptEdits
// always, bypassPermissions only in a session started with bypass allowed
// — and an untrusted workspace's agent file cannot widen (reported on
// stderr). Each child writes a file through a tool that default mode would
// ask for (denied in -p); whether the file exists shows the mode it got.
func TestDeclaredChildModeThroughCLI(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		".cadre/agents/editor.md": "---\nname: editor\ndescription: Edits.\ntools: Write\npermissionMode: acceptEdits\n---\nYou edit.\n",
		".cadre/agents/runner.md": "---\nname: runner\ndescription: Runs.\ntools: Bash, Write\npermissionMode: bypassPermissions\n---\nYou run.\n",
	}
	for _, tc := range []struct {
		name, agent string
		args        []string
		wantWritten bool
		wantStderr  string
	}{
		{name: "untrusted acceptEdits ignored", agent: "editor", wantStderr: "permissionMode acceptEdits of agent editor"},
		{name: "trusted acceptEdits applies", agent: "editor", args: []string{"--trust-project"}, wantWritten: true},
		{name: "bypass without allow", agent: "runner", args: []string{"--trust-project"}},
		{name: "bypass allowed", agent: "runner", args: []string{"--trust-project", "--allow-dangerously-skip-permissions"}, wantWritten: true},
		{name: "untrusted bypass ignored", agent: "runner", args: []string{"--allow-dangerously-skip-permissions"}, wantStderr: "permissionMode bypassPermissions of agent runner"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			home, dir := t.TempDir(), t.TempDir()
			writeFiles(t, dir, files)
			target := filepath.Join(dir, "out.txt")
			s, env := server(t)
			s.Script("MAIN", llmtest.ToolUse("Agent", map[string]string{"description": "do", "prompt": "CHILD: do it", "subagent_type": tc.agent}), llmtest.Text("done"))
			call := llmtest.ToolUse("Write", map[string]string{"file_path": target, "content": "x"})
			if tc.agent == "runner" {
				call = llmtest.ToolUse("Bash", map[string]string{"command": "echo x > " + target})
			}
			s.Script("CHILD", call, llmtest.Text("child done"))
			p := cadreAt(t, home, dir, env, append([]string{"-p", "MAIN: go"}, tc.args...)...)
			if p.code != 0 {
				t.Fatalf("exit %d: %s", p.code, p.stderr)
			}
			_, err := os.Stat(target)
			if written := err == nil; written != tc.wantWritten {
				res := s.RequestsFor("CHILD")
				var got string
				if len(res) > 1 {
					got = res[1].LastToolResults()[0].ResultText()
				}
				t.Fatalf("file written %v, want %v; the child's tool result: %s; stderr: %s", written, tc.wantWritten, got, p.stderr)
			}
			if tc.wantStderr != "" && !strings.Contains(p.stderr, tc.wantStderr) {
				t.Errorf("stderr does not report %q as ignored: %s", tc.wantStderr, p.stderr)
			}
		})
	}
}
