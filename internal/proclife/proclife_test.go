package proclife

import (
	"fmt"
	"os"
	"os/exec"
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
	if marker := os.Getenv("CADRE_PROCLIFE_CLOSING"); marker != "" {
		os.Exit(closingHelper(marker))
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
