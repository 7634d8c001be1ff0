// Package proclife keeps the processes cadre starts from outliving it
// when no sandbox does (S-10.5, issue 9): cadre becomes a child
// subreaper, so a process a command started and left behind (`setsid
// sleep &`, `nohup sleep &`) is re-parented to cadre instead of init and
// stays reachable; at every exit it controls, cadre ends every descendant.
// Each Bash command also gets a parent-death signal (tool/builtin), so
// the command itself dies with cadre even after kill -9; what it started
// in turn is ended by the Reaper (reaper.go), a watcher process that
// outlives cadre by the moment it takes to end every process cadre's
// run has marked.
package proclife

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// EndDescendants ends every live process descending from this one,
// daemonised ones included when Adopt was called: SIGTERM first, SIGKILL
// to what is left after grace (and to what they started meanwhile). It
// returns how many processes it signalled. It polls /proc while it waits:
// this is the last thing cadre does before it exits. The processes in
// spare, and what is below them, are left alone (the Reaper, which ends
// itself when cadre does).
func EndDescendants(grace time.Duration, spare ...int) int {
	self := os.Getpid()
	descendants := func(pid int) []int { return descendantsExcept(pid, spare) }
	first := descendants(self)
	if len(first) == 0 {
		return 0
	}
	for _, pid := range first {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) && len(descendants(self)) > 0 {
		time.Sleep(10 * time.Millisecond)
	}
	signalled := map[int]bool{}
	for _, pid := range first {
		signalled[pid] = true
	}
	// Kill until none is left: a dying process may still fork.
	for range 50 {
		left := descendants(self)
		if len(left) == 0 {
			break
		}
		for _, pid := range left {
			signalled[pid] = true
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return len(signalled)
}

// descendantsExcept lists the live (not zombie) processes below pid,
// leaving out the subtrees of the processes in spare: from the children
// lists the kernel keeps per thread where it has them, else from a scan
// of every process in /proc. The lists read a handful of files for
// cadre's few descendants where the scan reads one per process on the
// machine: at cadre's every exit (issue 24).
func descendantsExcept(pid int, spare []int) []int {
	if _, err := os.Stat("/proc/thread-self/children"); err == nil {
		return descendantsByChildren(pid, spare)
	}
	return descendantsByScan(pid, spare)
}

// descendantsByChildren walks /proc/<pid>/task/<tid>/children down from
// pid. A process that ends during the walk is left out, as the scan
// leaves it out.
func descendantsByChildren(pid int, spare []int) []int {
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		dir := "/proc/" + strconv.Itoa(p) + "/task/"
		f, err := os.Open(dir)
		if err != nil {
			continue // gone
		}
		tids, err := f.Readdirnames(-1)
		f.Close()
		if err != nil {
			continue
		}
		for _, tid := range tids {
			b, err := os.ReadFile(dir + tid + "/children")
			if err != nil {
				continue // the thread ended
			}
			for _, field := range strings.Fields(string(b)) {
				c, err := strconv.Atoi(field)
				if err != nil || slices.Contains(spare, c) {
					continue
				}
				if _, state, ok := stat(c); ok && state != "Z" && state != "X" {
					out = append(out, c)
				}
				queue = append(queue, c)
			}
		}
	}
	return out
}

// descendantsByScan is descendantsExcept from a scan of every process in
// /proc, for kernels without children lists.
func descendantsByScan(pid int, spare []int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	live := map[int]bool{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, state, ok := stat(p)
		if !ok {
			continue
		}
		children[ppid] = append(children[ppid], p)
		live[p] = state != "Z" && state != "X"
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if slices.Contains(spare, c) {
				continue
			}
			if live[c] {
				out = append(out, c)
			}
			queue = append(queue, c)
		}
	}
	return out
}

// stat reads a process's parent and state from /proc/<pid>/stat.
func stat(pid int) (ppid int, state string, ok bool) {
	st, ok := readStat(pid)
	return st.ppid, st.state, ok
}

// procStat is what cadre reads of /proc/<pid>/stat.
type procStat struct {
	ppid  int
	state string
	start uint64 // clock ticks after boot: with the pid, one process for ever
}

// readStat reads /proc/<pid>/stat.
func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return procStat{}, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, false
	}
	// Fields after the command: state (3rd), ppid (4th) … starttime (22nd).
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return procStat{}, false
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return procStat{}, false
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return procStat{}, false
	}
	return procStat{ppid: ppid, state: f[0], start: start}, true
}
