package permission

import (
	"errors"
	"strings"
	"testing"
)

func TestUnknownToolNames(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		rules   []string
		b       Behavior
		extra   []string
		wantErr string // "" = no error
		warn    string // a warning that must be reported
	}{
		{name: "typo deny", rules: []string{"Bsh(rm:*)"}, b: Deny, wantErr: `"Bsh" is not a tool cadre knows (did you mean Bash?)`},
		{name: "typo ask", rules: []string{"Raed(./x)"}, b: Ask, wantErr: "did you mean Read?"},
		{name: "lower case deny", rules: []string{"bash"}, b: Deny, wantErr: "did you mean Bash?"},
		{name: "far off", rules: []string{"Frobnicate"}, b: Deny, wantErr: `"Frobnicate" is not a tool cadre knows (a deny`},
		{name: "typo allow warns", rules: []string{"Bsh(ls:*)"}, b: Allow, warn: "did you mean Bash?); it allows nothing"},
		{name: "alias", rules: []string{"Task(Explore)"}, b: Deny},
		{name: "registry tools", rules: []string{"WebSearch", "NotebookEdit(./x)", "TodoWrite", "SendMessage", "ExitPlanMode"}, b: Deny},
		{name: "mcp exempt", rules: []string{"mcp__nosuch__tool", "mcp__x"}, b: Deny},
		{name: "extra tool", rules: []string{"Deploy"}, b: Deny, extra: []string{"Deploy"}},
		{name: "extra tool typo", rules: []string{"Deplyo"}, b: Deny, extra: []string{"Deploy"}, wantErr: "did you mean Deploy?"},
	}
	for _, tc := range cases {
		rules, err := ParseRules(tc.b, "--flag", "", tc.rules)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		c, err := NewChecker(Config{Rules: rules, Tools: tc.extra})
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tc.name, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: error = %v, want it to contain %q", tc.name, err, tc.wantErr)
		case tc.wantErr != "":
			var ue *UnknownToolError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--flag") {
				t.Errorf("%s: error %v is not an UnknownToolError naming its source", tc.name, err)
			}
		}
		if tc.warn != "" {
			if c == nil || !strings.Contains(strings.Join(c.Warnings(), "\n"), tc.warn) {
				t.Errorf("%s: warnings lack %q", tc.name, tc.warn)
			}
		}
	}
}

func TestCheckMCPRuleNames(t *testing.T) {
	t.Parallel()
	servers := map[string][]string{"github": {"create_issue", "list_issues"}, "fs": nil}
	cases := []struct {
		rule, want string
	}{
		{"mcp__*", ""},
		{"mcp__github", ""},
		{"mcp__github__*", ""},
		{"mcp__github__create_issue", ""},
		{"mcp__fs__anything", ""}, // tools of fs not known: only the server is checked
		{"mcp__githb__create_issue", `no MCP server "githb" is configured (servers: fs, github) (did you mean mcp__github__create_issue?)`},
		{"mcp__github__create_isue", `MCP server "github" has no tool "create_isue" (did you mean mcp__github__create_issue?)`},
		{"mcp__zzzzzzz", `no MCP server "zzzzzzz" is configured (servers: fs, github)`},
	}
	for _, tc := range cases {
		r, err := ParseRule(tc.rule)
		if err != nil {
			t.Fatal(err)
		}
		r.Behavior, r.Source = Deny, "s.json"
		errs := CheckMCPRuleNames([]Rule{r}, servers)
		got := ""
		if len(errs) > 0 {
			got = errs[0].Error()
		}
		if tc.want == "" && got != "" || tc.want != "" && !strings.HasSuffix(got, tc.want) {
			t.Errorf("%s: got %q, want suffix %q", tc.rule, got, tc.want)
		}
	}
}
