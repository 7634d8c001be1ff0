package permission

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestAuthorizeHooked pins how a PreToolUse hook's verdict meets the rules
// (as observed with Claude Code 2.1.328): allow skips an ask, also in
// dontAsk mode, but not a deny rule or plan mode; ask prompts even where
// the rules allow, and is denied where nobody can answer; deny refuses.
func TestAuthorizeHooked(t *testing.T) {
	f := newFixture(t)
	bash := func(cmd string) Request {
		b, _ := json.Marshal(map[string]string{"command": cmd})
		return Request{Tool: "Bash", Input: b, Cwd: f.cwd, ToolUseID: "toolu_1"}
	}
	tests := []struct {
		name    string
		mode    Mode
		rules   []string
		reply   Choice // the person's answer, when asked
		req     Request
		verdict HookVerdict
		allowed bool
		prompts int
		source  string
	}{
		{name: "allow skips the ask", mode: ModeDefault, req: bash("touch x"), verdict: HookVerdict{Behavior: Allow, Reason: "ok"}, allowed: true, source: SourceHook},
		{name: "allow in dontAsk", mode: ModeDontAsk, req: bash("touch x"), verdict: HookVerdict{Behavior: Allow}, allowed: true, source: SourceHook},
		{name: "deny rule wins over allow", mode: ModeBypassPermissions, rules: []string{"deny:Bash(touch:*)"}, req: bash("touch x"), verdict: HookVerdict{Behavior: Allow}, allowed: false, source: f.cwd + "/.cadre/settings.json"},
		{name: "plan mode wins over allow", mode: ModePlan, req: bash("touch x"), verdict: HookVerdict{Behavior: Allow}, allowed: false},
		{name: "ask prompts where the rules allow", mode: ModeBypassPermissions, reply: ChoiceAllowOnce, req: bash("touch x"), verdict: HookVerdict{Behavior: Ask, Reason: "sure?"}, allowed: true, prompts: 1},
		{name: "ask denied by the person", mode: ModeDefault, reply: ChoiceDeny, req: bash("ls"), verdict: HookVerdict{Behavior: Ask}, allowed: false, prompts: 1, source: SourceHook},
		{name: "ask in dontAsk is denied", mode: ModeDontAsk, reply: ChoiceAllowOnce, req: bash("ls"), verdict: HookVerdict{Behavior: Ask, Reason: "sure?"}, allowed: false, source: SourceHook},
		{name: "deny rule wins over ask", mode: ModeDefault, rules: []string{"deny:Bash(ls)"}, reply: ChoiceAllowOnce, req: bash("ls"), verdict: HookVerdict{Behavior: Ask}, allowed: false},
		{name: "deny", mode: ModeBypassPermissions, req: bash("ls"), verdict: HookVerdict{Behavior: Deny, Reason: "no", Message: "hook said no"}, allowed: false, source: SourceHook},
		{name: "no verdict is Authorize", mode: ModeDefault, req: bash("ls"), verdict: HookVerdict{}, allowed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &recordingPrompter{reply: tt.reply}
			log := &DenialLog{}
			s := newSession(t, f, tt.mode, p, false, log, tt.rules...)
			out, err := s.AuthorizeHooked(context.Background(), tt.req, tt.verdict)
			if err != nil {
				t.Fatal(err)
			}
			if out.Allowed != tt.allowed || len(p.prompts) != tt.prompts {
				t.Fatalf("allowed %v after %d prompts: %+v", out.Allowed, len(p.prompts), out)
			}
			if tt.source != "" && out.Decision.Source != tt.source {
				t.Errorf("source %q, want %q", out.Decision.Source, tt.source)
			}
			if tt.prompts > 0 && tt.verdict.Reason != "" && p.prompts[0].Decision.Reason != tt.verdict.Reason {
				t.Errorf("prompt shows %q", p.prompts[0].Decision.Reason)
			}
			if !out.Allowed {
				if d := log.All(); len(d) != 1 || d[0].AgentID == "" || d[0].ToolUseID != "toolu_1" {
					t.Errorf("denials %+v", d)
				}
			}
			if tt.verdict.Behavior == Deny && (out.Message != "hook said no" || !strings.Contains(out.Decision.Reason, "no")) {
				t.Errorf("deny outcome %+v", out)
			}
		})
	}
}
