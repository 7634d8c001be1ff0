package permission

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Issue 9: with Read(./secrets/**) denied, `cat secrets/key.txt` was
// refused but globs, ~+, recursive readers and git printed the secret in
// default mode without asking. Every one of them is now denied or asked,
// in every mode.
func TestReadDenyBindsBash(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	secrets := []string{"Read(./secrets/**)"}
	denied := []string{
		"cat secrets/k", "cat secr*/k", "cat s*/*", "cat ~+/secrets/k", "cat ./secrets/../secrets/k",
		"head -c 9 secrets/k", "ls secrets", "cd secrets && cat k", "cat link-secret", "cp -r secrets $OUT/x",
		"mv secrets/k a", "wc < secrets/k", "cat $CWD/secrets/k", "grep x secrets/k", "tail s?crets/*",
	}
	asked := []string{
		"grep -r x .", "grep -R x", "grep -rn x", "rg x", "rg x .", "find .", "find . -type f", "ls -R", "tree",
		"git show HEAD:secrets/k", "git grep x", "git log -p", "git diff", "git cat-file -p HEAD:secrets/k",
		"cat $F", "cat ~-/k", "cat $PWD/secrets/k", "cat \"$(echo secrets)/k\"", "cd $D && cat k",
		"python3 -c 'print(1)'", "node -e 1", "perl -e 1", "awk '{print}' a.txt", "sed -n p a.txt",
		"echo x | python3", "bash < a.txt", "cp -r . $OUT/x", "diff -r . $OUT", "tar cf - .", "npm test",
		"ls | xargs cat", "find . -exec cat {} +", "base64 secrets/k", "cat a.txt | sh",
	}
	allowed := []string{
		"cat a.txt", "ls", "ls src", "grep x a.txt", "grep -r x src", "rg x src", "find src", "git status",
		"git log --oneline", "echo $HOME", "pwd", "cat src/../a.txt",
	}
	var cases []checkCase
	for _, mode := range []Mode{ModeDefault, ModeAcceptEdits, ModePlan, ModeDontAsk, ModeBypassPermissions} {
		for _, cmd := range denied {
			cases = append(cases, checkCase{name: "denied", mode: mode, deny: secrets, input: bashIn(cmd), want: Deny, wantRule: "Read(./secrets/**)"})
		}
		for _, cmd := range asked {
			want := Ask
			if mode == ModeDontAsk || mode == ModePlan && planDenies(t, f, cmd) {
				want = Deny
			}
			cases = append(cases, checkCase{name: "asked", mode: mode, deny: secrets, input: bashIn(cmd), want: want})
		}
		for _, cmd := range allowed {
			cases = append(cases, checkCase{name: "allowed", mode: mode, deny: secrets, input: bashIn(cmd), want: Allow})
		}
	}
	runCases(t, f, cases)
}

// Asking names the sandbox as the way to run such a command, and a Bash
// allow rule that names a program lifts only what cadre cannot see into.
func TestExposureReasonAndAllowRules(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	secrets := []string{"Read(./secrets/**)"}
	runCases(t, f, []checkCase{
		{name: "rule names program", mode: ModeBypassPermissions, deny: secrets, allow: []string{"Bash(npm test:*)"}, input: bashIn("npm test"), want: Allow},
		{name: "rule names program, dynamic word", mode: ModeBypassPermissions, deny: secrets, allow: []string{"Bash(npm test:*)"}, input: bashIn("npm test $X"), want: Ask},
		{name: "rule names program, names secret", mode: ModeBypassPermissions, deny: secrets, allow: []string{"Bash(npm test:*)"}, input: bashIn("npm test secrets/k"), want: Ask},
		{name: "whole Bash rule lifts nothing", mode: ModeBypassPermissions, deny: secrets, allow: []string{"Bash"}, input: bashIn("npm test"), want: Ask},
		{name: "rule on cat lifts no glob", deny: secrets, allow: []string{"Bash(cat:*)"}, input: bashIn("cat s*/k"), want: Deny},
		{name: "rule on grep lifts no recursion", deny: secrets, allow: []string{"Bash(grep:*)"}, input: bashIn("grep -r x ."), want: Ask},
		{name: "rule on python lifts no inline code", deny: secrets, allow: []string{"Bash(python3:*)"}, input: bashIn("python3 -c 'open(\"secrets/k\")'"), want: Ask},
		{name: "rule on python runs a script", deny: secrets, allow: []string{"Bash(python3 tool.py:*)"}, input: bashIn("python3 tool.py"), want: Allow},
		{name: "rule on git lifts no content", mode: ModeBypassPermissions, deny: secrets, allow: []string{"Bash(git:*)"}, input: bashIn("git show HEAD:secrets/k"), want: Ask},
		{name: "missing protected dir", deny: []string{"Read(./nothere/**)"}, input: bashIn("grep -r x ."), want: Allow},
		{name: "unrelated deny", deny: []string{"Read(//etc/shadow)"}, input: bashIn("grep -r x ."), want: Allow},
		{name: "home deny binds bash", mode: ModeBypassPermissions, deny: []string{"Read(~/.ssh/**)"}, input: bashIn("cat ~/.ss*/id"), want: Deny},
		{name: "home deny binds recursion", mode: ModeBypassPermissions, deny: []string{"Read(~/.ssh/**)"}, input: bashIn("grep -r x ~"), want: Ask},
		{name: "any depth", mode: ModeBypassPermissions, deny: []string{"Read(k)"}, input: bashIn("rg x"), want: Ask},
		// The sandbox masks what Read deny rules cover: such commands run.
		{name: "sandbox grep -r", mode: ModeBypassPermissions, deny: secrets, sandbox: true, input: bashIn("grep -r x ."), want: Allow},
		{name: "sandbox npm", mode: ModeBypassPermissions, deny: secrets, sandbox: true, input: bashIn("npm test"), want: Allow},
		{name: "sandbox default mode still asks", deny: secrets, sandbox: true, input: bashIn("npm test"), want: Ask},
		{name: "sandbox read-only recursion", deny: secrets, sandbox: true, input: bashIn("rg x"), want: Allow},
		{name: "sandbox static deny", mode: ModeBypassPermissions, deny: secrets, sandbox: true, input: bashIn("cat secrets/k"), want: Deny},
		{name: "sandbox git history", mode: ModeBypassPermissions, deny: secrets, sandbox: true, input: bashIn("git log -p"), want: Ask},
		{name: "sandbox git history elsewhere", mode: ModeBypassPermissions, deny: secrets, sandbox: true, input: bashIn("cd $D && git show HEAD:secrets/k"), want: Ask},
		{name: "sandbox git status", mode: ModeBypassPermissions, deny: secrets, sandbox: true, input: bashIn("git status && git log --oneline"), want: Allow},
		{name: "proc path", mode: ModeBypassPermissions, deny: secrets, input: bashIn("cat /proc/self/cwd/secrets/k"), want: Ask},
		{name: "proc redirect", mode: ModeBypassPermissions, deny: secrets, input: bashIn("wc < /proc/self/cwd/secrets/k"), want: Ask},
	})
	c, err := NewChecker(Config{Mode: ModeBypassPermissions, Cwd: f.cwd, Home: f.home, Rules: mustRules(t, Deny, secrets...)})
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"grep -r x .", "npm test"} {
		d := c.Check(Request{Tool: "Bash", Input: json.RawMessage(bashIn(cmd))})
		for _, w := range []string{"Read(./secrets/**) from test.json", "sandbox.enabled", "masked"} {
			if !strings.Contains(d.Reason, w) {
				t.Errorf("%s: reason %q lacks %q", cmd, d.Reason, w)
			}
		}
	}
}

// Edit deny rules bind commands that may write without naming the path.
func TestEditDenyBindsBash(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	src := []string{"Edit(./src/**)"}
	pem := []string{"Edit(**/*.pem)"}
	runCases(t, f, []checkCase{
		{name: "redirect", mode: ModeBypassPermissions, deny: src, input: bashIn("echo x > src/a"), want: Deny},
		{name: "redirect glob", mode: ModeBypassPermissions, deny: src, input: bashIn("echo x > sr*/a"), want: Ask},
		{name: "redirect glob match", mode: ModeBypassPermissions, deny: []string{"Edit(./a.txt)"}, input: bashIn("echo x > a.t?t"), want: Deny},
		{name: "redirect dynamic", mode: ModeBypassPermissions, deny: src, input: bashIn("echo x > $F"), want: Ask},
		{name: "touch dynamic", mode: ModeBypassPermissions, deny: src, input: bashIn("touch $F"), want: Ask},
		{name: "touch glob", mode: ModeBypassPermissions, deny: src, input: bashIn("touch s*/new"), want: Ask},
		{name: "unknown program", mode: ModeBypassPermissions, deny: src, input: bashIn("make"), want: Ask},
		{name: "unknown program named", mode: ModeBypassPermissions, deny: src, allow: []string{"Bash(make:*)"}, input: bashIn("make"), want: Allow},
		{name: "tee names path", mode: ModeBypassPermissions, deny: src, allow: []string{"Bash(tee:*)"}, input: bashIn("echo x | tee src/a"), want: Ask},
		{name: "cat dynamic is no write", mode: ModeBypassPermissions, deny: src, input: bashIn("cat $F"), want: Allow},
		{name: "read-only recursion is no write", mode: ModeBypassPermissions, deny: src, input: bashIn("grep -r x ."), want: Allow},
		{name: "sandbox holds whole dir", mode: ModeBypassPermissions, deny: src, sandbox: true, input: bashIn("make"), want: Allow},
		{name: "sandbox cannot hold pattern", mode: ModeBypassPermissions, deny: pem, sandbox: true, input: bashIn("make"), want: Ask},
		{name: "sandbox holds outside", mode: ModeBypassPermissions, deny: []string{"Edit(//$OUT/**)"}, sandbox: true, input: bashIn("make"), want: Allow},
	})
}

// A read-only agent runs its Bash under plan-mode rules in every mode.
func TestReadOnlyAgent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var cases []checkCase
	for _, mode := range []Mode{ModeDefault, ModeAcceptEdits, ModeDontAsk, ModeBypassPermissions} {
		cases = append(cases,
			checkCase{name: "touch", mode: mode, agentReadOnly: true, input: bashIn("touch x"), want: Deny},
			checkCase{name: "redirect", mode: mode, agentReadOnly: true, input: bashIn("echo x > y"), want: Deny},
			checkCase{name: "allowed by rule", mode: mode, agentReadOnly: true, allow: []string{"Bash(npm test:*)"}, input: bashIn("npm test"), want: Deny},
			checkCase{name: "write tool", mode: mode, agentReadOnly: true, tool: "Write", input: fileIn("file_path", "$CWD/x"), want: Deny},
			checkCase{name: "ls", mode: mode, agentReadOnly: true, input: bashIn("ls -la"), want: Allow},
			checkCase{name: "git log", mode: mode, agentReadOnly: true, input: bashIn("git log --oneline"), want: Allow},
		)
	}
	runCases(t, f, cases)
	child := Ratchet(Effective{Mode: ModeBypassPermissions, ReadOnly: true}, "", SessionLimits{})
	if !child.ReadOnly || !child.CheckerConfig("/", nil, "").ReadOnly {
		t.Errorf("a read-only parent's child is not read-only: %+v", child)
	}
}

// planDenies reports whether plan mode denies cmd with no rules at all
// (it writes).
func planDenies(t *testing.T, f fixture, cmd string) bool {
	t.Helper()
	c, err := NewChecker(Config{Mode: ModePlan, Cwd: f.cwd, Home: f.home})
	if err != nil {
		t.Fatal(err)
	}
	return c.Check(Request{Tool: "Bash", Input: json.RawMessage(f.expand(bashIn(cmd)))}).Behavior == Deny
}

func mustRules(t *testing.T, b Behavior, rules ...string) []Rule {
	t.Helper()
	rs, err := ParseRules(b, "test.json", "", rules)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func TestSandboxMasks(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, p := range []string{"src/.env", "src/deep/.env", "a.key", "src/b.key"} {
		full := filepath.Join(f.cwd, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rules := append(mustRules(t, Deny, "Read(./secrets/**)", "Read(.env)", "Read(~/.ssh/)", "Read(./nothere)", "Edit(./*.key)", "Bash(rm:*)"),
		mustRules(t, Allow, "Read(./src/**)")...)
	c, err := NewChecker(Config{Cwd: f.cwd, Home: f.home, Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.SandboxMasks(f.cwd, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantHidden := []string{filepath.Join(f.home, ".ssh"), filepath.Join(f.cwd, "secrets"), filepath.Join(f.cwd, "src", ".env"), filepath.Join(f.cwd, "src", "deep", ".env")}
	slices.Sort(wantHidden)
	if !slices.Equal(m.Hidden, wantHidden) {
		t.Errorf("hidden = %q, want %q", m.Hidden, wantHidden)
	}
	if want := []string{filepath.Join(f.cwd, "a.key")}; !slices.Equal(m.ReadOnly, want) {
		t.Errorf("read-only = %q, want %q", m.ReadOnly, want)
	}
}

func TestGitRootFindsRepository(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	f := newFixture(t)
	if out, err := exec.Command("git", "init", "-q", f.cwd).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	// From src/, `git show HEAD:secrets/k` still reads the repository's
	// secrets: the root is found above the cwd.
	c, err := NewChecker(Config{Mode: ModeBypassPermissions, Cwd: filepath.Join(f.cwd, "src"), Home: f.home,
		Rules: []Rule{{Behavior: Deny, Tool: "Read", Content: "./secrets/**", Base: f.cwd, Source: "p.json"}}})
	if err != nil {
		t.Fatal(err)
	}
	if d := c.Check(Request{Tool: "Bash", Input: json.RawMessage(bashIn("git show HEAD:secrets/k"))}); d.Behavior != Ask {
		t.Errorf("git show from src: %s (%s)", d.Behavior, d.Reason)
	}
}

// A project directory whose name holds pattern characters ("{print}",
// "a[1]") is a literal base for rules: found by the Bash table test, where
// the test's temporary directory was named after an awk program.
func TestRulesInDirectoryWithPatternCharacters(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"p{print}", "a[1]", "x*y", "q?", `b\s`} {
		root := filepath.Join(t.TempDir(), name)
		if err := os.MkdirAll(filepath.Join(root, "secrets"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "secrets", "k"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		rules := []Rule{{Behavior: Deny, Tool: "Read", Content: "./secrets/**", Base: root, Source: "p.json"}}
		c, err := NewChecker(Config{Mode: ModeBypassPermissions, Cwd: root, Rules: rules, Sandbox: &Sandbox{}})
		if err != nil {
			t.Fatal(err)
		}
		if d := c.Check(Request{Tool: "Read", Input: json.RawMessage(fileIn("file_path", filepath.Join(root, "secrets", "k")))}); d.Behavior != Deny {
			t.Errorf("%s: Read of the secret: %s (%s)", name, d.Behavior, d.Reason)
		}
		if d := c.Check(Request{Tool: "Bash", Input: json.RawMessage(bashIn("cat secrets/k"))}); d.Behavior != Deny {
			t.Errorf("%s: cat of the secret: %s", name, d.Behavior)
		}
		m, err := c.SandboxMasks(root, nil)
		if err != nil || len(m.Hidden) != 1 || m.Hidden[0] != filepath.Join(root, "secrets") {
			t.Errorf("%s: masks %v %v", name, m, err)
		}
	}
}
