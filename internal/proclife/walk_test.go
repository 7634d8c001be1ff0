package proclife

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"
)

// closingHelper plays cadre's orderly end as a subreaper: it adopts,
// starts the reaper, leaves a marked setsid daemon and one that dropped
// the mark (both re-parented to it), says "ready", closes the reaper and
// says "closed <subreaper>".
func closingHelper(marker string) int {
	if err := Adopt(); err != nil {
		fmt.Println(err)
		return 1
	}
	r, err := StartReaper()
	if err != nil {
		fmt.Println(err)
		return 1
	}
	script := "setsid sh -c 'sleep " + marker + "1 >/dev/null 2>&1 &'; " +
		"env -u " + MarkEnv + " setsid sh -c 'sleep " + marker + "2 >/dev/null 2>&1 &'"
	if err := exec.Command("bash", "-c", script).Run(); err != nil {
		fmt.Println(err)
		return 1
	}
	deadline := time.Now().Add(60 * time.Second) // a safety net, not a timing assertion
	for len(sleepsWith(marker+"1")) == 0 || len(sleepsWith(marker+"2")) == 0 {
		if time.Now().After(deadline) {
			fmt.Println("the sleeps never started")
			return 1
		}
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Println("ready")
	if err := r.Close(); err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Printf("closed %v\n", isSubreaper())
	return 0
}

// A subreaper's Close ends the marked processes below it itself (a walk
// of its own tree; the reaper then ends without scanning every process)
// and leaves the one that dropped the mark, as the reaper's scan did.
func TestCloseAsSubreaperEndsTheMarkedBelow(t *testing.T) {
	t.Parallel()
	marker := fmt.Sprintf("%d.%d", 6000+os.Getpid()%1000, time.Now().UnixNano()%100000)
	t.Cleanup(func() {
		for _, m := range []string{marker + "1", marker + "2"} {
			for _, pid := range sleepsWith(m) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "CADRE_PROCLIFE_CLOSING="+marker)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper: %v %s", err, out)
	}
	if got := string(out); got != "ready\nclosed true\n" {
		t.Fatalf("helper said %q", got)
	}
	if left := sleepsWith(marker + "1"); len(left) > 0 {
		t.Errorf("the marked daemon %v outlived Close", left)
	}
	if len(sleepsWith(marker+"2")) != 1 {
		t.Error("the daemon without the mark was ended; Close ends only what is marked")
	}
}

// The walk of the children lists finds what the scan of /proc finds.
func TestWalkFindsWhatTheScanFinds(t *testing.T) {
	t.Parallel()
	marker := fmt.Sprintf("%d.%d", 7000+os.Getpid()%1000, time.Now().UnixNano()%100000)
	cmd := exec.Command("sh", "-c", "sleep "+marker+" & sh -c 'sleep "+marker+" & sleep "+marker+" & wait' & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, pid := range sleepsWith(marker) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(60 * time.Second) // a safety net, not a timing assertion
	for len(sleepsWith(marker)) < 3 {
		if time.Now().After(deadline) {
			t.Fatal("the sleeps never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	root := cmd.Process.Pid
	walked, scanned := descendantsOf(root, nil), descendantsExcept(root, nil)
	slices.Sort(walked)
	slices.Sort(scanned)
	if len(walked) != 4 || !slices.Equal(walked, scanned) {
		t.Fatalf("walk %v, scan %v: want the same 4 processes (a shell and 3 sleeps)", walked, scanned)
	}
	sleeps := sleepsWith(marker)
	shell := walked[slices.IndexFunc(walked, func(p int) bool { return !slices.Contains(sleeps, p) })]
	if got := descendantsOf(root, []int{shell}); len(got) != 1 || !slices.Contains(sleeps, got[0]) {
		t.Fatalf("sparing the inner shell %d: %v, want the outer sleep alone", shell, got)
	}
	if got := descendantsOf(1<<30, nil); len(got) != 0 {
		t.Fatalf("below a pid that does not exist: %v", got)
	}
}
