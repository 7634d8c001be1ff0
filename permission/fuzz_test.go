package permission

import (
	"encoding/json"
	"testing"
)

func FuzzParseRule(f *testing.F) {
	for _, s := range []string{"Bash", "Bash(npm test:*)", "Read(./src/**)", "mcp__s__*", `Bash(echo \(x\))`, "Agent(a, b)", "WebFetch(domain:x.com)", "Bash(", ")"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRule(s)
		if err != nil {
			return
		}
		again, err := ParseRule(r.String())
		if err != nil {
			t.Fatalf("ParseRule(%q) = %+v, but its String %q does not parse: %v", s, r, r.String(), err)
		}
		if again != r {
			t.Fatalf("round trip of %q: %+v != %+v", s, again, r)
		}
		_ = SplitToolList(s)
	})
}

// FuzzSplitBash checks that the splitter never panics and that a command it
// cannot parse, or cannot fully analyse, is never allowed without asking —
// not even in bypassPermissions mode or under an allow-everything rule.
func FuzzSplitBash(f *testing.F) {
	for _, s := range []string{"ls -la", "npm test && rm -rf ~", "echo $(rm -rf /)", "bash -c 'rm x'", "a |", "'x", "cat <<EOF\nx\nEOF", "find . -exec rm {} \\;", "$X", "echo $((x))", "f() { rm x; }; f", "bash <<< 'rm x'", "echo rm x | sh", "flock L -c 'rm x'", "git -c alias.z='!rm x' z", "alias r=rm; r x", "sed 's/a/b/e' f", "source <(echo rm)"} {
		f.Add(s)
	}
	cwd := f.TempDir()
	var checkers []*Checker
	for _, m := range []Mode{ModeDefault, ModeAcceptEdits, ModeBypassPermissions, ModeDontAsk, ModePlan} {
		c, err := NewChecker(Config{Mode: m, Cwd: cwd, Home: cwd, Rules: []Rule{{Behavior: Allow, Tool: "Bash"}, {Behavior: Allow, Tool: "Bash", Content: "rm:*"}}})
		if err != nil {
			f.Fatal(err)
		}
		checkers = append(checkers, c)
	}
	deny, err := NewChecker(Config{Mode: ModeBypassPermissions, Cwd: cwd, Home: cwd, Rules: []Rule{{Behavior: Deny, Tool: "Bash", Content: "rm:*"}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		// The checker sees the command as the tool will: after a JSON
		// round trip (invalid UTF-8 becomes U+FFFD).
		in, _ := json.Marshal(map[string]string{"command": cmd})
		var back map[string]string
		if err := json.Unmarshal(in, &back); err != nil {
			t.Fatal(err)
		}
		cmd = back["command"]
		s, splitErr := SplitBash(cmd)
		req := Request{Tool: "Bash", Input: in}
		for _, c := range checkers {
			d := c.Check(req)
			unsure := splitErr != nil || len(s.Uncertain) > 0 && c.Mode() != ModeBypassPermissions
			if unsure && d.Behavior == Allow {
				t.Fatalf("mode %s: %q cannot be analysed (%v %v) but was allowed: %s", c.Mode(), cmd, splitErr, s, d.Reason)
			}
		}
		if splitErr != nil {
			return
		}
		// In bypass mode with a deny rule, uncertainty still asks.
		if d := deny.Check(req); len(s.Uncertain)+len(s.Opaque) > 0 && d.Behavior == Allow {
			t.Fatalf("%q is uncertain (%v) or opaque (%v) but bypass with a deny rule allowed it", cmd, s.Uncertain, s.Opaque)
		}
		// A command named rm anywhere in the script is denied by Bash(rm:*).
		for _, sc := range s.Commands {
			if sc.Name() == "rm" {
				if d := deny.Check(req); d.Behavior != Deny {
					t.Fatalf("%q runs rm but got %s: %s", cmd, d.Behavior, d.Reason)
				}
			}
		}
	})
}

// FuzzRuleMatch checks rule matching on arbitrary rules and inputs: no
// panic, and adding a rule as deny never makes a decision more permissive
// than having no rule, while adding it as allow never makes it less.
func FuzzRuleMatch(f *testing.F) {
	for _, s := range [][2]string{
		{"Bash(npm test:*)", "npm test && rm -rf ~"},
		{"Bash(git *)", "git $X push"},
		{"Read(./src/**)", "src/../../etc/passwd"},
		{"Edit(*.go)", "a/b/c.go"},
		{"Read(~/.ssh/**)", "~/.ssh/id_rsa"},
		{"Bash(echo:*)", "echo $(curl x)"},
		{"Agent(Explore)", "Explore"},
	} {
		f.Add(s[0], s[1])
	}
	cwd := f.TempDir()
	f.Fuzz(func(t *testing.T, ruleText, subject string) {
		r, err := ParseRule(ruleText)
		if err != nil {
			return
		}
		checker := func(b Behavior, sandboxed bool) *Checker {
			var rules []Rule
			if b != "" {
				rr := r
				rr.Behavior = b
				rules = []Rule{rr}
			}
			// The rule's tool is made known, as an embedder's own tool
			// would be: an unknown name is an error, tested elsewhere.
			cfg := Config{Cwd: cwd, Home: cwd, Rules: rules, Tools: []string{r.Tool}}
			if sandboxed {
				cfg.Sandbox = &Sandbox{}
			}
			c, err := NewChecker(cfg)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		none, deny, ask, allow := checker("", false), checker(Deny, false), checker(Ask, false), checker(Allow, false)
		denySandboxed := checker(Deny, true)
		var reqs []Request
		for _, tool := range []string{"Bash", "Read", "Edit", "Glob", "Agent", "WebFetch", r.Tool} {
			var in []byte
			switch tool {
			case "Bash":
				in, _ = json.Marshal(map[string]string{"command": subject})
			case "Glob":
				in, _ = json.Marshal(map[string]string{"pattern": subject})
			case "Agent":
				in, _ = json.Marshal(map[string]string{"subagent_type": subject})
			case "WebFetch":
				in, _ = json.Marshal(map[string]string{"url": subject})
			default:
				in, _ = json.Marshal(map[string]string{"file_path": subject})
			}
			reqs = append(reqs, Request{Tool: tool, Input: in})
		}
		for _, req := range reqs {
			n, d, a, al := none.Check(req), deny.Check(req), ask.Check(req), allow.Check(req)
			if level(d.Behavior) > level(n.Behavior) || level(a.Behavior) > level(n.Behavior) {
				t.Fatalf("%s %s: rule %s as deny/ask made it more permissive: none=%s deny=%s ask=%s", req.Tool, req.Input, r, n.Behavior, d.Behavior, a.Behavior)
			}
			// The sandbox only ever lifts what it can hold.
			if ds := denySandboxed.Check(req); level(ds.Behavior) < level(d.Behavior) {
				t.Fatalf("%s %s: rule %s as deny with the sandbox is stricter: %s (%s), without %s", req.Tool, req.Input, r, ds.Behavior, ds.Reason, d.Behavior)
			}
			if level(al.Behavior) < level(n.Behavior) {
				t.Fatalf("%s %s: rule %s as allow made it less permissive: none=%s allow=%s", req.Tool, req.Input, r, n.Behavior, al.Behavior)
			}
		}
	})
}
