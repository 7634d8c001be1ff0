package permission_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/tool"
)

// myToolIn is the input of an embedder's own tool that touches one path.
type myToolIn struct {
	Path string `json:"path"`
	Note string `json:"note,omitempty"`
}

// myTool declares the path it touches as its permission subject.
func myTool() tool.Tool {
	return tool.Func(tool.FuncConfig{Name: "MyTool", Description: "does something to a file",
		Subject: tool.DecodeSubject(func(in myToolIn) tool.Subject { return tool.Subject{Paths: []string{in.Path}} }),
	}, func(context.Context, *tool.Env, myToolIn) (tool.Output, error) { return tool.Output{Text: "done"}, nil })
}

// deployTool declares a content string: the environment it deploys to.
func deployTool() tool.Tool {
	type in struct {
		Target string `json:"target"`
	}
	return tool.Func(tool.FuncConfig{Name: "Deploy", Description: "deploys",
		Subject: tool.DecodeSubject(func(i in) tool.Subject { return tool.Subject{Content: "to " + i.Target} }),
	}, func(context.Context, *tool.Env, in) (tool.Output, error) { return tool.Output{Text: "deployed"}, nil })
}

// plainTool declares no subject: rules name it as a whole only.
func plainTool() tool.Tool {
	return tool.Func(tool.FuncConfig{Name: "Plain", Description: "declares nothing"},
		func(context.Context, *tool.Env, myToolIn) (tool.Output, error) { return tool.Output{Text: "done"}, nil })
}

func TestEmbedderToolSubjectRules(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	rules := func(b permission.Behavior, raws ...string) []permission.Rule {
		rs, err := permission.ParseRules(b, "settings.json", "", raws)
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}
	var all []permission.Rule
	all = append(all, rules(permission.Allow, "MyTool(./src/**)", "Deploy(to staging*)", "Plain(./src/**)")...)
	all = append(all, rules(permission.Ask, "MyTool(./docs/**)", "Deploy(to prod)", "Plain(./docs/**)")...)
	all = append(all, rules(permission.Deny, "MyTool(./secrets/**)", "MyTool(//etc/**)", "Deploy(to *-legacy)")...)
	c, err := permission.NewChecker(permission.Config{Cwd: cwd, Home: cwd, Rules: all, Tools: []string{"MyTool", "Deploy", "Plain"}})
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]tool.Tool{"MyTool": myTool(), "Deploy": deployTool(), "Plain": plainTool()}
	for _, tc := range []struct {
		tool, input string
		want        permission.Behavior
		rule        string
	}{
		{"MyTool", `{"path":"src/a/main.go"}`, permission.Allow, "MyTool(./src/**)"},
		{"MyTool", `{"path":"` + filepath.Join(cwd, "src", "b.go") + `"}`, permission.Allow, "MyTool(./src/**)"},
		{"MyTool", `{"path":"docs/guide.md"}`, permission.Ask, "MyTool(./docs/**)"},
		{"MyTool", `{"path":"secrets/key.pem"}`, permission.Deny, "MyTool(./secrets/**)"},
		{"MyTool", `{"path":"src/../secrets/key.pem"}`, permission.Deny, "MyTool(./secrets/**)"},
		{"MyTool", `{"path":"/etc/passwd"}`, permission.Deny, "MyTool(//etc/**)"},
		// No rule names the path: the default asks.
		{"MyTool", `{"path":"README.md"}`, permission.Ask, ""},
		{"Deploy", `{"target":"staging-eu"}`, permission.Allow, "Deploy(to staging*)"},
		{"Deploy", `{"target":"prod"}`, permission.Ask, "Deploy(to prod)"},
		{"Deploy", `{"target":"staging-legacy"}`, permission.Deny, "Deploy(to *-legacy)"},
		// Without a declared subject, content rules cannot be matched: the
		// ask rule binds the whole tool and the allow rule matches nothing.
		{"Plain", `{"path":"src/a.go"}`, permission.Ask, "Plain(./docs/**)"},
	} {
		d, declared := tools[tc.tool].(tool.SubjectDeclarer)
		req := permission.Request{Tool: tc.tool, Input: json.RawMessage(tc.input), Cwd: cwd}
		if declared {
			req.Declarer = d
		}
		got := c.Check(req)
		if got.Behavior != tc.want || got.Rule != tc.rule {
			t.Errorf("%s %s: got %s by %q (%s), want %s by %q", tc.tool, tc.input, got.Behavior, got.Rule, got.Reason, tc.want, tc.rule)
		}
	}
	if _, ok := tools["Plain"].(tool.SubjectDeclarer); ok {
		t.Fatal("a tool built without a Subject must not declare one")
	}
}

// A tool without a declared subject keeps whole-tool rules: a rule naming
// it allows, asks and denies every call.
func TestUndeclaredToolWholeToolRules(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	for _, b := range []permission.Behavior{permission.Allow, permission.Ask, permission.Deny} {
		rs, err := permission.ParseRules(b, "settings.json", "", []string{"Plain"})
		if err != nil {
			t.Fatal(err)
		}
		c, err := permission.NewChecker(permission.Config{Cwd: cwd, Rules: rs, Tools: []string{"Plain"}})
		if err != nil {
			t.Fatal(err)
		}
		got := c.Check(permission.Request{Tool: "Plain", Input: json.RawMessage(`{"path":"x"}`), Cwd: cwd})
		if got.Behavior != b || got.Rule != "Plain" {
			t.Errorf("%s rule Plain: got %s by %q", b, got.Behavior, got.Rule)
		}
		if got := c.Check(permission.Request{Tool: "Plain", Input: json.RawMessage(`[1]`), Cwd: cwd}); b != permission.Deny && got.Behavior != permission.Ask {
			t.Errorf("%s rule Plain, input not an object: got %s (%s), want ask", b, got.Behavior, got.Reason)
		}
	}
}

// An input the declared subject cannot be read from is asked about, not
// matched.
func TestDeclaredSubjectUnreadableInput(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	rs, err := permission.ParseRules(permission.Allow, "settings.json", "", []string{"MyTool(./src/**)"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := permission.NewChecker(permission.Config{Cwd: cwd, Rules: rs, Tools: []string{"MyTool"}})
	if err != nil {
		t.Fatal(err)
	}
	d := myTool().(tool.SubjectDeclarer)
	if got := c.Check(permission.Request{Tool: "MyTool", Input: json.RawMessage(`"src/a"`), Cwd: cwd, Declarer: d}); got.Behavior != permission.Ask {
		t.Errorf("input not an object: got %s (%s)", got.Behavior, got.Reason)
	}
}

// serverDeclarer is an MCP server tool's declaration: the server it goes
// to (internal/mcpx's server tools declare theirs).
type serverDeclarer string

func (s serverDeclarer) Subject(json.RawMessage) (tool.Subject, error) {
	return tool.Subject{Server: string(s)}, nil
}

// An MCP tool that declares its server is matched by server rules even
// when the server's name contains "__", which its tool name alone cannot
// tell; for other names the declared server changes nothing.
func TestMCPServerSubject(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	var all []permission.Rule
	for b, raws := range map[permission.Behavior][]string{
		permission.Allow: {"mcp__my__srv", "mcp__plain"},
		permission.Ask:   {"mcp__my__srv__write"},
		permission.Deny:  {"mcp__other__*"},
	} {
		rs, err := permission.ParseRules(b, "settings.json", "", raws)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, rs...)
	}
	c, err := permission.NewChecker(permission.Config{Cwd: cwd, Rules: all})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, server string
		want         permission.Behavior
		rule         string
	}{
		{"mcp__my__srv__get", "my__srv", permission.Allow, "mcp__my__srv"},
		{"mcp__my__srv__get", "", permission.Ask, ""}, // by name alone the server reads as "my"
		{"mcp__my__srv__write", "my__srv", permission.Ask, "mcp__my__srv__write"},
		{"mcp__plain__get", "plain", permission.Allow, "mcp__plain"},
		{"mcp__plain__get", "", permission.Allow, "mcp__plain"},
		{"mcp__other__rm", "other", permission.Deny, "mcp__other__*"},
		{"mcp__other__rm", "", permission.Deny, "mcp__other__*"},
	} {
		req := permission.Request{Tool: tc.name, Input: json.RawMessage(`{}`), Cwd: cwd}
		if tc.server != "" {
			req.Declarer = serverDeclarer(tc.server)
		}
		if got := c.Check(req); got.Behavior != tc.want || got.Rule != tc.rule {
			t.Errorf("%s (server %q): got %s by %q (%s), want %s by %q", tc.name, tc.server, got.Behavior, got.Rule, got.Reason, tc.want, tc.rule)
		}
	}
	// The input must still be an object.
	if got := c.Check(permission.Request{Tool: "mcp__plain__get", Input: json.RawMessage(`[1]`), Cwd: cwd, Declarer: serverDeclarer("plain")}); got.Behavior != permission.Ask {
		t.Errorf("input not an object: %s (%s)", got.Behavior, got.Reason)
	}
}
