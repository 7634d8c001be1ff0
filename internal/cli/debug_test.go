package cli

import (
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

func TestJoinDebugFilter(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{[]string{"-p", "--debug", "api", "hi"}, []string{"-p", "--debug=api", "hi"}},
		{[]string{"-d", "api,tools", "hi"}, []string{"--debug=api,tools", "hi"}},
		{[]string{"--debug", "fix the bug"}, []string{"--debug", "fix the bug"}},
		{[]string{"--debug", "api,nope"}, []string{"--debug", "api,nope"}},
		{[]string{"--debug"}, []string{"--debug"}},
		{[]string{"--debug=hooks", "x"}, []string{"--debug=hooks", "x"}},
		{[]string{"--", "--debug", "api"}, []string{"--", "--debug", "api"}},
		{[]string{"--debug", ""}, []string{"--debug", ""}},
	} {
		if got := joinDebugFilter(c.in); !slices.Equal(got, c.want) {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}

// --debug api followed by the prompt: the filter applies and the prompt
// stays the prompt.
func TestDebugFilterThroughTheCLI(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	s.Script("DEBUG", llmtest.Text("debugged"))
	p := runCadre(t, env, "", "-p", "--debug", "api", "DEBUG: go")
	if p.code != 0 || p.stdout != "debugged\n" || !strings.Contains(p.stderr, "[debug] main:") {
		t.Fatalf("code %d stdout %q stderr %q", p.code, p.stdout, p.stderr)
	}
}
