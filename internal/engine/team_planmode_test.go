package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/permission"
)

// TestTeamPlanApprovalMode: an approved plan's permissionMode is the mode
// the teammate continues in, bounded by the lead's ceiling as a declared
// mode is (S-10.3): with the lead in default and nobody to ask,
// acceptEdits lets its Write run but not an rm; bypassPermissions falls
// back to default unless the session allows bypass; the session's
// MaxMode caps acceptEdits. The teammate is told the mode that applies.
func TestTeamPlanApprovalMode(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, asked, applied string
		limits               permission.SessionLimits
		wrote, removed       bool
	}{
		{name: "acceptEdits", asked: "acceptEdits", applied: "acceptEdits", wrote: true},
		{name: "bypass not allowed", asked: "bypassPermissions", applied: "default"},
		{name: "bypass allowed", asked: "bypassPermissions", applied: "bypassPermissions", limits: permission.SessionLimits{AllowBypass: true}, wrote: true, removed: true},
		{name: "capped by MaxMode", asked: "acceptEdits", applied: "default", limits: permission.SessionLimits{MaxMode: permission.ModeDefault}},
		{name: "default", asked: "", applied: "default"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			target := filepath.Join(h.dir, "after.txt")
			victim := filepath.Join(h.dir, "victim.txt")
			if err := os.WriteFile(victim, []byte("v"), 0o600); err != nil {
				t.Fatal(err)
			}
			h.srv.ScriptFunc("LEAD", func(r *llmtest.Request) llmtest.Turn {
				switch {
				case len(r.Messages) == 1:
					return llmtest.ToolUse("Agent", map[string]any{"description": "planner", "prompt": "MATE-pat plan", "subagent_type": "general-purpose", "name": "pat", "mode": "plan"})
				case strings.Contains(r.LastUserText(), "plan_approval_request"):
					msg := map[string]any{"type": "plan_approval_response", "request_id": lastRequestID(r), "approve": true}
					if c.asked != "" {
						msg["permissionMode"] = c.asked
					}
					return llmtest.ToolUse("SendMessage", teamSend("pat", msg).Input)
				}
				return llmtest.Text("lead ok")
			})
			var mu sync.Mutex
			var approval string
			var results []string
			h.srv.ScriptFunc("MATE-pat", func(r *llmtest.Request) llmtest.Turn {
				last := r.LastUserText()
				switch {
				case len(r.Messages) == 1:
					return llmtest.ToolUse("SendMessage", teamSend("team-lead", map[string]any{"type": "plan_approval_request", "plan": "PLAN"}).Input)
				case strings.Contains(last, `"approved":true`):
					mu.Lock()
					approval = last
					mu.Unlock()
					return llmtest.ToolUses(
						llmtest.Call{Name: "Write", Input: map[string]any{"file_path": target, "content": "approved"}},
						llmtest.Call{Name: "Bash", Input: map[string]any{"command": "rm -f " + victim}})
				}
				if res := r.LastToolResults(); len(res) == 2 {
					mu.Lock()
					for _, b := range res {
						results = append(results, b.ResultText())
					}
					mu.Unlock()
				}
				return llmtest.Text("pat idle")
			})
			cfg := teamConfig(h)
			cfg.Permissions = &Permissions{Mode: permission.ModeDefault, Limits: c.limits}
			rt := newRuntime(t, cfg)
			if _, _, err := runAll(t, context.Background(), rt, "LEAD go"); err != nil {
				t.Fatal(err)
			}
			drainTeam(t, rt)
			mu.Lock()
			defer mu.Unlock()
			if !strings.Contains(approval, `"permissionMode":"`+c.applied+`"`) {
				t.Errorf("the teammate read %q, want permissionMode %s", approval, c.applied)
			}
			_, err := os.Stat(target)
			if wrote := err == nil; wrote != c.wrote {
				t.Errorf("the Write ran: %v, want %v; results %q", wrote, c.wrote, results)
			}
			_, err = os.Stat(victim)
			if removed := err != nil; removed != c.removed {
				t.Errorf("the rm ran: %v, want %v; results %q", removed, c.removed, results)
			}
			if len(results) != 2 {
				t.Errorf("the teammate's tool results %q", results)
			}
		})
	}
}
