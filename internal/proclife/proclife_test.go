package proclife

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// With CADRE_PROCLIFE_HELPER=marker the test binary plays cadre: it
// adopts, lets a shell daemonise `sleep marker`, reports who the orphan's
// parent is, and ends its descendants.
func TestMain(m *testing.M) {
	if marker := os.Getenv("CADRE_PROCLIFE_HELPER"); marker != "" {
		os.Exit(helper(marker))
	}
	if marker := os.Getenv("CADRE_PROCLIFE_KILLED"); marker != "" {
		os.Exit(killedHelper(marker))
	}
	os.Exit(m.Run())
}

func helper(marker string) int {
	if err := Adopt(); err != nil {
		fmt.Println(err)
		return 1
	}
	out, err := exec.Command("bash", "-c", "setsid sleep "+marker+" >/dev/null 2>&1 & echo $!").Output()
	if err != nil {
		fmt.Println(err)
		return 1
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	ppid, _, _ := stat(pid)
	fmt.Printf("orphan %d parent-is-me=%v\n", pid, ppid == os.Getpid())
	fmt.Printf("ended %d\n", EndDescendants(time.Second))
	return 0
}

func TestAdoptAndEnd(t *testing.T) {
	t.Parallel()
	marker := fmt.Sprintf("%d.%d", 5000+os.Getpid()%1000, time.Now().UnixNano()%100000)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "CADRE_PROCLIFE_HELPER="+marker)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper: %v %s", err, out)
	}
	var pid int
	var mine bool
	var ended int
	if _, err := fmt.Sscanf(string(out), "orphan %d parent-is-me=%t\nended %d\n", &pid, &mine, &ended); err != nil {
		t.Fatalf("helper output %q: %v", out, err)
	}
	if !mine || ended < 1 {
		t.Errorf("the daemonised sleep was not re-parented to the subreaper (%v) or not ended (%d)", mine, ended)
	}
	if _, state, ok := stat(pid); ok && state != "Z" {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("sleep %d outlived its subreaper", pid)
	}
}

// The children lists and the scan of /proc find the same descendants:
// a shell, its child and a daemonised grandchild, the spared subtree
// left out by both.
func TestDescendantsByChildrenMatchesScan(t *testing.T) {
	if _, err := os.Stat("/proc/thread-self/children"); err != nil {
		t.Skip("no children lists in this kernel")
	}
	spared := exec.Command("sleep", "30")
	if err := spared.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = spared.Process.Kill(); _ = spared.Wait() }()
	sh := exec.Command("bash", "-c", "sleep 30 & (sleep 30 &) ; echo ready; wait")
	sh.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the deferred kill ends the whole group
	out, err := sh.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(-sh.Process.Pid, syscall.SIGKILL); _ = sh.Process.Kill(); _ = sh.Wait() }()
	buf := make([]byte, 6)
	if _, err := out.Read(buf); err != nil {
		t.Fatal(err)
	}
	self, spare := os.Getpid(), []int{spared.Process.Pid}
	byChildren, byScan := descendantsByChildren(self, spare), descendantsByScan(self, spare)
	slices.Sort(byChildren)
	slices.Sort(byScan)
	if !slices.Contains(byChildren, sh.Process.Pid) || slices.Contains(byChildren, spared.Process.Pid) || len(byChildren) < 2 {
		t.Errorf("children lists found %v: want the shell %d and its sleep, not the spared %d", byChildren, sh.Process.Pid, spared.Process.Pid)
	}
	if !slices.Equal(byChildren, byScan) {
		t.Errorf("children lists found %v, the scan %v", byChildren, byScan)
	}
}
