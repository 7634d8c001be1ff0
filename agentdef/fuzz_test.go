package agentdef

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// watchdog crashes the fuzz worker when one input takes more than five
// seconds, so the fuzzer records the input that hangs; the returned func
// stops it.
func watchdog(input string) func() {
	timer := time.AfterFunc(5*time.Second, func() {
		panic(fmt.Sprintf("input took more than 5s: %q", input))
	})
	return func() { timer.Stop() }
}

// FuzzParse feeds arbitrary files to the parser: it must never panic, and
// what it returns must hold together.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"---\nname: a\ndescription: d\n---\nbody",
		"---\r\nname: a\r\ndescription: d: e <example>user: x</example>\r\n---\r\n",
		"\uFEFF---\nname: a\ndescription: |\n  x\n\ttools: [a, b]\n---",
		"---\nname: a\ndescription: x---y\ntools: Bash(git *, Read\n---\n",
		"---\n- a\n---\n",
		"---\nname: a\ndescription: d\nhooks: {Stop: [{hooks: [{type: command, command: x}]}]}\nmcpServers: [a, {b: {command: c}}]\n---\n",
		"---\nname: a\ndescription: d\noutputSchema: {type: object, properties: {a: {$ref: '#/$defs/x'}}, $defs: {x: {anyOf: [{$ref: '#/$defs/x'}]}}}\n---\n",
		"---\nname: a\ndescription: d\nbudget: {usd: 0.5, tokens: 1e3, turns: 3, wallTime: 90s}\n---\n",
		"---\nname: a\ndescription: d\nbudget:\n  usd: -1\n  wallTime: 12\n---\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		defer watchdog(string(data))()
		def, diags := ParseFile("f.md", data, SourceProject)
		for _, d := range diags {
			if d.File != "f.md" || d.Line < 0 || d.Message == "" || (d.Severity != SeverityError && d.Severity != SeverityWarning) {
				t.Fatalf("bad diagnostic %+v", d)
			}
		}
		if def == nil {
			return
		}
		if def.Description == "" || checkName(def.Name) != "" {
			t.Fatalf("loaded an invalid definition: %q %q", def.Name, def.Description)
		}
		for _, d := range diags {
			if d.Severity == SeverityError {
				t.Fatalf("loaded despite error %s", d)
			}
		}
		note := ToolsNote(def)
		if note == "" {
			t.Fatal("empty tools note")
		}
		line := Listing([]*Definition{def})
		if !strings.HasPrefix(line, "- "+def.Name+": ") || !strings.HasSuffix(line, ")\n") {
			t.Fatalf("bad listing line %q", line)
		}
		for _, e := range append(append([]ToolEntry{}, def.Tools...), def.DisallowedTools...) {
			if e.Raw == "" || e.Raw != strings.TrimSpace(e.Raw) {
				t.Fatalf("bad tool entry %+v", e)
			}
		}
		if b := def.Budget; b.USD < 0 || b.Tokens < 0 || b.Turns < 0 || b.WallTime < 0 {
			t.Fatalf("negative budget %+v", b)
		}
		if utf8.Valid(data) && !utf8.ValidString(def.Description) {
			t.Fatalf("invalid UTF-8 description from valid input")
		}
	})
}

// FuzzJSON checks the --agents parser never panics.
func FuzzJSON(f *testing.F) {
	f.Add([]byte(`{"a": {"description": "d", "tools": ["Read"], "prompt": "p"}}`))
	f.Add([]byte(`{"a": {"description": 3}, "b": []}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		defs, _, err := ParseJSON("--agents", data, SourceFlag)
		if err != nil && defs != nil {
			t.Fatal("definitions with an error")
		}
	})
}

// FuzzFastPath checks that whenever the fast frontmatter path accepts a
// block, go-yaml reads the same fields from it.
func FuzzFastPath(f *testing.F) {
	f.Add("name: a\ndescription: Use it when needed, e.g. for x/y (z).\ntools: Read, Grep\nmodel:\n")
	f.Add("name: a\n\ncolor: blue  \nk_1-x: v'q\"r\n")
	f.Add("tools: [Read, \"Grep\", 'a''b']\nskills:\n  - x # c\n  - \"y\\\"z\"\nmaxTurns: 10  # cap\ndescription: |-\n  one\n  two\n\nmodel: opus\n")
	f.Add("description: Use it when: needed\n")
	f.Add("a:\n- x\n- 'y'\nb: >\n  folded\n  text\n")
	f.Add("name: v\nbackground: true\nmemory: false # c\nx: truex\n")
	f.Fuzz(func(t *testing.T, block string) {
		defer watchdog(block)()
		fast, status, _ := fastBlock(block, 2)
		if status == fastBail || checkLimits(block, 2) != nil {
			return
		}
		slow, isMap, err := slowBlock(block, 2)
		if status == fastInvalid {
			if err == nil {
				t.Fatalf("fast path says invalid, go-yaml accepts %q", block)
			}
			return
		}
		if err != nil || !isMap {
			t.Fatalf("fast path accepted %q, go-yaml: map=%v err=%v", block, isMap, err)
		}
		if len(fast) == 0 && len(slow) == 0 {
			return
		}
		if !cmp.Equal(fast, slow, cmp.AllowUnexported(field{})) {
			t.Fatalf("fast path differs for %q:\n%s", block, cmp.Diff(slow, fast, cmp.AllowUnexported(field{})))
		}
	})
}
