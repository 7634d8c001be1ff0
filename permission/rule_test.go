package permission

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseRule(t *testing.T) {
	cases := []struct {
		in      string
		want    Rule
		wantErr string
	}{
		{in: "Bash", want: Rule{Tool: "Bash"}},
		{in: "  Read  ", want: Rule{Tool: "Read"}},
		{in: "Bash(npm test:*)", want: Rule{Tool: "Bash", Content: "npm test:*"}},
		{in: "Bash(git *)", want: Rule{Tool: "Bash", Content: "git *"}},
		{in: "Bash()", want: Rule{Tool: "Bash"}},
		{in: "Bash(*)", want: Rule{Tool: "Bash"}},
		{in: "Read(./src/**)", want: Rule{Tool: "Read", Content: "./src/**"}},
		{in: "Edit(//abs/**)", want: Rule{Tool: "Edit", Content: "//abs/**"}},
		{in: "Read(~/x)", want: Rule{Tool: "Read", Content: "~/x"}},
		{in: "WebFetch(domain:x.com)", want: Rule{Tool: "WebFetch", Content: "domain:x.com"}},
		{in: "mcp__s", want: Rule{Tool: "mcp__s"}},
		{in: "mcp__s__t", want: Rule{Tool: "mcp__s__t"}},
		{in: "mcp__s__*", want: Rule{Tool: "mcp__s__*"}},
		{in: "mcp__*", want: Rule{Tool: "mcp__*"}},
		{in: "mcp__my-server__do_thing", want: Rule{Tool: "mcp__my-server__do_thing"}},
		{in: "Agent(Explore)", want: Rule{Tool: "Agent", Content: "Explore"}},
		{in: "Task(Plan)", want: Rule{Tool: "Task", Content: "Plan"}},
		{in: `Bash(echo \(x\))`, want: Rule{Tool: "Bash", Content: "echo (x)"}},
		{in: `Bash(echo (x))`, want: Rule{Tool: "Bash", Content: "echo (x)"}},
		{in: "", wantErr: "empty"},
		{in: "Bash(npm", wantErr: "missing closing"},
		{in: "Bash)", wantErr: "unbalanced"},
		{in: "Bash(a))", wantErr: "unbalanced"},
		{in: "(x)", wantErr: "bad tool name"},
		{in: "Ba sh", wantErr: "bad tool name"},
		{in: "*", wantErr: "bad tool name"},
		{in: "mcp__", wantErr: "MCP"},
		{in: "mcp__s__t__*x", wantErr: "MCP"},
		{in: "Bash(:*)", wantErr: "empty command"},
		{in: "Bash(a:* b)", wantErr: "only allowed at the end"},
		{in: "WebFetch(x.com)", wantErr: "domain:"},
		{in: "Agent(a,,b)", wantErr: "empty agent"},
		{in: strings.Repeat("x", maxRuleLen+1), wantErr: "longer"},
	}
	for _, tc := range cases {
		got, err := ParseRule(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseRule(%q) err = %v, want containing %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseRule(%q): %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ParseRule(%q) (-want +got):\n%s", tc.in, diff)
		}
		// String round-trips.
		again, err := ParseRule(got.String())
		if err != nil || again != got {
			t.Errorf("round trip of %q: %q → %+v, %v", tc.in, got.String(), again, err)
		}
	}
}

func TestSplitToolList(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"Read,Grep", []string{"Read", "Grep"}},
		{"Read, Grep  Glob", []string{"Read", "Grep", "Glob"}},
		{"Bash(git log:*) Read", []string{"Bash(git log:*)", "Read"}},
		{"Bash(git log:*),Bash(npm run test, build)", []string{"Bash(git log:*)", "Bash(npm run test, build)"}},
		{"Agent(a, b), Read", []string{"Agent(a, b)", "Read"}},
		{"", nil},
		{" , ,", nil},
		{`Bash(echo \) x) Read`, []string{`Bash(echo \) x)`, "Read"}},
	}
	for _, tc := range cases {
		if diff := cmp.Diff(tc.want, SplitToolList(tc.in)); diff != "" {
			t.Errorf("SplitToolList(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestSplitBash(t *testing.T) {
	names := func(s *Script) []string {
		var out []string
		for _, c := range s.Commands {
			out = append(out, c.String())
		}
		return out
	}
	cases := []struct {
		in        string
		want      []string
		uncertain bool
		writes    int
	}{
		{in: "ls -la", want: []string{"ls -la"}},
		{in: "a && b || c; d | e & f\ng", want: []string{"a", "b", "c", "d", "e", "f", "g"}},
		{in: "echo $(a) `b` <(c) >(d)", want: []string{"echo $(a) $(b) <(c) >(d)", "a", "b", "c", "d"}},
		{in: "(a; (b))", want: []string{"a", "b"}},
		{in: "bash -c 'a; b'", want: []string{"a", "b"}},
		{in: "sh -ec \"a\"", want: []string{"a"}},
		{in: "eval 'a b' c", want: []string{"a b c"}},
		{in: "xargs -n1 rm", want: []string{"xargs -n1 rm", "rm <input>"}},
		{in: "find . -exec rm {} \\;", want: []string{"find . -exec rm {} ;", "rm {}"}},
		{in: "timeout -k 1 5 nice -n 2 a b", want: []string{"a b"}},
		{in: "env A=1 B=2 a", want: []string{"a"}},
		{in: "sudo -u x a", want: []string{"sudo -u x a", "a"}},
		{in: "A=1 a", want: []string{"a"}},
		{in: "A=1", want: nil},
		{in: "$X a", want: []string{"$X a"}, uncertain: true},
		{in: "a > f 2>&1 < g", want: []string{"a"}, writes: 1},
		{in: "a &> f; b >> g; c >| h", want: []string{"a", "b", "c"}, writes: 3},
		{in: "a > /dev/null", want: []string{"a"}},
		{in: "echo $((1+2))", want: []string{"echo $((1 + 2))"}},
		{in: "echo $((x+2))", want: []string{"echo $((x + 2))"}, uncertain: true},
		{in: "let x=1", want: nil, uncertain: true},
		{in: "declare -i x=1", want: nil, uncertain: true},
		{in: "bash -c \"$x\"", want: []string{`bash -c $x`}, uncertain: true},
	}
	for _, tc := range cases {
		s, err := SplitBash(tc.in)
		if err != nil {
			t.Errorf("SplitBash(%q): %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, names(s)); diff != "" {
			t.Errorf("SplitBash(%q) commands (-want +got):\n%s", tc.in, diff)
		}
		if got := len(s.Uncertain) > 0; got != tc.uncertain {
			t.Errorf("SplitBash(%q) uncertain = %v (%q), want %v", tc.in, got, s.Uncertain, tc.uncertain)
		}
		if len(s.Writes) != tc.writes {
			t.Errorf("SplitBash(%q) writes = %d, want %d", tc.in, len(s.Writes), tc.writes)
		}
	}
	for _, bad := range []string{"a &&", "'x", "(", "a |", "echo $(", "a\x00b", "bash -c 'echo \"x'"} {
		if _, err := SplitBash(bad); !errors.Is(err, ErrUnparseable) {
			t.Errorf("SplitBash(%q) err = %v, want ErrUnparseable", bad, err)
		}
	}
	// Deep nesting is refused, not followed forever.
	deep := "x"
	for i := 0; i < maxScriptDepth+2; i++ {
		b, _ := json.Marshal(deep)
		_ = b
		deep = "bash -c " + shQuote(deep)
	}
	if _, err := SplitBash(deep); !errors.Is(err, ErrUnparseable) {
		t.Errorf("deep nesting: err = %v, want ErrUnparseable", err)
	}
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func TestSuggestRule(t *testing.T) {
	cases := []struct {
		tool, input, want string
	}{
		{"Bash", bashIn("npm test --watch"), "Bash(npm test:*)"},
		{"Bash", bashIn("ls && rm -rf build"), "Bash(rm:*)"},
		{"Bash", bashIn("git push origin"), "Bash(git push:*)"},
		{"Bash", bashIn("curl -s x"), "Bash(curl:*)"},
		{"Write", fileIn("file_path", "/p/src/a.go"), "Edit(./src/a.go)"},
		{"Read", fileIn("file_path", "/etc/hosts"), "Read(//etc/hosts)"},
		{"Agent", fileIn("subagent_type", "Explore"), "Agent(Explore)"},
		{"WebFetch", `{"url":"https://Docs.x.com/a"}`, "WebFetch(domain:docs.x.com)"},
		{"mcp__s__t", `{}`, "mcp__s__t"},
	}
	for _, tc := range cases {
		r, ok := SuggestRule(Request{Tool: tc.tool, Input: json.RawMessage(tc.input), Cwd: "/p"})
		if !ok || r.String() != tc.want {
			t.Errorf("SuggestRule(%s %s) = %q, %v; want %q", tc.tool, tc.input, r.String(), ok, tc.want)
		}
	}
	if _, ok := SuggestRule(Request{Tool: "Bash", Input: json.RawMessage(bashIn("echo 'x"))}); ok {
		t.Error("suggestion for an unparseable command")
	}
}

func TestBashReadOnly(t *testing.T) {
	for cmd, want := range map[string]bool{
		"ls -la": true, "git status && git diff": true, "cat a | grep b | wc -l": true, "echo $(pwd)": true,
		"find . -name x": true, "rg foo": true,
		"ls > x": false, "rm x": false, "find . -delete": false, "git push": false, "echo 'x": false,
		"$X": false, "sort -o f x": false, "ls | xargs cat": false, "npm test": false, "sudo ls": false,
	} {
		if got := BashReadOnly(cmd); got != want {
			t.Errorf("BashReadOnly(%q) = %v, want %v", cmd, got, want)
		}
	}
}
