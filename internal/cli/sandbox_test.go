package cli

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/llm/llmtest"

	"github.com/cadre-dev/cadre/internal/sandbox/sandboxtest"
)

// The Bash sandbox through the cadre binary (issue 9, S-10.5): --sandbox
// and the settings' sandbox object confine every Bash command of the
// session, with real bubblewrap.

// needBwrap skips where bubblewrap cannot run (.ci/run installs it).
func needBwrap(t *testing.T) {
	t.Helper()
	if err := exec.Command("bwrap", "--ro-bind", "/", "/", "--unshare-pid", "--", "true").Run(); err != nil {
		t.Skipf("bubblewrap cannot run here: %v", err)
	}
}

// toolResults returns the texts of the tool results the model got last.
func toolResults(t *testing.T, s *llmtest.Server) []string {
	t.Helper()
	reqs := s.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d requests: the tool calls never ran", len(reqs))
	}
	var out []string
	for _, b := range reqs[len(reqs)-1].LastToolResults() {
		out = append(out, b.ResultText())
	}
	return out
}

// bashCalls scripts one turn of parallel Bash calls, then "done".
func bashCalls(s *llmtest.Server, commands ...string) {
	var calls []llmtest.Call
	for i, c := range commands {
		calls = append(calls, llmtest.Call{ID: fmt.Sprintf("toolu_%d", i), Name: "Bash", Input: map[string]string{"command": c}})
	}
	s.Script("", llmtest.ToolUses(calls...), llmtest.Text("done"))
}

// With --sandbox and a secret a Read deny rule protects, commands that
// name it, glob for it or search for it run (in default mode, headless)
// or are refused, and the secret never appears; the recursive searches
// really ran, in the sandbox, with the secret masked.
func TestSandboxFlagKeepsSecrets(t *testing.T) {
	t.Parallel()
	needBwrap(t)
	commands := []string{"cat secrets/key.txt", "cat secr*/key.txt", "cat s*/*", "grep -r TOP . ; echo grep-ran", "rg TOP ; echo rg-ran", "git grep TOP", "git show HEAD:secrets/key.txt",
		"find . -path ./.git -prune -o -print ; echo find-ran"}
	for _, mode := range []string{"default", "bypassPermissions"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			s, env := server(t)
			bashCalls(s, commands...)
			cmd, out, errb, _ := cadreCmd(t, env, "", "-p", "read the key", "--sandbox", "--permission-mode", mode,
				"--disallowedTools", "Read(./secrets/**)", "--output-format", "stream-json", "--verbose")
			writeFiles(t, cmd.Dir, map[string]string{"secrets/key.txt": "TOP-SECRET-31", "README.md": "hello"})
			for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "x"}} {
				g := exec.Command("git", args...)
				g.Dir = cmd.Dir
				if b, err := g.CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v %s", args, err, b)
				}
			}
			if err := cmd.Run(); err != nil {
				t.Fatalf("cadre: %v %s", err, errb)
			}
			if sb := initOf(t, out.String())["cadre"].(map[string]any)["sandbox"].(map[string]any); sb["enabled"] != true || sb["agents"] != "all" || sb["network"] != true {
				t.Errorf("init sandbox %v", sb)
			}
			results := toolResults(t, s)
			if len(results) != len(commands) {
				t.Fatalf("%d results for %d calls", len(results), len(commands))
			}
			for i, text := range results {
				if strings.Contains(text, "TOP-SECRET-31") {
					t.Errorf("%s: the secret leaked: %s", commands[i], text)
				}
			}
			if !strings.Contains(results[0], "Permission denied") || !strings.Contains(results[0], "Read(./secrets/**)") {
				t.Errorf("cat of the denied file: %s", results[0])
			}
			// A glob that expands to the secret is refused by the rule; the
			// recursive searches ran, confined, instead of being refused.
			for i, w := range map[int]string{3: "grep-ran", 4: "rg-ran", 7: "find-ran"} {
				if strings.Contains(results[i], "Permission denied: the Bash call") || !strings.Contains(results[i], w) {
					t.Errorf("%s did not run in the sandbox: %s", commands[i], results[i])
				}
			}
			// In the sandbox the masked file is absent: find lists the
			// directory that held it, and nothing in it.
			if !strings.Contains(results[7], "./secrets\n") || strings.Contains(results[7], "key.txt") {
				t.Errorf("find in the sandbox: want ./secrets listed empty, the key absent: %s", results[7])
			}
		})
	}
}

// outsideDir is a directory outside the project that the sandbox does not
// let commands write: not under /tmp, which each command sees private.
func outsideDir(t *testing.T) string {
	return sandboxtest.OutsideDir(t, ".sandbox-cli-")
}

// A write outside the working directory fails even in bypass mode, and
// the tool result says the sandbox refused it and where writes may go; a
// write inside works.
func TestSandboxWriteOutsideFails(t *testing.T) {
	t.Parallel()
	needBwrap(t)
	outside := outsideDir(t)
	s, env := server(t)
	bashCalls(s, "echo in > inside.txt && echo out > "+filepath.Join(outside, "x.txt"))
	cmd, _, errb, _ := cadreCmd(t, env, "", "-p", "write", "--sandbox", "--dangerously-skip-permissions")
	if err := cmd.Run(); err != nil {
		t.Fatalf("cadre: %v %s", err, errb)
	}
	res := toolResults(t, s)
	if len(res) != 1 || !strings.Contains(res[0], "Read-only file system") || !strings.Contains(res[0], "Sandbox: the write to "+filepath.Join(outside, "x.txt")+" was refused") ||
		!strings.Contains(res[0], cmd.Dir) {
		t.Errorf("result %q: want the refusal and the sandbox's note naming the path and the working directory", res)
	}
	if _, err := os.Stat(filepath.Join(outside, "x.txt")); err == nil {
		t.Error("a file appeared outside the working directory")
	}
	if b, err := os.ReadFile(filepath.Join(cmd.Dir, "inside.txt")); err != nil || string(b) != "in\n" {
		t.Errorf("write inside: %q %v", b, err)
	}
}

// curl to a server on this machine fails with the network off (and the
// result says why), and works with it on.
func TestSandboxNetwork(t *testing.T) {
	t.Parallel()
	needBwrap(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatalf("the network test runs curl, which is not on PATH (.ci/run installs it): %v", err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "hello-from-host") }))
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		name     string
		settings string
		on       bool
	}{
		{name: "off", settings: `{"sandbox": {"network": {"enabled": false}}}`},
		{name: "on", settings: `{"sandbox": {"network": {"enabled": true}}}`, on: true},
		{name: "on by default", settings: `{}`, on: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, env := server(t)
			bashCalls(s, "curl -sS --max-time 20 "+srv.URL)
			p := runCadre(t, env, "", "-p", "fetch", "--sandbox", "--dangerously-skip-permissions", "--settings", tc.settings, "--output-format", "stream-json", "--verbose")
			if p.code != 0 {
				t.Fatalf("exit %d: %s", p.code, p.stderr)
			}
			if sb := initOf(t, p.stdout)["cadre"].(map[string]any)["sandbox"].(map[string]any); sb["enabled"] != true || sb["network"] != tc.on {
				t.Errorf("init sandbox %v, want network %v", sb, tc.on)
			}
			res := toolResults(t, s)
			switch {
			case len(res) != 1:
				t.Fatalf("results %q", res)
			case tc.on && !strings.Contains(res[0], "hello-from-host"):
				t.Errorf("network on: %q", res[0])
			case !tc.on && (strings.Contains(res[0], "hello-from-host") || !strings.Contains(res[0], "network access is off")):
				t.Errorf("network off: %q", res[0])
			}
		})
	}
}

// waitProcs waits (bounded; a safety net, not a timing assumption) until
// each marker names a live `sleep` and returns their pids.
func waitProcs(t *testing.T, markers []string, exited <-chan struct{}) []int {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var pids []int
		for _, m := range markers {
			pids = append(pids, liveWithArg("sleep", m)...)
		}
		if len(pids) >= len(markers) {
			return pids
		}
		select {
		case <-exited:
			t.Fatalf("cadre exited before the processes %v started", markers)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes %v never started (found %v)", markers, pids)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Issue 9: after kill -9 of cadre, a Bash call's processes kept running
// under PID 1. In the sandbox, a `setsid sleep &`, a `nohup sleep &` and
// the command itself are gone once cadre is killed mid-command.
func TestSandboxNothingOutlivesKill9(t *testing.T) {
	t.Parallel()
	needBwrap(t)
	s, env := server(t)
	marker := fmt.Sprintf("%d.%d", 5000+os.Getpid()%1000, time.Now().UnixNano()%100000)
	markers := []string{marker, marker + "1", marker + "2"}
	t.Cleanup(func() {
		for _, m := range markers {
			for _, pid := range liveWithArg("sleep", m) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	bashCalls(s, "setsid sleep "+marker+" >/dev/null 2>&1 & nohup sleep "+marker+"1 >/dev/null 2>&1 & sleep "+marker+"2")
	cmd, _, errb, _ := cadreCmd(t, env, "", "-p", "start the daemons", "--sandbox", "--dangerously-skip-permissions")
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
	deadline := time.Now().Add(30 * time.Second)
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

// fakeBin makes a PATH directory with the tools a run needs and, when
// bwrap is not "", a bwrap script; the real bwrap is left out.
func fakeBin(t *testing.T, bwrap string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"bash", "sh", "git", "cat", "echo"} {
		p, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		if err := os.Symlink(p, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if bwrap != "" {
		if err := os.WriteFile(filepath.Join(dir, "bwrap"), []byte(bwrap), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Without a usable bubblewrap, --sandbox warns once (stderr and init) and
// commands run unconfined; with sandbox.failIfUnavailable the run stops
// before any request, saying why.
func TestSandboxUnavailable(t *testing.T) {
	t.Parallel()
	broken := "#!/bin/sh\necho 'bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces.' >&2\nexit 1\n"
	for _, tc := range []struct {
		name, bwrap, why string
	}{
		{name: "missing", why: "bubblewrap (bwrap) is not installed"},
		{name: "unusable", bwrap: broken, why: "No permissions to create new namespace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := fakeBin(t, tc.bwrap)

			s, env := server(t)
			env["PATH"] = path // after the default PATH in the command's env: the last one wins
			bashCalls(s, "echo ran-unconfined")
			cmd, out, errb, _ := cadreCmd(t, env, "", "-p", "go", "--sandbox", "--dangerously-skip-permissions", "--output-format", "stream-json", "--verbose")
			if err := cmd.Run(); err != nil {
				t.Fatalf("cadre: %v %s", err, errb)
			}
			if n := strings.Count(errb.String(), "the Bash sandbox is not available"); n != 1 || !strings.Contains(errb.String(), tc.why) || !strings.Contains(errb.String(), "Bash commands run without it") {
				t.Errorf("stderr %q: want one warning saying why", errb)
			}
			sb := initOf(t, out.String())["cadre"].(map[string]any)["sandbox"].(map[string]any)
			if sb["enabled"] != false || !strings.Contains(fmt.Sprint(sb["unavailable"]), tc.why) {
				t.Errorf("init sandbox %v", sb)
			}
			if res := toolResults(t, s); len(res) != 1 || !strings.Contains(res[0], "ran-unconfined") {
				t.Errorf("results %q", res)
			}

			s2, env2 := server(t)
			env2["PATH"] = path
			cmd, _, errb, _ = cadreCmd(t, env2, "", "-p", "go", "--sandbox", "--settings", `{"sandbox": {"failIfUnavailable": true}}`)
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != ExitUsage || !strings.Contains(errb.String(), tc.why) {
				t.Errorf("required: %v, stderr %q", err, errb)
			}
			if n := len(s2.Requests()); n != 0 {
				t.Errorf("%d requests reached the model", n)
			}
		})
	}
}

// writeFiles writes files (path relative to dir → content).
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, body := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSandboxCannotPlantGitConfig is finding 2 of issue 23 through the
// binary: inside --sandbox a command tries to make cadre's own, unsandboxed
// git run its code later (an fsmonitor or alias in .git/config, a hook in
// .git/hooks, a .mcp.json server); every write is refused, the files are
// as they were, and a later unsandboxed run's git snapshot runs nothing.
func TestSandboxCannotPlantGitConfig(t *testing.T) {
	t.Parallel()
	needBwrap(t)
	mark := filepath.Join(t.TempDir(), "planted-ran")
	commands := []string{
		"git config core.fsmonitor 'touch " + mark + "'; echo config-tried",
		"printf '[core]\\n\\tfsmonitor = touch " + mark + "\\n' >> .git/config; echo append-tried",
		"mkdir -p .git/hooks && printf '#!/bin/sh\\ntouch " + mark + "\\n' > .git/hooks/post-checkout; chmod +x .git/hooks/post-checkout; echo hook-tried",
		"printf '{\"mcpServers\":{\"x\":{\"command\":\"touch\",\"args\":[\"" + mark + "\"]}}}' > .mcp.json; echo mcp-tried",
	}
	s, env := server(t)
	bashCalls(s, commands...)
	cmd, _, errb, _ := cadreCmd(t, env, "", "-p", "plant", "--sandbox", "--dangerously-skip-permissions")
	writeFiles(t, cmd.Dir, map[string]string{"README.md": "hello"})
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "x"}} {
		g := exec.Command("git", args...)
		g.Dir = cmd.Dir
		if b, err := g.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, b)
		}
	}
	before, err := os.ReadFile(filepath.Join(cmd.Dir, ".git", "config"))
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Run(); err != nil {
		t.Fatalf("cadre: %v %s", err, errb)
	}
	res := toolResults(t, s)
	if len(res) != len(commands) {
		t.Fatalf("%d results for %d calls: %q", len(res), len(commands), res)
	}
	for i, w := range []string{"config-tried", "append-tried", "hook-tried", "mcp-tried"} {
		if !strings.Contains(res[i], w) {
			t.Errorf("%s did not run in the sandbox: %s", commands[i], res[i])
		}
	}
	if after, _ := os.ReadFile(filepath.Join(cmd.Dir, ".git", "config")); string(after) != string(before) {
		t.Errorf(".git/config changed inside the sandbox:\n%s", after)
	}
	if _, err := os.Stat(filepath.Join(cmd.Dir, ".git", "hooks", "post-checkout")); err == nil {
		t.Error("a hook was planted in .git/hooks")
	}
	if b, err := os.ReadFile(filepath.Join(cmd.Dir, ".mcp.json")); err == nil && strings.Contains(string(b), mark) {
		t.Errorf(".mcp.json was written inside the sandbox: %s", b)
	}
	// A later run without the sandbox takes its git snapshot in the same
	// repository: nothing planted runs.
	s2, env2 := server(t)
	s2.Script("", llmtest.Text("done"))
	cmd2, _, errb2, _ := cadreCmd(t, env2, "", "-p", "status")
	cmd2.Dir = cmd.Dir
	if err := cmd2.Run(); err != nil {
		t.Fatalf("cadre (second run): %v %s", err, errb2)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("code planted inside the sandbox ran on the host")
	}
}
