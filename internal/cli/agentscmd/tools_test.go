package agentscmd

import (
	"strings"
	"testing"
)

func TestUnknownTools(t *testing.T) {
	e := newEnv(t)
	p := e.write(".claude/agents/r.md", "---\nname: researcher\ndescription: Looks things up.\ntools: WebFetch, WebSearch, Read, LS, Skill, WebFecth, Frobnicate, mcp__github\ndisallowedTools: Bsh\n---\nYou research.\n")
	out, _, err := e.run("show", "researcher")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"effective tools:    WebFetch, WebSearch, Read, LS, Skill, mcp__github\n",
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
