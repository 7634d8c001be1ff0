package config

import (
	"strings"
	"testing"
)

// Issue 9, Build 4: mcp__ rule names are checked once the servers are
// known. A deny or ask rule that misnames a configured server stops the
// run with a did-you-mean; a rule for a server this session does not have
// at all, and an allow rule that names none, are warnings; a server kept
// out by workspace trust or configured inline by an agent counts as known.
func TestMCPRuleNamesChecked(t *testing.T) {
	t.Parallel()
	user := `{"mcpServers": {"github": {"command": "gh-mcp"}, "my server": {"command": "m"}, "a__b": {"command": "ab"}}, "permissions": {%s}}`
	cases := []struct {
		name, perms string
		files       map[string]string
		err, warn   string
	}{
		{name: "deny typo", perms: `"deny": ["mcp__githb__delete_repo"]`,
			err: `deny rule mcp__githb__delete_repo from ` + "HOME" + `/.config/cadre/settings.json: no MCP server "githb" is configured (servers: a__b, github, my_server) (did you mean mcp__github__delete_repo?)`},
		{name: "ask typo", perms: `"ask": ["mcp__Github"]`, err: `did you mean mcp__github?`},
		{name: "deny elsewhere", perms: `"deny": ["mcp__jira__delete"]`, warn: `no MCP server "jira" is configured (servers: a__b, github, my_server); it applies to nothing in this session`},
		{name: "allow typo", perms: `"allow": ["mcp__githb"]`, warn: `did you mean mcp__github?); it allows nothing`},
		{name: "right names", perms: `"deny": ["mcp__github__delete_repo", "mcp__github", "mcp__*", "mcp__my_server__x", "mcp__a__b", "mcp__a__b__c"]`},
		{name: "untrusted server", perms: `"deny": ["mcp__repo__x"]`, files: map[string]string{"CWD/.mcp.json": `{"mcpServers": {"repo": {"command": "r"}}}`}},
		{name: "agent inline server", perms: `"deny": ["mcp__own__x"]`,
			files: map[string]string{"HOME/.config/cadre/agents/a.md": "---\nname: a\ndescription: d\nmcpServers:\n  - own:\n      command: o\n---\nx\n"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			files := map[string]string{"HOME/.config/cadre/settings.json": strings.Replace(user, "%s", tc.perms, 1)}
			for k, v := range tc.files {
				files[k] = v
			}
			_, diags, err, tr := loadIn(t, files, anthropicKey, Options{})
			want := strings.ReplaceAll(tc.err, "HOME", tr.home)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "protects nothing")):
				t.Fatalf("error %v, want %q", err, want)
			}
			var warned []string
			for _, d := range diags {
				if d.Topic == TopicPermissions && strings.Contains(d.Message, "mcp__") {
					warned = append(warned, d.Message)
				}
			}
			if tc.warn == "" && len(warned) > 0 || tc.warn != "" && (len(warned) != 1 || !strings.Contains(warned[0], tc.warn)) {
				t.Errorf("warnings %q, want %q", warned, tc.warn)
			}
		})
	}
}
