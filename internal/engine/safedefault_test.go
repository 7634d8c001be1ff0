package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// Issue 9: Config.Permissions == nil allowed every call, Bash included.
// Now nil is the default mode with nobody to ask: a read inside the
// working directory runs, a command, a write and a sub-agent's command are
// denied with the reason; AllowAll() is the explicit way to run them.
func TestNilPermissionsIsSafe(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		perms   *Permissions
		allowed bool
	}{{name: "nil"}, {name: "AllowAll", perms: AllowAll(), allowed: true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			if err := os.WriteFile(filepath.Join(h.dir, "notes.txt"), []byte("NOTE-17"), 0o644); err != nil {
				t.Fatal(err)
			}
			h.srv.Script("MAIN", llmtest.ToolUses(
				llmtest.Call{ID: "t1", Name: "Bash", Input: map[string]string{"command": "touch pwned-main"}},
				llmtest.Call{ID: "t2", Name: "Write", Input: map[string]string{"file_path": filepath.Join(h.dir, "written.txt"), "content": "x"}},
				llmtest.Call{ID: "t3", Name: "Read", Input: map[string]string{"file_path": filepath.Join(h.dir, "notes.txt")}},
			), llmtest.ToolUse("Agent", map[string]any{"description": "d", "prompt": "CHILD: go", "subagent_type": "general-purpose"}), llmtest.Text("done"))
			h.srv.Script("CHILD", llmtest.ToolUse("Bash", map[string]string{"command": "touch pwned-child"}), llmtest.Text("child done"))
			cfg := h.config()
			cfg.Permissions = tc.perms
			mustRun(t, cfg, "MAIN: go")
			for _, f := range []string{"pwned-main", "written.txt", "pwned-child"} {
				_, err := os.Stat(filepath.Join(h.dir, f))
				if (err == nil) != tc.allowed {
					t.Errorf("%s exists: %v, want %v", f, err == nil, tc.allowed)
				}
			}
			reqs := h.srv.RequestsFor("MAIN")
			first := reqs[1].LastToolResults()
			if len(first) != 3 || !strings.Contains(first[2].ResultText(), "NOTE-17") {
				t.Fatalf("the read did not run: %+v", first)
			}
			if tc.allowed {
				return
			}
			for _, r := range append(first[:2], h.srv.RequestsFor("CHILD")[1].LastToolResults()...) {
				if text := r.ResultText(); !strings.Contains(text, "Permission denied") || !strings.Contains(text, "no one can approve") {
					t.Errorf("not denied with the reason: %s", text)
				}
			}
		})
	}
}
