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
	"errors"
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
	descendants := func(pid int) []int { return descendantsOf(pid, spare) }
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

// descendantsOf lists the live (not zombie) processes below pid, leaving
// out the subtrees of the processes in spare: a walk of pid's tree alone
// where the kernel keeps children lists, else a scan of every process.
func descendantsOf(pid int, spare []int) []int {
	var out []int
	if walkChildren(pid, spare, func(c, _ int, st procStat) {
		if st.state != "Z" && st.state != "X" {
			out = append(out, c)
		}
	}) {
		return out
	}
	return descendantsExcept(pid, spare)
}

// walkChildren calls visit for every process below pid, except the
// subtrees of the processes in spare, with its parent and its stat, read
// from the children lists of each process's threads
// (/proc/<pid>/task/<tid>/children): what it costs grows with pid's tree,
// not with every process on the machine. It reports false, having
// visited nothing, when the kernel keeps no children lists.
func walkChildren(pid int, spare []int, visit func(pid, parent int, st procStat)) bool {
	self := strconv.Itoa(pid)
	if _, err := os.Stat("/proc/" + self + "/task/" + self + "/children"); errors.Is(err, os.ErrNotExist) {
		if _, err := os.Stat("/proc/" + self); err == nil {
			return false // the process is there, its children lists are not
		}
		return true // pid is gone: nothing below it
	}
	seen := map[int]bool{pid: true}
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		dir := "/proc/" + strconv.Itoa(p) + "/task/"
		tasks, err := os.ReadDir(dir)
		if err != nil {
			continue // gone
		}
		for _, task := range tasks {
			b, err := os.ReadFile(dir + task.Name() + "/children")
			if err != nil {
				continue // the thread ended
			}
			for f := range strings.FieldsSeq(string(b)) {
				c, err := strconv.Atoi(f)
				if err != nil || seen[c] || slices.Contains(spare, c) {
					continue
				}
				seen[c] = true
				st, ok := readStat(c)
				if !ok {
					continue // gone
				}
				visit(c, p, st)
				queue = append(queue, c)
			}
		}
	}
	return true
}

// descendantsExcept lists the live (not zombie) processes below pid, from
// a scan of /proc, leaving out the subtrees of the processes in spare.
func descendantsExcept(pid int, spare []int) []int {
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
