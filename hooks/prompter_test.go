package hooks

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/permission"
)

type countingPrompter struct{ calls int }

func (c *countingPrompter) Prompt(context.Context, permission.Prompt) (permission.Reply, error) {
	c.calls++
	return permission.Reply{Choice: permission.ChoiceAllowSession}, nil
}

func TestPrompterAnswersWithPermissionRequestHooks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	out := func(name, body string) string {
		return script(t, dir, name, `cat >> `+log+`; echo >> `+log+"\ncat <<'EOF'\n"+body+"\nEOF")
	}
	prompt := permission.Prompt{
		Request:       permission.Request{Tool: "Bash", Input: json.RawMessage(`{"command":"touch x"}`), Cwd: dir},
		Suggested:     permission.Rule{Tool: "Bash", Content: "touch:*"},
		HasSuggestion: true,
	}
	tests := []struct {
		name      string
		cmd       string
		choice    permission.Choice
		message   string
		nextCalls int
	}{
		{"allow", out("allow.sh", `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`), permission.ChoiceAllowOnce, "", 0},
		{"deny with message", out("deny.sh", `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"ask ops"}}}`), permission.ChoiceDeny, "A PermissionRequest hook denied this call: ask ops", 0},
		{"exit 2", script(t, dir, "e2.sh", "cat >/dev/null; echo 'not in CI' >&2; exit 2"), permission.ChoiceDeny, "A PermissionRequest hook denied this call: not in CI", 0},
		{"allow with changed input", out("upd.sh", `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"command":"true"}}}}`), permission.ChoiceAllowOnce, "", 0},
		{"allow with session rules", out("rules.sh", `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedPermissions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"touch:*"}],"behavior":"allow","destination":"session"},{"type":"setMode","mode":"bypassPermissions","destination":"session"}]}}}`), permission.ChoiceAllowSession, "", 0},
		{"no decision asks the person", out("none.sh", `{}`), permission.ChoiceAllowSession, "", 1},
	}
	for _, tt := range tests {
		d := New(settings(t, cmdHooks(PermissionRequest, "Bash", tt.cmd)), Options{})
		next := &countingPrompter{}
		p := Prompter{Hooks: d.ForAgent(Scope{SessionID: "s", PermissionMode: func() permission.Mode { return permission.ModeDefault }}), Next: next}
		reply, err := p.Prompt(context.Background(), prompt)
		if err != nil {
			t.Fatal(err)
		}
		if reply.Choice != tt.choice || !strings.Contains(reply.Message, tt.message) || next.calls != tt.nextCalls {
			t.Errorf("%s: reply %+v, next asked %d times", tt.name, reply, next.calls)
		}
		switch tt.name {
		case "allow with changed input":
			if string(reply.UpdatedInput) != `{"command":"true"}` {
				t.Errorf("%s: updated input %s", tt.name, reply.UpdatedInput)
			}
		case "allow with session rules":
			// Only the addRules update applies; the mode change is not a hook's to make.
			want := []permission.Rule{{Behavior: permission.Allow, Tool: "Bash", Content: "touch:*", Source: permission.SourceSession}}
			if !slices.Equal(reply.Rules, want) || reply.UpdatedInput != nil {
				t.Errorf("%s: rules %+v input %s", tt.name, reply.Rules, reply.UpdatedInput)
			}
		default:
			if reply.UpdatedInput != nil || reply.Rules != nil {
				t.Errorf("%s: reply %+v", tt.name, reply)
			}
		}
	}
	lines := readLines(t, log)
	want := `{"session_id":"s","transcript_path":"","cwd":"` + dir + `","permission_mode":"default","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"touch x"},"permission_suggestions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"touch:*"}],"behavior":"allow","destination":"session"}]}`
	if len(lines) == 0 || lines[0] != want {
		t.Errorf("input:\n got %v\nwant %s", lines, want)
	}
	// Without hooks or a next prompter, nobody can answer.
	reply, err := Prompter{}.Prompt(context.Background(), prompt)
	if err != nil || reply.Choice != permission.ChoiceDeny {
		t.Errorf("bare prompter: %+v %v", reply, err)
	}
}

// Plugin agents cannot bring hooks: agentdef drops them with a warning, so
// there is nothing to register.
func TestPluginAgentHooksIgnored(t *testing.T) {
	t.Parallel()
	src := "---\nname: p\ndescription: plugin agent\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: ./x.sh\n---\nbody\n"
	def, diags := agentdef.ParseFile("plugin/agents/p.md", []byte(src), agentdef.SourcePlugin)
	if def == nil || def.Hooks != nil {
		t.Fatalf("plugin agent kept hooks: %+v", def)
	}
	warned := false
	for _, d := range diags {
		warned = warned || strings.Contains(d.String(), `plugin agents cannot set "hooks"`)
	}
	if !warned {
		t.Errorf("no warning: %v", diags)
	}
	// A project agent's hooks parse and Stop becomes SubagentStop.
	def, _ = agentdef.ParseFile("agents/p.md", []byte(strings.Replace(src, "PreToolUse", "Stop", 1)), agentdef.SourceProject)
	c, _, err := ParseAgent(def.Hooks, "agents/p.md")
	if err != nil || c.Len() != 1 || c.Entries()[0].Event != SubagentStop {
		t.Errorf("project agent hooks: %v %+v", err, c.Entries())
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"./g.sh","timeout":30}]}]}`,
		`{"Stop":[{"hooks":[{"type":"prompt","prompt":"x"},{"type":"command","command":"c","async":true}]}]}`,
		`{"PreToolUse":[{"matcher":"Ba(sh","hooks":[]}],"Nope":[]}`,
		`{"SubagentStop":[{"matcher":"mcp__.*|x","hooks":[{"type":"command","command":"c","timeout":1e-9}]}]}`,
		`[]`, `null`, `{"Stop":null}`, `{"Stop":[null]}`, `{"Stop":[{"hooks":[null]}]}`,
	} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, raw []byte, agent bool) {
		var c *Config
		var err error
		if agent {
			c, _, err = ParseAgent(raw, "a.md")
		} else {
			c, _, err = Parse(raw, "s.json")
		}
		if err != nil {
			if c != nil {
				t.Fatal("config with an error")
			}
			return
		}
		for _, e := range c.Entries() {
			if !e.Event.Valid() || e.Command == "" || e.Timeout < 0 {
				t.Fatalf("bad entry %+v", e)
			}
			if agent && e.Event == Stop {
				t.Fatal("Stop in an agent config")
			}
		}
		// Matching never panics, whatever the matcher.
		d := New(c, Options{Env: []string{}})
		for _, e := range events {
			_ = d.plan(&Input{HookEventName: e, ToolName: "Bash", AgentType: "Explore", Source: "startup"})
		}
	})
}
