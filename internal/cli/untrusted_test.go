package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// Issue 9, S-10.4: nothing a repository checks in runs a command unless
// the user trusts the workspace — not the hooks of its settings files, not
// the MCP servers of its .mcp.json or settings, not the hooks or inline
// servers of its agent definitions — even in bypassPermissions, which the
// user chose. Each would leave a marker file outside the project; the
// trusted run is the control that shows every one of them does run once
// the workspace is trusted.
func TestUntrustedWorkspaceRunsNoCommands(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	mark := func(name string) string { return "touch " + filepath.Join(out, name) }
	everything := everythingBin(t)
	mcpServer := func(name string) string {
		return fmt.Sprintf(`{"command": "sh", "args": ["-c", %q]}`, mark(name)+"; exec "+everything)
	}
	hook := func(name string) string {
		return fmt.Sprintf(`[{"hooks": [{"type": "command", "command": %q}]}]`, mark(name))
	}
	files := map[string]string{
		".cadre/settings.json": `{"hooks": {"SessionStart": ` + hook("settings-SessionStart") +
			`, "UserPromptSubmit": ` + hook("settings-UserPromptSubmit") +
			`, "PreToolUse": ` + hook("settings-PreToolUse") +
			`, "PostToolUse": ` + hook("settings-PostToolUse") +
			`, "Stop": ` + hook("settings-Stop") + `},
			"mcpServers": {"fromsettings": ` + mcpServer("settings-mcp") + `}}`,
		".cadre/settings.local.json": `{"hooks": {"SessionStart": ` + hook("local-SessionStart") + `}}`,
		".mcp.json":                  `{"mcpServers": {"fromrepo": ` + mcpServer("mcp-json") + `}}`,
		".cadre/agents/helper.md": "---\nname: helper\ndescription: Helps.\nhooks:\n  PreToolUse:\n    - hooks:\n        - type: command\n          command: " +
			mark("agent-PreToolUse") + "\nmcpServers:\n  - inline:\n      command: sh\n      args: [\"-c\", \"" + mark("agent-mcp") + "; exec " + everything + "\"]\n---\nYou help.\n",
	}
	want := []string{"agent-PreToolUse", "agent-mcp", "local-SessionStart", "mcp-json", "settings-PostToolUse", "settings-PreToolUse",
		"settings-SessionStart", "settings-Stop", "settings-UserPromptSubmit", "settings-mcp"}
	home, dir := t.TempDir(), t.TempDir()
	writeFiles(t, dir, files)
	run := func(args ...string) (proc, []string) {
		s, env := server(t)
		s.Script("MAIN", llmtest.ToolUses(
			llmtest.Call{ID: "toolu_1", Name: "Bash", Input: map[string]string{"command": "echo main-ran"}},
			llmtest.Call{ID: "toolu_2", Name: "Agent", Input: map[string]string{"description": "help", "prompt": "CHILD: run it", "subagent_type": "helper"}},
		), llmtest.Text("done"))
		s.Script("CHILD", llmtest.ToolUse("Bash", map[string]string{"command": "echo child-ran"}), llmtest.Text("child done"))
		p := cadreAt(t, home, dir, env, append([]string{"-p", "MAIN: go", "--dangerously-skip-permissions"}, args...)...)
		if p.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, p.code, p.stderr)
		}
		res := s.RequestsFor("MAIN")[1].LastToolResults()
		if len(res) != 2 || !strings.Contains(res[0].ResultText(), "main-ran") || !strings.Contains(res[1].ResultText(), "child done") {
			t.Fatalf("%v: the calls did not run: %+v", args, res)
		}
		entries, err := os.ReadDir(out)
		if err != nil {
			t.Fatal(err)
		}
		var made []string
		for _, e := range entries {
			made = append(made, e.Name())
			_ = os.Remove(filepath.Join(out, e.Name()))
		}
		slices.Sort(made)
		return p, made
	}

	p, made := run()
	if len(made) > 0 {
		t.Errorf("an untrusted workspace ran commands: %v", made)
	}
	for _, w := range []string{"hooks", "mcpServers.fromrepo", "mcpServers.fromsettings", "hooks of agent helper", "cadre trust"} {
		if !strings.Contains(p.stderr, w) {
			t.Errorf("stderr does not report %q as ignored: %s", w, p.stderr)
		}
	}

	if _, made = run("--trust-project"); !slices.Equal(made, want) {
		t.Errorf("trusted: commands that ran %v, want %v (the control shows each would run)", made, want)
	}
}

// Issue 9: after kill -9 of cadre, a Bash call's `sleep 300` kept running
// under PID 1. Without the sandbox, the command gets a parent-death
// signal: killed mid-call with cadre, it is gone. (What a command starts
// in turn, only the sandbox's PID namespace can promise after kill -9:
// TestSandboxNothingOutlivesKill9.)
func TestBashCommandDiesWithKilledCadre(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	marker := fmt.Sprintf("%d.%d", 6000+os.Getpid()%1000, time.Now().UnixNano()%100000)
	t.Cleanup(func() {
		for _, pid := range liveWithArg("sleep", marker) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	bashCalls(s, "sleep "+marker)
	cmd, _, errb, _ := cadreCmd(t, env, "", "-p", "wait", "--dangerously-skip-permissions")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		_ = cmd.Wait()
	}()
	pids := waitProcs(t, []string{marker}, exited)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	deadline := time.Now().Add(30 * time.Second) // a safety net, not a timing assumption
	for len(liveWithArg("sleep", marker)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("sleep %v outlived the kill -9 of cadre; stderr %s", pids, errb)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Issue 9: Explore, Plan and verification ran `touch` through Bash in
// bypassPermissions. Through the CLI, with --dangerously-skip-permissions,
// each still runs only read-only commands; general-purpose is the control.
func TestReadOnlyAgentsThroughCLI(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		agent    string
		readOnly bool
	}{{"Explore", true}, {"Plan", true}, {"verification", true}, {"general-purpose", false}} {
		t.Run(tc.agent, func(t *testing.T) {
			t.Parallel()
			s, env := server(t)
			env["CADRE_DISABLE_BACKGROUND_TASKS"] = "1" // verification is a background agent by definition
			s.Script("MAIN", llmtest.ToolUse("Agent", map[string]any{"description": "look", "prompt": "CHILD: look", "subagent_type": tc.agent}), llmtest.Text("done"))
			s.Script("CHILD", llmtest.ToolUses(
				llmtest.Call{ID: "toolu_1", Name: "Bash", Input: map[string]string{"command": "touch made"}},
				llmtest.Call{ID: "toolu_2", Name: "Bash", Input: map[string]string{"command": "cat f.txt"}},
			), llmtest.Text("child done"))
			p, dir := runCadreIn(t, env, map[string]string{"f.txt": "FILE-CONTENT"}, "-p", "MAIN: look", "--dangerously-skip-permissions")
			if p.code != 0 {
				t.Fatalf("exit %d: %s", p.code, p.stderr)
			}
			reqs := s.RequestsFor("CHILD")
			if len(reqs) < 2 {
				t.Fatalf("%d child requests; stderr %s", len(reqs), p.stderr)
			}
			res := reqs[1].LastToolResults()
			_, err := os.Stat(filepath.Join(dir, "made"))
			if tc.readOnly && (err == nil || !strings.Contains(res[0].ResultText(), "read-only")) {
				t.Errorf("%s ran touch (file made: %v): %s", tc.agent, err == nil, res[0].ResultText())
			}
			if !tc.readOnly && err != nil {
				t.Errorf("general-purpose could not write: %s", res[0].ResultText())
			}
			if !strings.Contains(res[1].ResultText(), "FILE-CONTENT") {
				t.Errorf("a read-only command did not run: %s", res[1].ResultText())
			}
		})
	}
}

// Issue 9, Build 7: at every exit cadre controls — here SIGTERM and
// SIGINT in the middle of a Bash call — it ends every process it started,
// the daemonised ones (`setsid`, `nohup`, a subshell's `&`) included,
// without the sandbox.
func TestDaemonsEndWhenCadreIsSignalled(t *testing.T) {
	t.Parallel()
	for i, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			s, env := server(t)
			marker := fmt.Sprintf("%d.%d%d", 8000+os.Getpid()%1000, time.Now().UnixNano()%100000, i)
			markers := []string{marker, marker + "1", marker + "2", marker + "3"}
			t.Cleanup(func() {
				for _, m := range markers {
					for _, pid := range liveWithArg("sleep", m) {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			})
			bashCalls(s, "setsid sleep "+marker+" >/dev/null 2>&1 & nohup sleep "+marker+"1 >/dev/null 2>&1 & (sleep "+marker+"2 >/dev/null 2>&1 &) ; sleep "+marker+"3")
			cmd, _, errb, _ := cadreCmd(t, env, "", "-p", "start the daemons", "--dangerously-skip-permissions")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan struct{})
			go func() {
				defer close(exited)
				_ = cmd.Wait()
			}()
			waitProcs(t, markers, exited)
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			<-exited
			// cadre has returned: what it started must be gone already.
			for _, m := range markers {
				if pids := liveWithArg("sleep", m); len(pids) > 0 {
					t.Errorf("sleep %s (pids %v) outlived cadre's exit on %v; stderr %s", m, pids, sig, errb)
				}
			}
		})
	}
}

// Issue 9, Build 7: the other processes cadre starts — a hook command and
// a stdio MCP server — get a parent-death signal too: after kill -9 of
// cadre, in the middle of both, neither is left. (As for Bash without the
// sandbox, what such a process forks in turn is ended at cadre's own
// exits, not after kill -9: /bin/sh forks a hook's command, hence exec.)
func TestHooksAndServersDieWithKilledCadre(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	marker := fmt.Sprintf("%d.%d", 9000+os.Getpid()%1000, time.Now().UnixNano()%100000)
	markers := []string{marker + "1", marker + "2"}
	t.Cleanup(func() {
		for _, m := range markers {
			for _, pid := range liveWithArg("sleep", m) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	bashCalls(s, "echo hi")
	settings := `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "exec sleep ` + markers[0] + `"}]}]}}`
	servers := `{"mcpServers": {"stuck": {"command": "sleep", "args": ["` + markers[1] + `"]}}}`
	cmd, _, errb, _ := cadreCmd(t, env, "", "-p", "go", "--dangerously-skip-permissions", "--settings", settings, "--mcp-config", servers)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		_ = cmd.Wait()
	}()
	pids := waitProcs(t, markers, exited)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	deadline := time.Now().Add(30 * time.Second) // a safety net, not a timing assumption
	for {
		var left []int
		for _, m := range markers {
			left = append(left, liveWithArg("sleep", m)...)
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes %v (of %v) outlived the kill -9 of cadre; stderr %s", left, pids, errb)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
