package proclife

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// killedHelper plays a cadre that dies by SIGKILL: it starts the reaper
// (no Adopt: the orphans go to init, as they do once cadre is dead),
// leaves a double-forked setsid daemon and a plain background job, says
// "ready" with the reaper's pid, and waits to be killed.
func killedHelper(marker string) int {
	r, err := StartReaper()
	if err != nil {
		fmt.Println(err)
		return 1
	}
	cmd := exec.Command("bash", "-c", "setsid sh -c 'sleep "+marker+"1 >/dev/null 2>&1 &' >/dev/null 2>&1; sleep "+marker+"2 >/dev/null 2>&1 & wait $! ")
	if err := cmd.Start(); err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Printf("ready %d\n", r.Pid())
	select {}
}

// sleepsWith returns the live `sleep arg` processes.
func sleepsWith(arg string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || string(b) != "sleep\x00"+arg+"\x00" {
			continue
		}
		var pid int
		fmt.Sscan(e.Name(), &pid)
		if _, state, ok := stat(pid); ok && state != "Z" {
			out = append(out, pid)
		}
	}
	return out
}

// Issue 23 (9): the reaper ends, after its cadre is killed with SIGKILL,
// what cadre started and what escaped below it: a setsid daemon that
// double-forked and a background job, both re-parented to init.
func TestReaperEndsTheTreeAfterKill9(t *testing.T) {
	t.Parallel()
	marker := fmt.Sprintf("%d.%d", 7000+os.Getpid()%1000, time.Now().UnixNano()%100000)
	markers := []string{marker + "1", marker + "2"}
	t.Cleanup(func() {
		for _, m := range markers {
			for _, pid := range sleepsWith(m) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "CADRE_PROCLIFE_KILLED="+marker)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	var reaper int
	if _, serr := fmt.Sscanf(line, "ready %d\n", &reaper); err != nil || serr != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("helper said %q (%v)", line, err)
	}
	deadline := time.Now().Add(60 * time.Second) // a safety net, not a timing assertion
	for len(sleepsWith(markers[0])) == 0 || len(sleepsWith(markers[1])) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the helper's sleeps never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	for {
		var left []int
		for _, m := range markers {
			left = append(left, sleepsWith(m)...)
		}
		if _, state, ok := stat(reaper); ok && state != "Z" {
			left = append(left, reaper) // the reaper ends itself too
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes %v outlived the killed helper", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A token is recognised among the comma-separated marks of a nested run
// and only as a whole.
func TestCarriesToken(t *testing.T) {
	t.Parallel()
	cases := []struct {
		marks string
		token string
		want  bool
	}{
		{"abc", "abc", true},
		{"outer,abc", "abc", true},
		{"abc,inner", "abc", true},
		{"abcd", "abc", false},
		{"xabc,abcx", "abc", false},
		{"", "abc", false},
	}
	for _, tc := range cases {
		cmd := exec.Command("sleep", "30")
		cmd.Env = []string{"A=1", MarkEnv + "=" + tc.marks}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Start returns once exec has begun; the new environment is in
		// place a moment later.
		environ := fmt.Sprintf("/proc/%d/environ", cmd.Process.Pid)
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if b, _ := os.ReadFile(environ); len(b) > 0 {
				break
			}
		}
		got := carries(cmd.Process.Pid, tc.token)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if got != tc.want {
			t.Errorf("marks %q token %q: carries = %v, want %v", tc.marks, tc.token, got, tc.want)
		}
	}
}

// StartReaper marks the environment of what is started after it; Close
// ends what is still marked, waits for the reaper and unmarks.
func TestReaperCloseEndsMarkedAndUnmarks(t *testing.T) {
	// Not parallel: it changes the process environment.
	r, err := StartReaper()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(strings.Split(os.Getenv(MarkEnv), ","), r.Token()) {
		t.Fatalf("%s=%q lacks the token %q", MarkEnv, os.Getenv(MarkEnv), r.Token())
	}
	cmd := exec.Command("sleep", "1000")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil {
		t.Fatal("the marked sleep exited by itself; the reaper should have ended it")
	}
	if v, ok := os.LookupEnv(MarkEnv); ok {
		t.Fatalf("%s=%q still set after Close", MarkEnv, v)
	}
}

// The reaper's variable set by hand, without the life pipe, is a clear
// error, not a process that ends others.
func TestReaperWithoutPipeRefuses(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), reaperEnv+"=deadbeef@2")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "file descriptor 3 is not the pipe") {
		t.Fatalf("err %v output %q", err, out)
	}
}

// A process that dropped the mark (env -i) is found through the reaper's
// list of what was below cadre, once its parents are gone, and only while
// its pid still names the process listed (same start time).
func TestTrackedWithoutTheMark(t *testing.T) {
	t.Parallel()
	marker := fmt.Sprintf("%d.%d", 8000+os.Getpid()%1000, time.Now().UnixNano()%100000)
	t.Cleanup(func() {
		for _, pid := range sleepsWith(marker) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	cmd := exec.Command("bash", "-c", "env -i /bin/sh -c 'sleep "+marker+" & wait' & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second) // a safety net, not a timing assertion
	var sleep int
	for sleep == 0 {
		if pids := sleepsWith(marker); len(pids) == 1 {
			sleep = pids[0]
		} else if time.Now().After(deadline) {
			t.Fatal("the sleep never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	tracked := below(os.Getpid(), 0)
	start, ok := tracked[sleep]
	if !ok || start == 0 {
		t.Fatalf("below(self) = %v lacks the sleep %d", tracked, sleep)
	}
	if carries(sleep, "any") {
		t.Fatal("the sleep carries a mark; env -i should have dropped it")
	}
	// Its parents die: the sleep goes to init (or the nearest subreaper),
	// out of this process's tree.
	sh, _ := readStat(sleep)
	_ = syscall.Kill(sh.ppid, syscall.SIGKILL)
	_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Wait()
	for {
		if st, ok := readStat(sleep); !ok || st.state == "Z" {
			t.Fatal("the sleep died with its parents")
		} else if st.ppid != sh.ppid && st.ppid != cmd.Process.Pid {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the sleep was never re-parented")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := marked("no-such-token", os.Getpid(), 0, map[int]uint64{sleep: start + 1}); slices.Contains(got, sleep) {
		t.Fatalf("a listed pid with another start time was taken for the sleep: %v", got)
	}
	// Only the sleep from here on: the rest below this test process belongs
	// to the tests running beside it.
	tracked = map[int]uint64{sleep: start}
	if got := marked("no-such-token", os.Getpid(), 0, tracked); !slices.Equal(got, []int{sleep}) {
		t.Fatalf("marked with the list = %v, want the sleep %d", got, sleep)
	}
	if n := endAll(func() []int { return marked("no-such-token", os.Getpid(), 0, tracked) }, time.Second); n != 1 {
		t.Fatalf("endAll signalled %d processes", n)
	}
	for len(sleepsWith(marker)) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the sleep outlived endAll")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A process started before since is not read for the token: only what
// was born after the reaper can carry it. One born at since is.
func TestMarkedChecksOnlyProcessesBornSince(t *testing.T) {
	t.Parallel()
	token := fmt.Sprintf("since-%d", os.Getpid())
	cmd := exec.Command("sleep", "30")
	cmd.Env = []string{MarkEnv + "=" + token}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	environ := fmt.Sprintf("/proc/%d/environ", cmd.Process.Pid)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if b, _ := os.ReadFile(environ); len(b) > 0 {
			break
		}
	}
	st, ok := readStat(cmd.Process.Pid)
	if !ok {
		t.Fatal("no stat for the sleep")
	}
	if got := marked(token, os.Getpid(), st.start, nil); !slices.Equal(got, []int{cmd.Process.Pid}) {
		t.Errorf("since its start: marked = %v, want [%d]", got, cmd.Process.Pid)
	}
	if got := marked(token, os.Getpid(), st.start+1, nil); len(got) != 0 {
		t.Errorf("since after its start: marked = %v, want none", got)
	}
}
