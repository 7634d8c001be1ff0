package builtin

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/tool"
)

// fastCfg keeps kill grace periods short so tests stay quick.
var fastCfg = Config{KillGrace: 200 * time.Millisecond}

// groupMembers lists the live (not zombie) processes of process group
// pgid, from /proc.
func groupMembers(t *testing.T, pgid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatalf("read /proc: %v", err)
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // state ppid pgrp ...
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); g == pgid {
			out = append(out, pid)
		}
	}
	return out
}

// requireGroupGone waits (bounded) until no live process of the group is
// left, and fails naming the survivors otherwise.
func requireGroupGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		m := groupMembers(t, pgid)
		if len(m) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes of group %d survived: %v", pgid, m)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// firstInt parses the first line of s as a number (a printed $$).
func firstInt(t *testing.T, s string) int {
	t.Helper()
	line, _, _ := strings.Cut(s, "\n")
	n, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("no pid on the first line of %q", s)
	}
	return n
}

func TestBash(t *testing.T) {
	env := testEnv(t)
	tests := []struct {
		name     string
		in       map[string]any
		wantErr  bool
		want     string
		contains []string
	}{
		{name: "output", in: map[string]any{"command": "echo hi"}, want: "hi"},
		{name: "no output", in: map[string]any{"command": "true"}, want: "(no output)"},
		{name: "stderr merged", in: map[string]any{"command": "echo out; echo err >&2"}, want: "out\nerr"},
		{name: "exit code", in: map[string]any{"command": "echo bad; exit 3"}, wantErr: true, want: "bad\n\nExit code: 3"},
		{name: "exit code no output", in: map[string]any{"command": "false"}, wantErr: true, want: "Exit code: 1"},
		{name: "signal", in: map[string]any{"command": "kill -9 $$"}, wantErr: true, contains: []string{"killed by signal: killed"}},
		{name: "cwd", in: map[string]any{"command": "pwd"}, want: env.Cwd},
		{name: "stdin is empty", in: map[string]any{"command": "cat; echo done"}, want: "done"},
		{name: "own process group", in: map[string]any{"command": "[ $(ps -o pgid= $$) -eq $$ ] && echo leader"}, want: "leader"},
		{name: "description accepted", in: map[string]any{"command": "echo x", "description": "print x"}, want: "x"},
		{name: "timeout ok", in: map[string]any{"command": "echo x", "timeout": 5000}, want: "x"},
		{name: "timeout zero", in: map[string]any{"command": "echo x", "timeout": 0}, wantErr: true, contains: []string{"timeout must be between 1 and 600000"}},
		{name: "timeout negative", in: map[string]any{"command": "echo x", "timeout": -1}, wantErr: true, contains: []string{"timeout"}},
		{name: "timeout too big", in: map[string]any{"command": "echo x", "timeout": 600001}, wantErr: true, contains: []string{"600000"}},
		{name: "timeout not a number", in: map[string]any{"command": "echo x", "timeout": "10"}, wantErr: true},
		{name: "empty command", in: map[string]any{"command": "  "}, wantErr: true, contains: []string{"command is required"}},
		{name: "background without host", in: map[string]any{"command": "sleep 1", "run_in_background": true}, wantErr: true, contains: []string{"background shells are not available here"}},
		{name: "syntax error", in: map[string]any{"command": "if then"}, wantErr: true, contains: []string{"Exit code: 2"}},
	}
	b := NewBash(fastCfg)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out := call(t, b, env, tc.in)
			checkOutput(t, out, tc.wantErr, tc.contains...)
			if tc.want != "" && out.Text != tc.want {
				t.Errorf("output = %q, want %q", out.Text, tc.want)
			}
		})
	}
}

func TestBashMissingCwd(t *testing.T) {
	env := &tool.Env{Cwd: filepath.Join(t.TempDir(), "gone")}
	out := call(t, NewBash(fastCfg), env, map[string]any{"command": "echo x"})
	checkOutput(t, out, true, "does not exist")
}

// timedOutGroup runs command (which must start by writing its pid to the
// file named by $PIDFILE) with a short timeout, and returns the output and
// the process group. A machine too loaded to start the shell within the
// timeout gets a longer one, so the outcome never depends on speed.
func timedOutGroup(t *testing.T, command string) (tool.Output, int, int) {
	t.Helper()
	env := testEnv(t)
	for timeout := 300; ; timeout *= 2 {
		pidFile := filepath.Join(t.TempDir(), "pid")
		out := call(t, NewBash(fastCfg), env, map[string]any{
			"command": "PIDFILE=" + pidFile + "; " + command,
			"timeout": timeout,
		})
		b, err := os.ReadFile(pidFile)
		n, perr := strconv.Atoi(strings.TrimSpace(string(b)))
		if err == nil && perr == nil {
			return out, n, timeout
		}
		if timeout > 20000 {
			t.Fatalf("the command never started: %q", out.Text)
		}
	}
}

func TestBashTimeoutKillsProcessTree(t *testing.T) {
	out, pgid, timeout := timedOutGroup(t, "echo $$ > $PIDFILE; bash -c 'sleep 300 & sleep 300 & wait'")
	checkOutput(t, out, true, "timed out after "+(time.Duration(timeout)*time.Millisecond).String(), "every process it started were killed")
	requireGroupGone(t, pgid)
}

func TestBashTermIgnoredGetsKilled(t *testing.T) {
	out, pgid, _ := timedOutGroup(t, "echo $$ > $PIDFILE; trap '' TERM; bash -c 'trap \"\" TERM; sleep 300' & sleep 300; wait")
	checkOutput(t, out, true, "timed out")
	requireGroupGone(t, pgid)
}

// TestBashContextCancel cancels the call once the command has started
// (it writes its pid to a file first), so the outcome does not depend on
// how fast the machine starts a shell.
func TestBashContextCancel(t *testing.T) {
	env := testEnv(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan int, 1)
	go func() {
		for ctx.Err() == nil {
			if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
				if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
					started <- n
					cancel()
					return
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	out := callCtx(t, ctx, NewBash(fastCfg), env, map[string]any{"command": "echo $$ > " + pidFile + "; sleep 300 & sleep 300"})
	checkOutput(t, out, true, "interrupted")
	requireGroupGone(t, <-started)
}

func TestBashLeftoverHoldingOutputIsKilled(t *testing.T) {
	env := testEnv(t)
	out := call(t, NewBash(fastCfg), env, map[string]any{"command": "echo $$; sleep 300 &"})
	checkOutput(t, out, false, "left running in the background")
	requireGroupGone(t, firstInt(t, out.Text))
}

func TestBashOutputCap(t *testing.T) {
	env := testEnv(t)
	cfg := fastCfg
	cfg.BashOutputLimit = 1000
	out := call(t, NewBash(cfg), env, map[string]any{"command": "echo START; head -c 100000 /dev/zero | tr '\\0' a; echo; echo END"})
	checkOutput(t, out, false, "START", "END", "bytes of output cut from the middle")
	if len(out.Text) > 1200 {
		t.Fatalf("capped output is %d bytes", len(out.Text))
	}
}

func TestHeadTail(t *testing.T) {
	h := newHeadTail(10)
	for _, s := range []string{"01234", "56789", "abcdefghij", "XY"} {
		h.Write([]byte(s))
	}
	want := "01234\n\n... [12 bytes of output cut from the middle] ...\n\nhijXY"
	if got := h.String(); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	small := newHeadTail(10)
	small.Write([]byte("abc"))
	small.Write([]byte("defgh"))
	if got := small.String(); got != "abcdefgh" {
		t.Fatalf("got %q", got)
	}
}

// waitOutput calls BashOutput until the accumulated output contains want
// (bounded), returning the accumulated text and the last status line.
func waitOutput(t *testing.T, env *tool.Env, id, want string) (string, string) {
	t.Helper()
	bo := NewBashOutput(fastCfg)
	var acc strings.Builder
	deadline := time.Now().Add(10 * time.Second)
	for {
		out := call(t, bo, env, map[string]any{"bash_id": id})
		if out.IsError {
			t.Fatalf("BashOutput: %s", out.Text)
		}
		status, rest, _ := strings.Cut(out.Text, "\n")
		if rest != "(no new output)" {
			acc.WriteString(rest + "\n")
		}
		if strings.Contains(acc.String()+status, want) {
			return acc.String(), status
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q in background output %q (status %s)", want, acc.String(), status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func newShellEnv(t *testing.T) (*tool.Env, *Shells) {
	env := testEnv(t)
	sh := NewShells()
	env.Shells = sh
	t.Cleanup(func() { sh.Close() })
	return env, sh
}

func TestBackgroundShell(t *testing.T) {
	env, shells := newShellEnv(t)
	stop := filepath.Join(env.Cwd, "STOP")
	out := call(t, NewBash(fastCfg), env, map[string]any{
		"command":           "echo one; while [ ! -f STOP ]; do sleep 0.02; done; echo two; exit 4",
		"run_in_background": true,
		"description":       "wait for STOP",
	})
	checkOutput(t, out, false, "bash_1")
	got, status := waitOutput(t, env, "bash_1", "one")
	if status != "Shell bash_1: running" || got != "one\n" {
		t.Fatalf("status %q, output %q", status, got)
	}
	list := shells.List()
	if len(list) != 1 || list[0].ID != "bash_1" || list[0].Status != ShellRunning || list[0].Description != "wait for STOP" {
		t.Fatalf("List = %+v", list)
	}
	if err := os.WriteFile(stop, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got, status = waitOutput(t, env, "bash_1", "exited")
	if status != "Shell bash_1: exited with code 4" || !strings.Contains(got, "two") || strings.Contains(got, "one") {
		t.Fatalf("status %q, new output %q", status, got)
	}
	out = call(t, NewBashOutput(fastCfg), env, map[string]any{"bash_id": "bash_1"})
	checkOutput(t, out, false, "(no new output)")
	if l := shells.List(); l[0].Status != ShellExited || l[0].ExitCode != 4 {
		t.Fatalf("List after exit = %+v", l)
	}
	out = call(t, NewKillShell(fastCfg), env, map[string]any{"shell_id": "bash_1"})
	checkOutput(t, out, true, "not running", "exited with code 4")
}

func TestBackgroundShellFilter(t *testing.T) {
	env, _ := newShellEnv(t)
	call(t, NewBash(fastCfg), env, map[string]any{"command": "printf 'a1\\nb2\\na3\\n'", "run_in_background": true})
	// Wait for the exit without consuming output: poll List.
	deadline := time.Now().Add(10 * time.Second)
	for env.Shells.(*Shells).List()[0].Status == ShellRunning {
		if time.Now().After(deadline) {
			t.Fatal("background shell did not finish")
		}
		time.Sleep(10 * time.Millisecond)
	}
	bo := NewBashOutput(fastCfg)
	out := call(t, bo, env, map[string]any{"bash_id": "bash_1", "filter": "^a"})
	if out.Text != "Shell bash_1: exited with code 0\na1\na3" {
		t.Fatalf("filtered output = %q", out.Text)
	}
	checkOutput(t, call(t, bo, env, map[string]any{"bash_id": "bash_1", "filter": "("}), true, "invalid filter")
	checkOutput(t, call(t, bo, env, map[string]any{"bash_id": "bash_9"}), true, "no background shell \"bash_9\"", "bash_1")
	checkOutput(t, call(t, bo, env, map[string]any{"bash_id": ""}), true, "bash_id is required")
}

func TestKillShell(t *testing.T) {
	env, shells := newShellEnv(t)
	call(t, NewBash(fastCfg), env, map[string]any{"command": "echo $$; sleep 300 & sleep 300", "run_in_background": true})
	got, _ := waitOutput(t, env, "bash_1", "\n")
	pgid := firstInt(t, got)
	ks := NewKillShell(fastCfg)
	out := call(t, ks, env, map[string]any{"shell_id": "bash_1"})
	checkOutput(t, out, false, "Killed shell bash_1")
	requireGroupGone(t, pgid)
	if l := shells.List(); l[0].Status != ShellKilled {
		t.Fatalf("status after kill = %v", l[0].Status)
	}
	out = call(t, NewBashOutput(fastCfg), env, map[string]any{"bash_id": "bash_1"})
	checkOutput(t, out, false, "Shell bash_1: killed")
	checkOutput(t, call(t, ks, env, map[string]any{"shell_id": "bash_1"}), true, "not running")
	checkOutput(t, call(t, ks, env, map[string]any{"shell_id": "nope"}), true, "known shells: bash_1")
	checkOutput(t, call(t, ks, env, map[string]any{"shell_id": ""}), true, "shell_id is required")
}

func TestShellsUnavailable(t *testing.T) {
	env := testEnv(t)
	checkOutput(t, call(t, NewBashOutput(fastCfg), env, map[string]any{"bash_id": "bash_1"}), true, "background shells are not available here")
	checkOutput(t, call(t, NewKillShell(fastCfg), env, map[string]any{"shell_id": "bash_1"}), true, "background shells are not available here")
	empty := NewShells()
	defer empty.Close()
	env.Shells = empty
	checkOutput(t, call(t, NewKillShell(fastCfg), env, map[string]any{"shell_id": "bash_1"}), true, "none have been started")
}

func TestShellsCloseKillsEverything(t *testing.T) {
	env := testEnv(t)
	shells := NewShells()
	env.Shells = shells
	b := NewBash(fastCfg)
	for range 3 {
		call(t, b, env, map[string]any{"command": "echo $$; trap '' TERM; sleep 300 & sleep 300", "run_in_background": true})
	}
	var pgids []int
	for _, id := range []string{"bash_1", "bash_2", "bash_3"} {
		got, _ := waitOutput(t, env, id, "\n")
		pgids = append(pgids, firstInt(t, got))
	}
	if err := shells.Close(); err != nil {
		t.Fatal(err)
	}
	for _, g := range pgids {
		requireGroupGone(t, g)
	}
	for _, info := range shells.List() {
		if info.Status != ShellKilled {
			t.Errorf("%s status %v after Close", info.ID, info.Status)
		}
	}
	out := call(t, b, env, map[string]any{"command": "echo late", "run_in_background": true})
	checkOutput(t, out, true, "closed")
	if err := shells.Close(); err != nil {
		t.Fatal(err)
	}
}
