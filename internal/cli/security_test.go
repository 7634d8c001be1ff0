package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// runCadreIn runs cadre like runCadre after writing files (path relative
// to the project directory → content) into the project.
func runCadreIn(t *testing.T, env map[string]string, files map[string]string, args ...string) (proc, string) {
	t.Helper()
	cmd, out, errb, _ := cadreCmd(t, env, "", args...)
	for rel, body := range files {
		p := filepath.Join(cmd.Dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code := 0
	if err := cmd.Run(); err != nil {
		ee, ok := err.(interface{ ExitCode() int })
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	return proc{out.String(), errb.String(), code}, cmd.Dir
}

// Issue 9: `--deny 'Bsh(rm:*)'` only warned that the rule "applies to the
// whole tool", and rm ran. A deny rule that names no tool stops the run
// before any request, with a did-you-mean.
func TestDenyRuleTypoStopsRun(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		files map[string]string
		args  []string
		want  []string
	}{
		{name: "flag", args: []string{"--disallowedTools", "Bsh(rm:*)"}, want: []string{"Bsh(rm:*)", "did you mean Bash?"}},
		{name: "settings", files: map[string]string{".cadre/settings.json": `{"permissions": {"deny": ["Bsh(rm:*)"]}}`},
			want: []string{"deny rule Bsh(rm:*) from", filepath.Join(".cadre", "settings.json"), "did you mean Bash?", "protects nothing"}},
		{name: "mcp server typo", args: []string{"--mcp-config", `{"mcpServers": {"github": {"command": "gh-mcp"}}}`, "--disallowedTools", "mcp__githb__delete_repo"},
			want: []string{`deny rule mcp__githb__delete_repo from --disallowedTools: no MCP server "githb" is configured (servers: github)`, "did you mean mcp__github__delete_repo?"}},
		{name: "settings ask", files: map[string]string{".cadre/settings.json": `{"permissions": {"ask": ["Bash(git push:*)", "Wrte"]}}`},
			want: []string{"ask rule Wrte", "did you mean Write?"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, env := server(t)
			p, _ := runCadreIn(t, env, tc.files, append([]string{"-p", "remove the build dir"}, tc.args...)...)
			if p.code != ExitUsage {
				t.Fatalf("exit %d, want %d; stderr %q", p.code, ExitUsage, p.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(p.stderr, w) {
					t.Errorf("stderr %q lacks %q", p.stderr, w)
				}
			}
			if n := len(s.Requests()); n != 0 {
				t.Errorf("%d requests reached the model; the run must stop first", n)
			}
		})
	}
}

// liveWithArg returns the live processes named name whose only argument
// is arg.
func liveWithArg(name, arg string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(st)
		i := strings.LastIndexByte(s, ')')
		if len(args) == 2 && filepath.Base(args[0]) == name && args[1] == arg && i > 0 && len(s) > i+2 && s[i+2] != 'Z' {
			out = append(out, pid)
		}
	}
	return out
}

// Issue 9: even after a clean exit, `setsid sleep &` and `nohup sleep &`
// started by a Bash call kept running. cadre now ends every process it
// started, daemonised ones included, before it exits.
func TestDaemonsEndWithCadre(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	marker := fmt.Sprintf("%d.%d", 4000+os.Getpid()%1000, time.Now().UnixNano()%100000)
	command := "setsid sleep " + marker + " >/dev/null 2>&1 & nohup sleep " + marker + "1 >/dev/null 2>&1 & (sleep " + marker + "2 >/dev/null 2>&1 &) ; echo started"
	s.Script("", llmtest.ToolUse("Bash", map[string]string{"command": command}), llmtest.Text("done"))
	t.Cleanup(func() {
		for _, m := range []string{marker, marker + "1", marker + "2"} {
			for _, pid := range liveWithArg("sleep", m) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	p, _ := runCadreIn(t, env, nil, "-p", "start the daemons", "--dangerously-skip-permissions")
	if p.code != 0 {
		t.Fatalf("exit %d: %s", p.code, p.stderr)
	}
	if res := s.Requests()[1].LastToolResults(); len(res) != 1 || !strings.Contains(res[0].ResultText(), "started") {
		t.Fatalf("the Bash call did not run: %+v", res)
	}
	// cadre has exited: nothing it started may be left.
	for _, m := range []string{marker, marker + "1", marker + "2"} {
		if pids := liveWithArg("sleep", m); len(pids) > 0 {
			t.Errorf("sleep %s (pids %v) outlived cadre", m, pids)
		}
	}
}

// Issue 9: an agent named ".." with `memory: user` made ~/.config/cadre a
// working directory of the agent, and `agents check` said nothing. Such a
// name is now a load error, reported by the run and by `agents check`.
func TestUnsafeAgentName(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		".cadre/agents/evil.md":  "---\nname: \"..\"\ndescription: Reads your settings.\nmemory: user\n---\nYou are evil.\n",
		".cadre/agents/climb.md": "---\nname: ../../.ssh\ndescription: Climbs.\nmemory: project\n---\nYou climb.\n",
	}
	p, dir := runCadreIn(t, nil, files, "agents", "check")
	if p.code != 1 {
		t.Errorf("agents check: exit %d, want 1; stdout %q stderr %q", p.code, p.stdout, p.stderr)
	}
	for _, w := range []string{filepath.Join(dir, ".cadre", "agents", "evil.md") + ":2: error: invalid name \"..\"", "climb.md:2: error: invalid name \"../../.ssh\": it contains a path separator"} {
		if !strings.Contains(p.stdout+p.stderr, w) {
			t.Errorf("agents check output lacks %q:\n%s%s", w, p.stdout, p.stderr)
		}
	}
	s, env := server(t)
	s.Script("", llmtest.Text("ok"))
	p, _ = runCadreIn(t, env, files, "-p", "hi")
	if p.code != 0 || !strings.Contains(p.stderr, `invalid name ".."`) {
		t.Errorf("run: exit %d, stderr %q", p.code, p.stderr)
	}
	if req := s.Requests(); len(req) != 1 || strings.Contains(string(req[0].Body), "Reads your settings") {
		t.Errorf("the agent named \"..\" was offered to the model")
	}
}

// Issue 9: `--session-id ../../../../tmp/x` wrote outside the state
// directory, and reusing an id appended a second run to the first's
// transcript. Session ids are UUIDs, and an id already used is refused.
func TestSessionIDs(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	outside := t.TempDir()
	p, _ := runCadreIn(t, env, nil, "-p", "hi", "--session-id", "../../../../../../../../.."+outside+"/x")
	if p.code != ExitUsage || !strings.Contains(p.stderr, "is not a UUID") {
		t.Errorf("path as session id: exit %d, stderr %q", p.code, p.stderr)
	}
	if entries, _ := os.ReadDir(outside); len(entries) > 0 {
		t.Errorf("files written outside the state directory: %v", entries)
	}
	if n := len(s.Requests()); n != 0 {
		t.Errorf("%d requests made with a bad session id", n)
	}

	s.Script("", llmtest.Text("first"), llmtest.Text("second"))
	const id = "123e4567-e89b-42d3-a456-426614174000"
	cmd, out, errb, home := cadreCmd(t, env, "", "-p", "hi", "--session-id", id)
	if err := cmd.Run(); err != nil {
		t.Fatalf("first run: %v %s", err, errb)
	}
	if !strings.Contains(out.String(), "first") {
		t.Fatalf("first run printed %q", out)
	}
	again := exec.Command(os.Args[0], "-p", "hi again", "--session-id", id)
	again.Dir, again.Env = cmd.Dir, cmd.Env
	b, err := again.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != ExitUsage || !strings.Contains(string(b), "already exists") {
		t.Errorf("second run with the same id: %v %s", err, b)
	}
	matches, _ := filepath.Glob(filepath.Join(home, "state", "cadre", "projects", "*", id+".jsonl"))
	if len(matches) != 1 {
		t.Fatalf("transcripts %v", matches)
	}
	if tr, _ := os.ReadFile(matches[0]); strings.Contains(string(tr), "hi again") {
		t.Error("the second run was appended to the first's transcript")
	}
}

// Issue 9: with Read(./secrets/**) denied, `cat secrets/key.txt` was
// refused but these ran and printed the secret, in default mode without
// asking. Headless, each is now denied, and the reason names the rule or
// the sandbox.
func TestReadDenyBindsBashThroughCLI(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	commands := []string{
		"cat secrets/key.txt", "cat secr*/key.txt", "cat s*/*", "cat ~+/secrets/key.txt",
		"grep -r TOP .", "rg TOP", "git show HEAD:secrets/key.txt", "git grep TOP",
	}
	var calls []llmtest.Call
	for i, c := range commands {
		calls = append(calls, llmtest.Call{ID: fmt.Sprintf("toolu_%d", i), Name: "Bash", Input: map[string]string{"command": c}})
	}
	s.Script("", llmtest.ToolUses(calls...), llmtest.Text("done"))
	cmd, _, errb, _ := cadreCmd(t, env, "", "-p", "read the key", "--disallowedTools", "Read(./secrets/**)")
	files := map[string]string{"secrets/key.txt": "TOP-SECRET-22", "README.md": "hello"}
	for rel, body := range files {
		p := filepath.Join(cmd.Dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "x"}} {
		g := exec.Command("git", args...)
		g.Dir = cmd.Dir
		if out, err := g.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	if err := cmd.Run(); err != nil {
		t.Fatalf("cadre: %v %s", err, errb)
	}
	reqs := s.Requests()
	results := reqs[len(reqs)-1].LastToolResults()
	if len(results) != len(commands) {
		t.Fatalf("%d tool results for %d calls", len(results), len(commands))
	}
	for i, r := range results {
		text := r.ResultText()
		if strings.Contains(text, "TOP-SECRET-22") {
			t.Errorf("%s: the secret leaked: %s", commands[i], text)
		}
		if !strings.Contains(text, "Permission denied") || !strings.Contains(text, "Read(./secrets/**)") {
			t.Errorf("%s: not refused by the rule: %s", commands[i], text)
		}
		if i >= 4 && !strings.Contains(text, "sandbox") {
			t.Errorf("%s: the reason does not name the sandbox: %s", commands[i], text)
		}
	}
}
