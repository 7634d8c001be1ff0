package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/permission"
)

// Issue 9: Explore, Plan and verification were read-only by prompt only —
// in bypassPermissions they ran `touch` through Bash. They, and any agent
// whose tools but Bash are read-only, now run Bash under plan-mode rules:
// a read-only command runs, a write is denied, whatever the parent's mode.
func TestReadOnlyAgentsByConstruction(t *testing.T) {
	t.Parallel()
	looker, diags := agentdef.ParseFile("/defs/looker.md", []byte("---\nname: looker\ndescription: looks\ntools: Read, Grep, Bash\n---\nYou look.\n"), agentdef.SourceProject)
	if looker == nil {
		t.Fatal(diags)
	}
	cases := []struct {
		agent    string
		readOnly bool
	}{{"Explore", true}, {"Plan", true}, {"verification", true}, {"looker", true}, {"general-purpose", false}}
	for _, tc := range cases {
		t.Run(tc.agent, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			if err := os.WriteFile(filepath.Join(h.dir, "f.txt"), []byte("FILE-CONTENT"), 0o644); err != nil {
				t.Fatal(err)
			}
			made := filepath.Join(h.dir, "made")
			h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall(tc.agent, "CHILD")), llmtest.Text("ok"))
			h.srv.Script("CHILD", llmtest.ToolUses(
				llmtest.Call{Name: "Bash", Input: map[string]any{"command": "touch " + made}},
				llmtest.Call{Name: "Bash", Input: map[string]any{"command": "cat f.txt"}},
			), llmtest.Text("done"))
			cfg := h.config()
			cfg.Permissions = &Permissions{Mode: permission.ModeBypassPermissions}
			cfg.Agents = append(agentdef.Builtins(), looker)
			cfg.Background = BackgroundOff // verification is a background agent by definition
			mustRun(t, cfg, "MAIN")
			res := h.toolResults("CHILD")
			_, err := os.Stat(made)
			if tc.readOnly {
				if err == nil {
					t.Fatalf("%s ran touch in bypassPermissions", tc.agent)
				}
				contains(t, res[0], "read-only")
			} else if err != nil {
				t.Fatalf("general-purpose could not write: %s", res[0])
			}
			if !strings.Contains(res[1], "FILE-CONTENT") {
				t.Errorf("a read-only command did not run: %s", res[1])
			}
		})
	}
}
