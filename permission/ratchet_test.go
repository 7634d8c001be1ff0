package permission

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func level(b Behavior) int {
	switch b {
	case Deny:
		return 0
	case Ask:
		return 1
	}
	return 2
}

func TestRatchetModes(t *testing.T) {
	cases := []struct {
		parent   Mode
		noPrompt bool
		declared Mode
		limits   SessionLimits
		want     Mode
		wantNP   bool
	}{
		{parent: ModeDefault, declared: "", want: ModeDefault},
		// Issue 29: the declared mode applies under default/dontAsk, up to
		// acceptEdits, and bypassPermissions only when the session allows it.
		{parent: ModeDefault, declared: ModeAcceptEdits, want: ModeAcceptEdits},
		{parent: ModeDefault, declared: ModeBypassPermissions, want: ModeDefault},
		{parent: ModeDefault, declared: ModeBypassPermissions, limits: SessionLimits{AllowBypass: true}, want: ModeBypassPermissions},
		{parent: ModeDefault, declared: ModeBypassPermissions, limits: SessionLimits{AllowBypass: true, DisableBypass: true}, want: ModeDefault},
		{parent: ModeDefault, declared: ModeBypassPermissions, limits: SessionLimits{AllowBypass: true, MaxMode: ModeAcceptEdits}, want: ModeAcceptEdits},
		{parent: ModeDefault, declared: ModeAuto, limits: SessionLimits{AllowBypass: true}, want: ModeDefault},
		{parent: ModeDontAsk, declared: ModeAcceptEdits, want: ModeAcceptEdits, wantNP: true},
		{parent: ModeDefault, declared: ModePlan, want: ModePlan},
		{parent: ModeDefault, declared: ModeDontAsk, want: ModeDontAsk, wantNP: true},
		{parent: ModeDefault, declared: ModeBubble, want: ModeBubble},
		{parent: ModeDontAsk, declared: ModeDefault, want: ModeDontAsk, wantNP: true},
		{parent: ModeDontAsk, declared: ModePlan, want: ModePlan, wantNP: true},
		{parent: ModeBubble, declared: ModePlan, want: ModePlan},
		{parent: ModeAcceptEdits, declared: ModePlan, want: ModeAcceptEdits},
		{parent: ModeAcceptEdits, declared: ModeBypassPermissions, want: ModeAcceptEdits},
		{parent: ModePlan, declared: ModeBypassPermissions, want: ModePlan},
		{parent: ModePlan, declared: ModeAcceptEdits, want: ModePlan},
		{parent: ModeBypassPermissions, declared: ModePlan, want: ModeBypassPermissions},
		{parent: ModeBypassPermissions, declared: "", limits: SessionLimits{MaxMode: ModeAcceptEdits}, want: ModeAcceptEdits},
		{parent: ModeBypassPermissions, declared: "", limits: SessionLimits{DisableBypass: true}, want: ModeDefault},
		{parent: ModeAuto, declared: ModeBypassPermissions, want: ModeAuto},
		{parent: ModeDefault, noPrompt: true, declared: ModePlan, want: ModePlan, wantNP: true},
		{parent: "garbage", declared: ModeBypassPermissions, want: ModePlan},
	}
	for _, tc := range cases {
		got := Ratchet(Effective{Mode: tc.parent, NoPrompt: tc.noPrompt}, tc.declared, tc.limits)
		if got.Mode != tc.want || got.NoPrompt != tc.wantNP {
			t.Errorf("Ratchet(%s np=%v, %q, %+v) = %s np=%v, want %s np=%v", tc.parent, tc.noPrompt, tc.declared, tc.limits, got.Mode, got.NoPrompt, tc.want, tc.wantNP)
		}
	}
}

// TestRatchetMatrix: every parent mode × every declared child mode × sets
// of parent rules × calls of every built-in tool: the child's decision is
// never more permissive than the parent's, except where its declared mode
// widens a default or dontAsk parent (S-10.3) — then it is never more
// permissive than a parent in that declared mode — and the parent's deny
// rules always bind it.
func TestRatchetMatrix(t *testing.T) {
	f := newFixture(t)
	modes := []Mode{ModeDefault, ModeAcceptEdits, ModePlan, ModeDontAsk, ModeBypassPermissions, ModeBubble}
	declared := append([]Mode{""}, append(modes, ModeAuto, ModeManual)...)
	ruleSets := [][]string{
		nil,
		{"deny:Bash(rm:*)", "deny:Read(./secrets/**)", "deny:Agent(Explore)"},
		{"allow:Bash(npm test:*)", "allow:Edit(./src/**)", "ask:Bash(git push:*)", "deny:Edit(//$OUT/**)"},
		{"allow:Bash", "allow:Edit", "allow:Read", "deny:Bash(curl:*)", "ask:Write"},
		{"ask:Read", "ask:Agent", "allow:mcp__s"},
	}
	type call struct {
		tool, input string
		readOnly    bool
	}
	calls := []call{
		{"Read", fileIn("file_path", "$CWD/a.txt"), true},
		{"Read", fileIn("file_path", "$OUT/x"), true},
		{"Read", fileIn("file_path", "$CWD/secrets/k"), true},
		{"Write", fileIn("file_path", "$CWD/src/n.go"), false},
		{"Write", fileIn("file_path", "$OUT/n"), false},
		{"Edit", fileIn("file_path", "$CWD/a.txt"), false},
		{"Edit", fileIn("file_path", "$CWD/link-out/x"), false},
		{"Glob", `{"pattern":"**/*"}`, true},
		{"Glob", `{"pattern":"../*"}`, true},
		{"Grep", `{"pattern":"x","path":"/etc"}`, true},
		{"Grep", `{"pattern":"x"}`, true},
		{"Bash", bashIn("ls"), false},
		{"Bash", bashIn("npm test"), false},
		{"Bash", bashIn("npm test && rm -rf ~"), false},
		{"Bash", bashIn("curl x | sh"), false},
		{"Bash", bashIn("git push"), false},
		{"Bash", bashIn("echo hi > f.txt"), false},
		{"Bash", bashIn("cat /etc/passwd"), false},
		{"Bash", bashIn("echo 'x"), false},
		{"BashOutput", `{"bash_id":"b1"}`, true},
		{"KillShell", `{"shell_id":"b1"}`, false},
		{"Agent", fileIn("subagent_type", "Explore"), false},
		{"Agent", fileIn("subagent_type", "general-purpose"), false},
		{"mcp__s__t", `{}`, false},
	}
	limitsSet := []SessionLimits{{}, {MaxMode: ModeAcceptEdits}, {AllowBypass: true}}
	n := 0
	for _, pm := range modes {
		for ri, rs := range ruleSets {
			var rules []Rule
			for _, s := range rs {
				b, body, _ := cut(s)
				r, err := ParseRule(f.expand(body))
				if err != nil {
					t.Fatal(err)
				}
				r.Behavior, r.Source = Behavior(b), "parent.json"
				rules = append(rules, r)
			}
			parent, err := NewChecker(Config{Mode: pm, Cwd: f.cwd, Home: f.home, Rules: rules})
			if err != nil {
				t.Fatal(err)
			}
			parentDecisions := make([]Decision, len(calls))
			for i, c := range calls {
				parentDecisions[i] = parent.Check(Request{Tool: c.tool, Input: json.RawMessage(f.expand(c.input)), ReadOnly: c.readOnly})
			}
			for _, dm := range declared {
				for _, lim := range limitsSet {
					eff := Ratchet(parent.Effective(), dm, lim)
					bound := parent
					if Rank(eff.Mode) > Rank(pm) {
						if (pm != ModeDefault && pm != ModeDontAsk && pm != ModeBubble) || eff.Mode != dm || (Rank(dm) > Rank(ModeAcceptEdits) && !(dm == ModeBypassPermissions && lim.AllowBypass)) {
							t.Errorf("parent %s, declared %s: child mode %s ranks above parent", pm, dm, eff.Mode)
						}
						widened := parent.Effective()
						widened.Mode = eff.Mode
						if bound, err = NewChecker(widened.CheckerConfig(f.cwd, nil, f.home)); err != nil {
							t.Fatal(err)
						}
					}
					child, err := NewChecker(eff.CheckerConfig(f.cwd, nil, f.home))
					if err != nil {
						t.Fatalf("parent %s declared %s: child checker: %v", pm, dm, err)
					}
					for i, c := range calls {
						req := Request{Tool: c.tool, Input: json.RawMessage(f.expand(c.input)), ReadOnly: c.readOnly}
						pd, cd := parentDecisions[i], child.Check(req)
						if bound != parent {
							pd = bound.Check(req)
						}
						n++
						if level(cd.Behavior) > level(pd.Behavior) {
							t.Errorf("parent %s rules#%d, declared %q, limits %+v: %s %s: child %s (%s) > parent %s (%s)",
								pm, ri, dm, lim, c.tool, c.input, cd.Behavior, cd.Reason, pd.Behavior, pd.Reason)
						}
						if pd.Behavior == Deny && strings.HasPrefix(pd.Reason, "denied by rule") && (cd.Behavior != Deny || cd.Rule != pd.Rule) {
							t.Errorf("parent deny rule %s did not bind the child: %s", pd.Rule, cd.Reason)
						}
					}
				}
			}
		}
	}
	if n < 1000 {
		t.Fatalf("matrix too small: %d checks", n)
	}
}

func cut(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == ':' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// A child that adds its own allow rules still cannot escape the parent's
// deny and ask rules, at any depth.
func TestRatchetParentRulesBindDescendants(t *testing.T) {
	f := newFixture(t)
	deny, _ := ParseRules(Deny, "/etc/cadre/managed-settings.json", "", []string{"Bash(rm:*)"})
	ask, _ := ParseRules(Ask, "/p/.cadre/settings.json", "", []string{"Bash(git push:*)"})
	eff := Effective{Mode: ModeBypassPermissions, Rules: append(deny, ask...)}
	for depth := 0; depth < 3; depth++ {
		eff = Ratchet(eff, ModeDefault, SessionLimits{})
		own, _ := ParseRules(Allow, "agent.md", "", []string{"Bash", "Bash(rm:*)", "Bash(git push:*)"})
		eff.Rules = append(eff.Rules, own...)
	}
	c, err := NewChecker(eff.CheckerConfig(f.cwd, nil, f.home))
	if err != nil {
		t.Fatal(err)
	}
	d := c.Check(Request{Tool: "Bash", Input: json.RawMessage(bashIn("rm -rf x"))})
	if diff := cmp.Diff(Decision{Behavior: Deny, Rule: "Bash(rm:*)", Source: "/etc/cadre/managed-settings.json", Reason: "denied by rule Bash(rm:*) from /etc/cadre/managed-settings.json"}, d); diff != "" {
		t.Errorf("rm (-want +got):\n%s", diff)
	}
	if d := c.Check(Request{Tool: "Bash", Input: json.RawMessage(bashIn("git push"))}); d.Behavior != Ask || d.Rule != "Bash(git push:*)" {
		t.Errorf("git push = %+v, want ask by parent's rule", d)
	}
}

func TestAgentTypeDenied(t *testing.T) {
	rules, _ := ParseRules(Deny, "s.json", "", []string{"Agent(Explore)", "Task(Plan, verification)"})
	allow, _ := ParseRules(Allow, "s.json", "", []string{"Agent(general-purpose)"})
	rules = append(rules, allow...)
	got := FilterAgentTypes(rules, []string{"general-purpose", "Explore", "Plan", "verification", "custom"})
	if diff := cmp.Diff([]string{"general-purpose", "custom"}, got); diff != "" {
		t.Errorf("FilterAgentTypes (-want +got):\n%s", diff)
	}
	r, ok := AgentTypeDenied(rules, "Plan")
	if !ok || r.String() != "Task(Plan, verification)" {
		t.Fatalf("AgentTypeDenied(Plan) = %v, %v", r, ok)
	}
	msg := AgentTypeRefusal("Plan", r)
	for _, want := range []string{"Plan", "Task(Plan, verification)", "s.json"} {
		if !contains(msg, want) {
			t.Errorf("refusal %q lacks %q", msg, want)
		}
	}
	all, _ := ParseRules(Deny, "m.json", "", []string{"Agent"})
	if got := FilterAgentTypes(all, []string{"a", "b"}); len(got) != 0 {
		t.Errorf("whole-tool deny leaves %v", got)
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || len(s) >= len(sub) && (s[:len(sub)] == sub || contains(s[1:], sub))
}
