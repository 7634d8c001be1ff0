package tui_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// Issue 29: a deny rule and a PreToolUse hook a Claude Code user wrote in
// the project's .claude/settings.json were ignored. In a trusted
// workspace both act in the interactive UI: the rule's call is refused
// without a prompt, the hook's deny reason reaches the model as the hook
// gave it, and neither command runs.
func TestTerminalUIHonoursClaudeProjectSettings(t *testing.T) {
	bin, srv, p := setup(t)
	p.env = append(p.env, "CADRE_CLAUDE_MANAGED_DIR="+filepath.Join(t.TempDir(), "claude-code"))
	const reason = "DENYME is not allowed in this project"
	hookLog := filepath.Join(p.home, "hook.log")
	hook := `in=$(cat); printf '%s\n' "$in" >> ` + shellQuote(hookLog) + `; case "$in" in *DENYME*) printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"` + reason + `"}}';; esac; exit 0`
	settings, err := json.Marshal(map[string]any{
		"permissions": map[string]any{"deny": []string{"Bash(rm:*)"}},
		"hooks": map[string]any{"PreToolUse": []any{map[string]any{"matcher": "Bash",
			"hooks": []any{map[string]any{"type": "command", "command": hook}}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for rel, body := range map[string]string{".claude/settings.json": string(settings), "victim.txt": "keep\n"} {
		path := filepath.Join(p.dir, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The user trusts the workspace, as its project settings require.
	cmd := exec.Command(bin, "trust")
	cmd.Dir, cmd.Env = p.dir, p.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("cadre trust: %v\n%s", err, out.String())
	}

	srv.Script("tui-claude-settings",
		llmtest.ToolUse("Bash", map[string]any{"command": "rm victim.txt", "description": "Remove the victim"}),
		llmtest.ToolUse("Bash", map[string]any{"command": "echo DENYME > marker.txt", "description": "Write the marker"}),
		llmtest.Text("Both calls were refused."),
	)
	tm := p.launch(t, bin)
	tm.waitFor("Ask anything", "default mode")
	tm.typeText("tui-claude-settings: clean up")
	tm.keys("Enter")
	screen := tm.waitFor("Both calls were refused.")
	if strings.Contains(tm.history(), "Permission needed") {
		t.Errorf("a call was put to the user instead of refused:\n%s", screen)
	}

	if _, err := os.Stat(filepath.Join(p.dir, "victim.txt")); err != nil {
		t.Errorf("the deny rule's command ran: %v", err)
	}
	if _, err := os.Stat(filepath.Join(p.dir, "marker.txt")); err == nil {
		t.Error("the hook-denied command ran")
	}
	reqs := srv.RequestsFor("tui-claude-settings")
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	rule := reqs[1].LastToolResults()
	if len(rule) != 1 || !rule[0].IsError || !strings.Contains(rule[0].ResultText(), "Bash(rm:*)") {
		t.Errorf("the model's result for the rule-denied call: %+v", rule)
	}
	hooked := reqs[2].LastToolResults()
	if len(hooked) != 1 || !hooked[0].IsError || hooked[0].ResultText() != reason {
		t.Errorf("the model's result for the hook-denied call: %+v, want the hook's reason %q as given", hooked, reason)
	}
	log, err := os.ReadFile(hookLog)
	if err != nil || !strings.Contains(string(log), "DENYME") {
		t.Errorf("the project's hook did not run: %v %q", err, log)
	}
	tm.keys("C-c")
	tm.waitFor("Press Ctrl+C again to exit")
	tm.keys("C-c")
	tm.waitFor("cadre exited 0")
}
