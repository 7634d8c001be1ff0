package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/spf13/cobra"
)

// lifeMarkEnv marks, through cadre's environment, every process a test's
// cadre starts and everything those start.
const lifeMarkEnv = "CADRE_TEST_LIFE"

// liveMarked returns the live processes whose environment has
// lifeMarkEnv=mark, with their command lines.
func liveMarked(mark string) map[int]string {
	entries, _ := os.ReadDir("/proc")
	out := map[int]string{}
	want := []byte(lifeMarkEnv + "=" + mark)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(append([]byte{0}, env...), append(append([]byte{0}, want...), 0)) {
			continue
		}
		st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(st)
		if i := strings.LastIndexByte(s, ')'); i < 0 || len(s) < i+3 || s[i+2] == 'Z' {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out[pid] = strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return out
}

// Issue 23 (9): without the sandbox, kill -9 of cadre left running what
// its Bash calls, hooks and MCP servers had started — daemons that
// double-fork and setsid above all. Now a reaper ends the whole tree when
// cadre dies: no process cadre started, nor any they started, is alive
// afterwards (seen through /proc, by command line and by environment).
func TestNothingOutlivesKill9WithoutSandbox(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	mark := fmt.Sprintf("%d.%d", 6000+os.Getpid()%1000, time.Now().UnixNano()%100000)
	env[lifeMarkEnv] = mark
	sleeps := []string{mark + "1", mark + "2", mark + "3", mark + "4", mark + "5", mark + "6", mark + "7"}
	t.Cleanup(func() {
		for pid := range liveMarked(mark) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		for _, m := range sleeps {
			for _, pid := range liveWithArg("sleep", m) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	// A hook that leaves two daemons behind and returns at once.
	hook := fmt.Sprintf(`setsid sleep %s >/dev/null 2>&1 & nohup sleep %s >/dev/null 2>&1 & exit 0`, sleeps[0], sleeps[1])
	settings := `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": ` + strconv.Quote(hook) + `}]}]}}`
	// A Bash call: a background job, a double-forked setsid daemon, a
	// nohup'd one in a subshell, one that drops its environment, and the
	// command itself still running.
	bash := fmt.Sprintf(`sleep %s >/dev/null 2>&1 & setsid sh -c 'sleep %s >/dev/null 2>&1 &' >/dev/null 2>&1 & (setsid nohup sleep %s >/dev/null 2>&1 &) ; env -i setsid /bin/sh -c 'sleep %s >/dev/null 2>&1 &' >/dev/null 2>&1 & sleep %s`,
		sleeps[2], sleeps[3], sleeps[4], sleeps[6], sleeps[5])
	s.Script("",
		llmtest.ToolUse("mcp__everything__echo", map[string]any{"message": "up"}),
		llmtest.ToolUse("Bash", map[string]string{"command": bash}),
		llmtest.Text("done"))
	cmd, _, errb, _ := cadreCmd(t, env, "", "-p", "start them", "--dangerously-skip-permissions", "--trust-project", "--settings", settings)
	mcpJSON := `{"mcpServers": {"everything": {"command": "` + everythingBin(t) + `"}}}`
	if err := os.WriteFile(filepath.Join(cmd.Dir, ".mcp.json"), []byte(mcpJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		_ = cmd.Wait()
	}()
	waitProcs(t, sleeps, exited)                 // sandbox_test.go
	deadline := time.Now().Add(60 * time.Second) // safety nets, not timing assertions
	// The MCP server answered the first call, so it is running now.
	var server int
	for pid, line := range liveMarked(mark) {
		if strings.Contains(line, "server-everything") {
			server = pid
		}
	}
	if server == 0 {
		t.Fatalf("no MCP server among cadre's processes: %v", liveMarked(mark))
	}
	// The environment-less daemon is found through the reaper's list of
	// what is below cadre: wait until it has looked twice since.
	reaper := reaperOf(t, cmd.Process.Pid)
	first := looks(reaper)
	for looks(reaper) < first+2 {
		if looks(reaper) < 0 || time.Now().After(deadline) {
			t.Fatalf("the reaper %d is gone or never looked (%d looks)", reaper, looks(reaper))
		}
		select {
		case <-exited:
			t.Fatal("cadre exited before the kill")
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	deadline = time.Now().Add(60 * time.Second)
	for {
		left := liveMarked(mark)
		for _, m := range sleeps {
			for _, pid := range liveWithArg("sleep", m) {
				left[pid] = "sleep " + m
			}
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("outlived the kill -9 of cadre: %v\nstderr %s", left, errb)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := len(s.Requests()); n < 2 {
		t.Fatalf("%d requests: the MCP call did not run before the kill", n)
	}
}

// reaperOf returns the pid of cadre's reaper: the child of cadre whose
// command line is cadre-reaper.
func reaperOf(t *testing.T, cadre int) int {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		st, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		s := string(st)
		i := strings.LastIndexByte(s, ')')
		if string(cmdline) != "cadre-reaper\x00" || i < 0 {
			continue
		}
		if f := strings.Fields(s[i+1:]); len(f) > 1 && f[1] == strconv.Itoa(cadre) {
			return pid
		}
	}
	t.Fatalf("cadre %d has no reaper", cadre)
	return 0
}

// looks returns how often the reaper has listed what is below cadre (it
// names itself reaper:N); -1 once it is gone.
func looks(pid int) int {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
	if err != nil {
		return -1
	}
	n, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "reaper:")
	if !ok {
		return 0
	}
	v, _ := strconv.Atoi(n)
	return v
}

// The reaper starts in the root command's persistent pre-run, which cobra
// runs before a command's RunE only when no command nearer to it sets one
// of its own: so no subcommand may, or it would run without a reaper.
func TestReaperStartsBeforeEveryCommand(t *testing.T) {
	ctx, sigs := withSignals(t.Context())
	defer sigs.stop()
	var out bytes.Buffer
	root := newRootCmd(ctx, procIO{stdout: &out, stderr: &out, getenv: func(string) string { return "" }}, sigs)
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			n++
			if sub.PersistentPreRun != nil || sub.PersistentPreRunE != nil {
				t.Errorf("%s sets its own persistent pre-run: cadre's reaper would not start before it", sub.CommandPath())
			}
			walk(sub)
		}
	}
	walk(root)
	if n < 5 {
		t.Fatalf("walked %d subcommands; the command tree is not what this test expects", n)
	}
}
