package permission_test

import (
	"context"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/sandbox"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/anthropic"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/tool"
	"github.com/cadre-dev/cadre/tool/builtin"
)

// secretToken is the content of the protected file; it must never come
// back in a tool result.
const secretToken = "TOPSECRET-7c1e9a"

// readSecretCommands are ways to read secrets/key.txt through Bash. Each
// prints the secret when nothing stops it (the control run checks that),
// using only programs every CI machine has (coreutils, findutils, grep,
// sed, awk, perl, tar, git, ripgrep).
var readSecretCommands = []string{
	"cat secrets/key.txt",
	"cat secr*/key.txt",
	"cat s*/*",
	"cat ~+/secrets/key.txt",
	"cat ./secrets/../secrets/key.txt",
	`cat "$PWD/secrets/key.txt"`,
	"cat $(pwd)/secrets/key.txt",
	"cat `echo secrets/key.txt`",
	"F=secrets/key.txt; cat $F",
	"D=secrets; cat $D/key.txt",
	`cat "$(ls -d secr*)/key.txt"`,
	"cat secrets/key.tx?",
	"cat secrets/[k]ey.txt",
	"cat {secrets,nothere}/key.txt 2>/dev/null",
	"cat /proc/self/cwd/secrets/key.txt",
	"cat < secrets/key.txt",
	"exec 3< secrets/key.txt; cat <&3",
	"while read l; do echo $l; done < secrets/key.txt",
	"head secrets/key.txt",
	"tail -n 5 secrets/key.txt",
	"nl secrets/key.txt",
	"sort secrets/key.txt",
	"cut -c1-100 secrets/key.txt",
	"tr a a < secrets/key.txt",
	"paste secrets/key.txt",
	"tac secrets/key.txt",
	"base64 secrets/key.txt | base64 -d",
	"dd if=secrets/key.txt status=none",
	"diff /dev/null secrets/key.txt",
	"grep . secrets/key.txt",
	"grep -r TOPSECRET .",
	"grep -R TOPSECRET",
	"grep -rh TOP .",
	"rg TOPSECRET",
	"rg -uu --no-ignore TOP .",
	`find . -name key.txt -exec cat {} \;`,
	"find . -path ./.git -prune -o -type f -print | xargs cat",
	"find secrets -type f -exec cat {} +",
	"for f in secrets/*; do cat \"$f\"; done",
	"ls secrets | while read f; do cat secrets/$f; done",
	"printf '%s\\n' secrets/key.txt | xargs cat",
	"xargs cat <<< secrets/key.txt",
	"cd secrets && cat key.txt",
	"cd $(echo secrets) && cat key.txt",
	"pushd secrets >/dev/null && cat key.txt",
	"( cd secrets; cat key.txt )",
	"env cat secrets/key.txt",
	"timeout 5 cat secrets/key.txt",
	"bash -c 'cat secrets/key.txt'",
	"sh -c 'cat secr*/key.txt'",
	"eval 'cat secrets/key.txt'",
	"echo 'cat secrets/key.txt' > r.sh && bash r.sh",
	"echo 'cat secrets/key.txt' | bash",
	"bash <<< 'cat secrets/key.txt'",
	"cp secrets/key.txt copy.txt && cat copy.txt",
	"cp -r secrets copied && cat copied/key.txt",
	"ln -s secrets/key.txt link && cat link",
	"tar cf - secrets | tar xOf -",
	"tar cf - . | tar xOf - ./secrets/key.txt",
	"awk '{print}' secrets/key.txt",
	`awk 'BEGIN{while((getline l < "secrets/key.txt")>0) print l}'`,
	"sed -n p secrets/key.txt",
	"sed '' secrets/key.txt",
	"perl -ne print secrets/key.txt",
	`perl -e 'open F, "<", "secrets/key.txt"; print <F>'`,
	"git show HEAD:secrets/key.txt",
	"git -C secrets/.. show HEAD:secrets/key.txt",
	"git cat-file -p HEAD:secrets/key.txt",
	"git grep TOPSECRET",
	"git log -p",
	"git --no-pager log -p -- secrets",
	"git show HEAD",
	"git archive HEAD | tar xO",
	"git diff --no-index /dev/null secrets/key.txt",
}

// optionalCommands need programs not every machine has; they run where
// the program is installed.
var optionalCommands = map[string]string{
	`python3 -c "print(open('secrets/key.txt').read())"`:                          "python3",
	`echo "print(open('secrets/key.txt').read())" | python3`:                      "python3",
	`node -e "console.log(require('fs').readFileSync('secrets/key.txt','utf8'))"`: "node",
	"less secrets/key.txt":                                  "less",
	"strings secrets/key.txt":                               "strings",
	"jq -R . secrets/key.txt":                               "jq",
	`printf 'all:\n\tcat secrets/key.txt\n' | make -s -f -`: "make",
}

// denyRepo builds the repository every case copies: a committed secret,
// so git can print it from history too.
func denyRepo(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	for name, body := range map[string]string{
		"secrets/key.txt": secretToken + "\n",
		"README.md":       "# demo\n",
		"src/main.go":     "package main\n\nfunc main() {}\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	return dir
}

// copyTree copies a directory tree (files, directories, symlinks).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}

// denyPrompter answers every prompt with "no", counting them: a person
// who never lets the secret out.
type denyPrompter struct {
	mu    sync.Mutex
	asked int
}

func (p *denyPrompter) Prompt(context.Context, permission.Prompt) (permission.Reply, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked++
	return permission.Reply{Choice: permission.ChoiceDeny}, nil
}

// denyCase is one command in one mode, with or without the sandbox.
type denyCase struct {
	command string
	mode    permission.Mode
	rules   []string // deny rules
	sandbox *sandbox.Sandbox
}

// denyOutcome is what happened to the call.
type denyOutcome struct {
	text    string // every tool result and the final answer
	denied  bool
	asked   int
	ranText string // the Bash result when the call ran
}

// runDenyCase runs one case through the real loop: the Anthropic SDK
// against llmtest, the real Bash tool (sandboxed or not) and the
// permission Session, in a fresh copy of the repository.
func runDenyCase(t *testing.T, srv *llmtest.Server, template string, c denyCase) denyOutcome {
	t.Helper()
	cwd := filepath.Join(t.TempDir(), "repo")
	if err := copyTree(template, cwd); err != nil {
		t.Fatal(err)
	}
	rules, err := permission.ParseRules(permission.Deny, "project settings", cwd, c.rules)
	if err != nil {
		t.Fatal(err)
	}
	cc := permission.Config{Mode: c.mode, Cwd: cwd, Home: t.TempDir(), Rules: rules}
	bcfg := builtin.Config{NoRipgrep: true, KillGrace: 500 * time.Millisecond}
	if c.sandbox != nil {
		cc.Sandbox = &permission.Sandbox{}
	}
	checker, err := permission.NewChecker(cc)
	if err != nil {
		t.Fatal(err)
	}
	if c.sandbox != nil {
		bcfg.Sandbox = &sandbox.Bash{Sandbox: c.sandbox, Masks: func(cwd string, dirs []string) ([]string, []string, error) {
			m, err := checker.SandboxMasks(cwd, dirs)
			return m.Hidden, m.ReadOnly, err
		}}
	}
	prompter := &denyPrompter{}
	sess, err := permission.NewSession(permission.SessionConfig{Checker: checker, Prompter: prompter})
	if err != nil {
		t.Fatal(err)
	}
	model, err := anthropic.New(anthropic.Config{BaseURL: srv.URL(), APIKey: "test", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	cfg := loop.Config{
		Model: model, ModelID: "llmtest-model", System: "You are a test agent.",
		Tools: tool.NewPool(builtin.NewBash(bcfg)), Env: &tool.Env{Cwd: cwd, Files: tool.NewFileState()},
		Authorizer: sess, MaxTurns: 4,
	}
	var b strings.Builder
	var out denyOutcome
	for ev, err := range loop.Run(context.Background(), cfg, []llm.Message{llm.UserText("RUN:\n" + c.command)}) {
		if err != nil {
			t.Fatalf("%q: %v", c.command, err)
		}
		switch ev.Kind {
		case loop.ToolEnd:
			b.WriteString(ev.ToolResult.Output.Text + "\n")
			out.denied = out.denied || ev.ToolResult.Denied
			if !ev.ToolResult.Denied {
				out.ranText = ev.ToolResult.Output.Text
			}
		case loop.Done:
			b.WriteString(ev.Result.Text)
		}
	}
	out.text = b.String()
	out.asked = prompter.asked
	return out
}

// scriptRun makes the model run the command in the first user message
// once, then stop.
func scriptRun(r *llmtest.Request) llmtest.Turn {
	if len(r.LastToolResults()) > 0 {
		return llmtest.Text("done")
	}
	_, cmd, _ := strings.Cut(r.FirstUserText(), "RUN:\n")
	return llmtest.ToolUse("Bash", map[string]string{"command": cmd})
}

// Issue 9, done-when: a table of commands that read a denied file
// through Bash, in every mode, with and without the sandbox, run for real
// against a repository with a secret: the secret never comes back in a
// tool result (nor in the answer). The control run, with no rule, shows
// that each command does print the secret.
func TestBashCannotReadDeniedFile(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"git", "rg", "perl", "awk", "sed", "tar"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	commands := append([]string(nil), readSecretCommands...)
	for cmd, prog := range optionalCommands {
		if _, err := exec.LookPath(prog); err == nil {
			commands = append(commands, cmd)
		}
	}
	if len(readSecretCommands) < 60 {
		t.Fatalf("only %d commands in the table", len(readSecretCommands))
	}
	var sb *sandbox.Sandbox
	if _, err := exec.LookPath("bwrap"); err == nil {
		var err error
		if sb, err = sandbox.New(context.Background(), sandbox.Config{}); err != nil {
			t.Fatal(err)
		}
	} else {
		t.Log("bubblewrap is not installed: the sandboxed half is skipped")
	}
	srv := llmtest.NewServer(llmtest.WithMaxRequests(1 << 20))
	t.Cleanup(srv.Close)
	srv.ScriptFunc("", scriptRun)
	template := denyRepo(t)
	modes := []permission.Mode{permission.ModeDefault, permission.ModeAcceptEdits, permission.ModePlan,
		permission.ModeDontAsk, permission.ModeBypassPermissions, permission.ModeBubble}
	deny := []string{"Read(./secrets/**)"}

	variants := []*sandbox.Sandbox{nil}
	if sb != nil {
		variants = append(variants, sb)
	}
	var mu sync.Mutex
	ranSandboxed := map[string]bool{}
	t.Run("table", func(t *testing.T) {
		for _, cmd := range commands {
			t.Run(cmd, func(t *testing.T) {
				t.Parallel()
				control := runDenyCase(t, srv, template, denyCase{command: cmd, mode: permission.ModeBypassPermissions})
				if !strings.Contains(control.text, secretToken) {
					t.Fatalf("control: with no rule the command does not print the secret, so the row proves nothing:\n%s", control.text)
				}
				for _, sandboxed := range variants {
					for _, mode := range modes {
						out := runDenyCase(t, srv, template, denyCase{command: cmd, mode: mode, rules: deny, sandbox: sandboxed})
						if strings.Contains(out.text, secretToken) {
							t.Errorf("%s mode, sandbox %v: the secret leaked:\n%s", mode, sandboxed != nil, out.text)
						}
						if sandboxed == nil || mode != permission.ModeBypassPermissions {
							continue
						}
						// In the sandbox, bypassPermissions refuses only
						// what names the secret (the deny rule) or reads
						// git history (which no mask covers); everything
						// else runs, masked.
						switch {
						case !out.denied:
							mu.Lock()
							ranSandboxed[cmd] = true
							mu.Unlock()
						case !strings.Contains(out.text, "Rule Read(./secrets/**) from project settings forbids it") && !strings.Contains(out.text, "git history"):
							t.Errorf("refused in the sandbox for another reason:\n%s", out.text)
						}
					}
				}
			})
		}
	})
	if sb != nil {
		t.Logf("%d of %d commands ran in the sandbox in bypassPermissions mode without printing the secret", len(ranSandboxed), len(commands))
	}
}
