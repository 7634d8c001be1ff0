package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		raw     string
		entries []Entry
		diags   []string
		err     string
	}{
		{name: "empty", raw: ``},
		{name: "null", raw: `null`},
		{name: "empty object", raw: `{}`},
		{
			name:    "one command",
			raw:     `{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"./guard.sh","timeout":30}]}]}`,
			entries: []Entry{{Event: PreToolUse, Matcher: "Bash", Command: "./guard.sh", Timeout: 30 * time.Second, Source: "s.json"}},
		},
		{
			name: "events in documentation order, groups in file order, fractional timeout",
			raw: `{"Stop":[{"hooks":[{"type":"command","command":"b"}]}],
			       "PreToolUse":[{"hooks":[{"type":"command","command":"a1","timeout":0.5}]},{"matcher":"Edit|Write","hooks":[{"type":"command","command":"a2"}]}]}`,
			entries: []Entry{
				{Event: PreToolUse, Command: "a1", Timeout: 500 * time.Millisecond, Source: "s.json"},
				{Event: PreToolUse, Matcher: "Edit|Write", Command: "a2", Source: "s.json"},
				{Event: Stop, Command: "b", Source: "s.json"},
			},
		},
		{
			name:  "unknown event with a suggestion",
			raw:   `{"PreToolUSe":[{"hooks":[{"type":"command","command":"x"}]}]}`,
			diags: []string{`s.json: hooks.PreToolUSe: unknown hook event "PreToolUSe" (did you mean "PreToolUse"?); ignored`},
		},
		{
			name:  "Claude Code event cadre does not fire",
			raw:   `{"PostToolBatch":[{"hooks":[{"type":"command","command":"x"}]}]}`,
			diags: []string{`s.json: hooks.PostToolBatch: "PostToolBatch" is a Claude Code hook event cadre does not fire; ignored`},
		},
		{
			name:    "unsupported type skipped, command kept",
			raw:     `{"Stop":[{"hooks":[{"type":"prompt","prompt":"x"},{"type":"command","command":"c"}]}]}`,
			entries: []Entry{{Event: Stop, Command: "c", Source: "s.json"}},
			diags:   []string{`s.json: hooks.Stop[0].hooks[0]: hook type "prompt" is not supported by cadre (only "command"); skipped`},
		},
		{
			name:    "unknown key",
			raw:     `{"Stop":[{"hooks":[{"type":"command","command":"c","async":true,"statusMessage":"hi"}]}]}`,
			entries: []Entry{{Event: Stop, Command: "c", Source: "s.json"}},
			diags:   []string{`s.json: hooks.Stop[0].hooks[0].async: key "async" is not supported by cadre; ignored (the hook runs synchronously, every time)`},
		},
		{
			name:    "bad regex never matches",
			raw:     `{"PreToolUse":[{"matcher":"Ba(sh","hooks":[{"type":"command","command":"c"}]}]}`,
			entries: []Entry{{Event: PreToolUse, Matcher: "Ba(sh", Command: "c", Source: "s.json"}},
			diags:   []string{"s.json: hooks.PreToolUse[0].matcher: matcher \"Ba(sh\" is not a valid regular expression (RE2 syntax): error parsing regexp: missing closing ): `Ba(sh`; the group never matches"},
		},
		{
			name:    "matcher on an event without one",
			raw:     `{"UserPromptSubmit":[{"matcher":"x","hooks":[{"type":"command","command":"c"}]}]}`,
			entries: []Entry{{Event: UserPromptSubmit, Matcher: "x", Command: "c", Source: "s.json"}},
			diags:   []string{`s.json: hooks.UserPromptSubmit[0].matcher: UserPromptSubmit hooks have no matcher; "x" is ignored and the group always runs`},
		},
		{name: "not an object", raw: `[1]`, err: "s.json: hooks: invalid hooks configuration: must be an object"},
		{name: "event not a list", raw: `{"Stop":{"hooks":[]}}`, err: "s.json: hooks.Stop: invalid hooks configuration: must be a list"},
		{name: "matcher not a string", raw: `{"Stop":[{"matcher":3,"hooks":[]}]}`, err: "hooks.Stop[0].matcher: invalid hooks configuration: must be a string"},
		{name: "missing type", raw: `{"Stop":[{"hooks":[{"command":"c"}]}]}`, err: `hooks.Stop[0].hooks[0]: invalid hooks configuration: missing "type"`},
		{name: "missing command", raw: `{"Stop":[{"hooks":[{"type":"command"}]}]}`, err: `needs a non-empty "command" string`},
		{name: "blank command", raw: `{"Stop":[{"hooks":[{"type":"command","command":"  "}]}]}`, err: `needs a non-empty "command" string`},
		{name: "zero timeout", raw: `{"Stop":[{"hooks":[{"type":"command","command":"c","timeout":0}]}]}`, err: `"timeout" must be a number of seconds greater than 0`},
		{name: "string timeout", raw: `{"Stop":[{"hooks":[{"type":"command","command":"c","timeout":"5"}]}]}`, err: `"timeout" must be a number`},
		{name: "huge timeout", raw: `{"Stop":[{"hooks":[{"type":"command","command":"c","timeout":1e300}]}]}`, err: `at most a day`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, diags, err := Parse(json.RawMessage(tt.raw), "s.json")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, ErrInvalid) {
					t.Fatalf("err = %v, want one containing %q wrapping ErrInvalid", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.entries, c.Entries()); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
			var got []string
			for _, d := range diags {
				got = append(got, d.String())
			}
			if diff := cmp.Diff(tt.diags, got); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseAgentStopBecomesSubagentStop(t *testing.T) {
	t.Parallel()
	raw := `{"Stop":[{"hooks":[{"type":"command","command":"s"}]}],"SubagentStop":[{"hooks":[{"type":"command","command":"ss"}]}],"PreToolUse":[{"matcher":"Read","hooks":[{"type":"command","command":"p"}]}]}`
	c, _, err := ParseAgent(json.RawMessage(raw), "agents/a.md")
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{Event: PreToolUse, Matcher: "Read", Command: "p", Source: "agents/a.md"},
		{Event: SubagentStop, Command: "s", Source: "agents/a.md"},
		{Event: SubagentStop, Command: "ss", Source: "agents/a.md"},
	}
	if diff := cmp.Diff(want, c.Entries()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// In a settings file, Stop stays Stop.
	s, _, err := Parse(json.RawMessage(raw), "s.json")
	if err != nil {
		t.Fatal(err)
	}
	if e := s.Entries(); e[1].Event != Stop {
		t.Errorf("settings Stop became %s", e[1].Event)
	}
}

func TestMerge(t *testing.T) {
	t.Parallel()
	user := Source{Raw: json.RawMessage(`{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"u"}]}]}`), File: "user.json"}
	project := Source{Raw: json.RawMessage(`{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"p"}]}]}`), File: "project.json"}
	managed := Source{Raw: json.RawMessage(`{"Stop":[{"hooks":[{"type":"command","command":"m"}]}]}`), File: "managed.json", Managed: true}
	cmds := func(c *Config) []string {
		var out []string
		for _, e := range c.Entries() {
			out = append(out, e.Command+"@"+e.Source)
		}
		return out
	}

	c, diags, err := Merge([]Source{user, project, managed}, MergeOptions{})
	if err != nil || len(diags) != 0 {
		t.Fatal(err, diags)
	}
	if diff := cmp.Diff([]string{"u@user.json", "p@project.json", "m@managed.json"}, cmds(c)); diff != "" {
		t.Errorf("hooks add up across files (-want +got):\n%s", diff)
	}

	c, diags, err = Merge([]Source{user, project, managed}, MergeOptions{ManagedOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"m@managed.json"}, cmds(c)); diff != "" {
		t.Errorf("managed only (-want +got):\n%s", diff)
	}
	if len(diags) != 2 || diags[0].File != "user.json" || !strings.Contains(diags[0].Message, "allowManagedHooksOnly") {
		t.Errorf("diagnostics = %v", diags)
	}

	c, _, err = Merge([]Source{user, managed}, MergeOptions{DisableAll: true})
	if err != nil || c.Len() != 0 {
		t.Errorf("disable all: %v, %d hooks", err, c.Len())
	}

	bad := Source{Raw: json.RawMessage(`{"Stop":[{"hooks":[{"type":"command"}]}]}`), File: "bad.json"}
	if _, _, err := Merge([]Source{user, bad}, MergeOptions{}); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("invalid source: err = %v", err)
	}
}

func TestMatcher(t *testing.T) {
	t.Parallel()
	// Observed with Claude Code 2.1.328 against the tool name "Bash".
	tests := []struct {
		matcher string
		value   string
		want    bool
	}{
		{"", "Bash", true},
		{"*", "Bash", true},
		{"Bash", "Bash", true},
		{"Bas", "Bash", false}, // a plain name is exact
		{"bash", "Bash", false},
		{"Read|Bash", "Bash", true},
		{"Read|Write", "Bash", false},
		{"as.", "Bash", true}, // a regular expression is searched for
		{"^Bash$", "Bash", true},
		{"^Bas$", "Bash", false},
		{"mcp__memory__.*", "mcp__memory__create_entities", true},
		{"mcp__memory__.*", "mcp__github__x", false},
		{"mcp__memory__create_entities", "mcp__memory__create_entities", true},
		{"Notebook.*", "NotebookEdit", true},
	}
	for _, tt := range tests {
		m, err := compileMatcher(tt.matcher)
		if err != nil {
			t.Fatalf("%q: %v", tt.matcher, err)
		}
		if got := m.matches(tt.value); got != tt.want {
			t.Errorf("matcher %q on %q = %v, want %v", tt.matcher, tt.value, got, tt.want)
		}
	}
}

func TestNewConfig(t *testing.T) {
	t.Parallel()
	cb := func(context.Context, *Input) (json.RawMessage, error) { return nil, nil }
	c, err := NewConfig(Group{Event: PreToolUse, Matcher: "Bash", Handlers: []Handler{{Callback: cb, Name: "sdk-1"}}, Source: "sdk"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Entry{{Event: PreToolUse, Matcher: "Bash", Command: "callback sdk-1", Source: "sdk"}}, c.Entries()); diff != "" {
		t.Error(diff)
	}
	for _, g := range []Group{
		{Event: "Nope", Handlers: []Handler{{Command: "x"}}},
		{Event: Stop},
		{Event: Stop, Handlers: []Handler{{}}},
		{Event: Stop, Handlers: []Handler{{Command: "x", Timeout: -1}}},
		{Event: PreToolUse, Matcher: "(", Handlers: []Handler{{Command: "x"}}},
	} {
		if _, err := NewConfig(g); err == nil {
			t.Errorf("NewConfig(%+v) succeeded", g)
		}
	}
}
