package agentscmd

import (
	"strings"
	"testing"
)

func TestUnknownTools(t *testing.T) {
	e := newEnv(t)
	p := e.write(".claude/agents/r.md", "---\nname: researcher\ndescription: Looks things up.\ntools: WebFetch, WebSearch, Read, LS, Skill, WebFecth, Frobnicate, mcp__github, SendMessage\ndisallowedTools: Bsh\n---\nYou research.\n")
	out, _, err := e.run("show", "researcher")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"effective tools:    LS, Read, WebFetch, WebSearch, Skill\n",
		"mcp tools:          mcp__github (granted when their server is connected)\n",
		"unavailable tools:  SendMessage (cadre does not give these to a sub-agent yet; dropped)\n",
		"unknown tools:      WebFecth, Frobnicate (match no tool cadre has; dropped)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	for _, args := range [][]string{{"check"}, {"check", p}} {
		out, errOut, err := e.run(args...)
		if err != nil {
			t.Fatalf("%v: check failed on warnings only: %v", args, err)
		}
		for _, want := range []string{
			p + `:4: warning: tools entry "WebFecth" names no tool cadre knows (did you mean "WebFetch"?); the agent does not get it`,
			p + `:4: warning: tools entry "Frobnicate" names no tool cadre knows`,
			p + `:5: warning: disallowedTools entry "Bsh" names no tool cadre knows (did you mean "Bash"?); it denies nothing`,
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%v lacks %q:\n%s", args, want, out)
			}
		}
		if strings.Contains(out, `"WebFetch" names`) || strings.Contains(out, "mcp__github") || strings.Contains(out, `"LS"`) {
			t.Errorf("%v warns on a known tool:\n%s", args, out)
		}
		if !strings.Contains(errOut, "3 warning(s)") {
			t.Errorf("%v summary: %s", args, errOut)
		}
	}
}

// TestEffectiveToolsOfAllToolsAgents: an agent with no tools key gets
// every tool a session has (the built-in set, Skill and Agent), and one
// with disallowedTools all but those; show lists them by name.
func TestEffectiveToolsOfAllToolsAgents(t *testing.T) {
	e := newEnv(t)
	e.write(".claude/agents/all.md", "---\nname: everything\ndescription: Does it all.\n---\nGo.\n")
	e.write(".claude/agents/ro.md", "---\nname: readonly\ndescription: Reads.\ndisallowedTools: Write, Edit, MultiEdit, NotebookEdit, Agent\n---\nGo.\n")
	all := strings.Join(builtinToolNames(), ", ")
	for name, want := range map[string]string{
		"everything": all,
		"readonly":   "Bash, BashOutput, Glob, Grep, KillShell, LS, Read, TodoWrite, WebFetch, WebSearch, Skill",
	} {
		out, _, err := e.run("show", name)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "effective tools:    "+want+"\n") {
			t.Errorf("%s: want effective tools %s:\n%s", name, want, out)
		}
	}
	if !strings.Contains(all, "WebFetch") || !strings.Contains(all, "Skill") || !strings.HasPrefix(all, "Agent, ") {
		t.Errorf("builtin tool names %s", all)
	}
}
