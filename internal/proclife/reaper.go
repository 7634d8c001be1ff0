package proclife

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The reaper closes the gap EndDescendants leaves: that runs only at an
// exit cadre controls, and the parent-death signal of a command covers
// the command alone. After kill -9, the processes cadre had adopted as
// subreaper are re-parented to init, out of reach of any PPid walk.
//
// So every process cadre starts carries a mark it inherits from cadre's
// environment (MarkEnv, a random token per run; a nested cadre appends its
// own), and a small reaper process — cadre's own binary, re-executed —
// holds the read end of a pipe whose write end only cadre has. When cadre
// dies, however it dies, the kernel closes that end; the reaper reads EOF
// and ends every process that carries the token, and whatever those
// started, found through /proc. One process per cadre run; nothing per
// command.
//
// A process can drop the mark (env -i). So the reaper also lists, every
// trackEvery while cadre lives, the processes below cadre (as subreaper,
// cadre keeps every orphan below it), by pid and start time, and ends
// those too. What it cannot see is a process that dropped the mark and
// was born after the last look; the Bash sandbox's PID namespace is the
// stronger guarantee.

// MarkEnv is the environment variable holding the comma-separated tokens
// of the cadre runs a process descends from.
const MarkEnv = "CADRE_PROCLIFE"

// reaperEnv, set only in the reaper's environment, holds its token and
// cadre's pid (token@pid); the reaper is recognised at init, before any
// other package runs.
const reaperEnv = "CADRE_PROCLIFE_REAPER"

// The goodbyes an orderly Close writes to the life pipe before closing it.
const (
	byeEnd  byte = '.' // end every process still marked, wherever it is
	byeDone byte = '!' // cadre ended the marked processes itself
)

// reaperGrace is how long the reaper waits after SIGTERM before SIGKILL.
const reaperGrace = 2 * time.Second

// trackEvery is how often the reaper lists the processes below cadre.
const trackEvery = 250 * time.Millisecond

func init() {
	// The reaper is this binary re-executed: it serves and exits here, so
	// none of cadre's start-up runs in it. Every other process pays one
	// getenv.
	if spec := os.Getenv(reaperEnv); spec != "" {
		os.Exit(serveReaper(spec))
	}
}

// Reaper is the watcher process of one cadre run (see StartReaper).
type Reaper struct {
	cmd     *exec.Cmd
	w       *os.File // write end of the life pipe; closing it is cadre's death
	token   string
	prev    string // MarkEnv before this run added its token
	hadPrev bool
}

// StartReaper starts the reaper process and adds this run's token to the
// process environment, so every process started afterwards (os/exec
// inherits os.Environ) carries it. The reaper ends every marked process
// when this process dies, even by SIGKILL. Call it once, early in main,
// before anything is started; Close it last.
func StartReaper() (*Reaper, error) {
	if runtime.GOOS != "linux" {
		return nil, errors.New("start reaper: only on Linux")
	}
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("start reaper: token: %w", err)
	}
	token := hex.EncodeToString(b[:])
	r, w, err := os.Pipe() // close-on-exec: no other child inherits the write end
	if err != nil {
		return nil, fmt.Errorf("start reaper: pipe: %w", err)
	}
	defer r.Close()
	prev, hadPrev := os.LookupEnv(MarkEnv)
	marks := token
	if prev != "" {
		marks = prev + "," + token
	}
	// /proc/self/exe runs this very binary even if its file was replaced.
	cmd := exec.Command("/proc/self/exe")
	cmd.Args = []string{"cadre-reaper"}
	cmd.Env = append(withoutKey(os.Environ(), MarkEnv), MarkEnv+"="+marks, reaperEnv+"="+token+"@"+strconv.Itoa(os.Getpid()))
	cmd.ExtraFiles = []*os.File{r} // fd 3
	cmd.Dir = "/"                  // it pins no directory cadre's run may remove
	// Its own process group: a Ctrl-C or a signal to cadre's group does
	// not reach it. No parent-death signal: it must outlive cadre.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, fmt.Errorf("start reaper: %w", err)
	}
	if err := os.Setenv(MarkEnv, marks); err != nil {
		w.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("start reaper: mark environment: %w", err)
	}
	return &Reaper{cmd: cmd, w: w, token: token, prev: prev, hadPrev: hadPrev}, nil
}

// Pid is the reaper's process id, 0 for a nil Reaper (EndDescendants
// spares it).
func (r *Reaper) Pid() int {
	if r == nil || r.cmd.Process == nil {
		return 0
	}
	return r.cmd.Process.Pid
}

// Token is this run's mark in MarkEnv.
func (r *Reaper) Token() string {
	if r == nil {
		return ""
	}
	return r.token
}

// Close is cadre's orderly end: it ends what is still marked (normally
// nothing after EndDescendants), closes the pipe, waits for the reaper
// and takes the token out of the environment again. Safe on nil.
//
// As a child subreaper (Adopt), every process this one started is still
// below it, daemonised ones included: Close ends the marked ones itself,
// walking its own tree, and tells the reaper so (byeDone), which then
// ends without looking at every process on the machine. Otherwise the
// reaper ends the marked processes wherever they are (byeEnd).
func (r *Reaper) Close() error {
	if r == nil {
		return nil
	}
	bye := byeEnd
	if isSubreaper() {
		self := os.Getpid()
		endAll(func() []int { return markedBelow(self, r.token, r.Pid()) }, reaperGrace)
		bye = byeDone
	}
	_, err := r.w.Write([]byte{bye})
	if cerr := r.w.Close(); err == nil {
		err = cerr
	}
	if werr := r.cmd.Wait(); werr != nil && err == nil {
		err = fmt.Errorf("reaper: %w", werr)
	}
	if r.hadPrev {
		_ = os.Setenv(MarkEnv, r.prev)
	} else {
		_ = os.Unsetenv(MarkEnv)
	}
	return err
}

// serveReaper is the reaper's main: until EOF on fd 3 it keeps a list of
// the processes below cadre (every trackEvery); then it ends every process
// marked with token and, if cadre died, every listed one still alive. It
// returns the exit code.
func serveReaper(spec string) int {
	token, pidText, _ := strings.Cut(spec, "@")
	parent, err := strconv.Atoi(pidText)
	if token == "" || err != nil || parent <= 1 {
		fmt.Fprintf(os.Stderr, "cadre: %s=%q is not token@pid; unset it\n", reaperEnv, spec)
		return 2
	}
	// Terminal signals are cadre's business, not the reaper's.
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU, syscall.SIGPIPE)
	// fd 3 must be the life pipe: with the variable set by hand, and no
	// pipe, there is no cadre to watch and nothing to end.
	var st syscall.Stat_t
	if err := syscall.Fstat(3, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		fmt.Fprintf(os.Stderr, "cadre: %s is set but file descriptor 3 is not the pipe of a cadre run; unset it\n", reaperEnv)
		return 2
	}
	life := os.NewFile(3, "cadre-life")
	ended := make(chan byte, 1) // the goodbye of an orderly Close, 0 for none
	go func() {                 // owned by serveReaper, which waits for ended
		var buf [64]byte
		var bye byte
		for {
			n, err := life.Read(buf[:])
			if n > 0 {
				bye = buf[n-1]
			}
			if err != nil {
				break // EOF: cadre is gone (a read error on a pipe means the same)
			}
		}
		ended <- bye
	}()
	// Start-up touched megabytes of the binary this loop never needs
	// again; without them the reaper's resident set is a few hundred KiB
	// of its own (the pages it needs come back from the file).
	releaseFilePages()
	self := os.Getpid()
	// Only a process born after the reaper can carry its token (cadre
	// sets the mark once the reaper runs): the scans read no older
	// process's environment (issue 24: cadre's exit waits for the last).
	var since uint64
	if st, ok := readStat(self); ok {
		since = st.start
	}
	// A process that dropped the mark (env -i) is still found if it was
	// below cadre at the last look.
	tracked := map[int]uint64{}
	looks := 0
	tick := time.NewTicker(trackEvery)
	defer tick.Stop()
	for {
		select {
		case bye := <-ended:
			switch bye {
			case byeDone:
				// cadre ended what is marked itself: nothing is left to end.
				return 0
			case 0:
			default:
				// cadre ended its tree itself; end only what is marked (an
				// embedder's other children are not cadre's).
				endAll(func() []int { return marked(token, self, since, nil) }, reaperGrace)
				return 0
			}
			find := func() []int { return marked(token, self, since, tracked) }
			if endAll(find, reaperGrace) == 0 {
				// Nothing found at cadre's death: look once more, in case
				// what is left was in the middle of execve then.
				time.Sleep(20 * time.Millisecond)
				endAll(find, reaperGrace)
			}
			return 0
		case <-tick.C:
			if os.Getppid() == parent { // a look after cadre's death sees nothing of it
				tracked = below(parent, self)
				looks++
				// ps (and a test) can see that the reaper looks.
				_ = os.WriteFile("/proc/self/comm", []byte("reaper:"+strconv.Itoa(looks%1e8)), 0)
			}
		}
	}
}

// below returns the live processes below pid, except skip's subtree, with
// their start times: from the children lists of pid's threads where the
// kernel has them, else from a scan of /proc.
func below(pid, skip int) map[int]uint64 {
	out := map[int]uint64{}
	if walkChildren(pid, []int{skip}, func(c, _ int, st procStat) {
		if st.state != "Z" && st.state != "X" {
			out[c] = st.start
		}
	}) {
		return out
	}
	return belowByScan(pid, skip)
}

// belowByScan is below without children lists.
func belowByScan(pid, skip int) map[int]uint64 {
	out := map[int]uint64{}
	for _, c := range descendantsExcept(pid, []int{skip}) {
		if st, ok := readStat(c); ok {
			out[c] = st.start
		}
	}
	return out
}

// EndMarked ends every live process whose environment carries token in
// MarkEnv, and every process below one of them, except the caller:
// SIGTERM, then SIGKILL to what is left after grace (and to what was
// started meanwhile). It returns how many processes it signalled.
func EndMarked(token string, grace time.Duration) int {
	self := os.Getpid()
	return endAll(func() []int { return marked(token, self, 0, nil) }, grace)
}

// endAll ends what find finds until it finds nothing: SIGTERM to the
// first finding, SIGKILL after grace. It returns how many processes it
// signalled.
func endAll(find func() []int, grace time.Duration) int {
	signalled := map[int]bool{}
	first := find()
	for _, pid := range first {
		signalled[pid] = true
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	if len(first) == 0 {
		return 0
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) && len(find()) > 0 {
		time.Sleep(20 * time.Millisecond)
	}
	// Kill until none is left: a dying process may still fork. A process
	// in the middle of execve shows an empty environment for a moment, so
	// "none left" counts only when two scans apart agree.
	empty := 0
	for range 200 {
		left := find()
		if len(left) == 0 {
			if empty++; empty == 2 {
				break
			}
		} else {
			empty = 0
		}
		for _, pid := range left {
			signalled[pid] = true
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return len(signalled)
}

// marked lists the live processes (not zombies) that carry token or are
// in tracked with the same start time, and the live processes below them,
// skipping self. Only processes started at or after since (clock ticks
// after boot, /proc/<pid>/stat's starttime) are checked for the token.
func marked(token string, self int, since uint64, tracked map[int]uint64) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	live := map[int]bool{}
	var roots []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		st, ok := readStat(pid)
		if !ok || st.state == "Z" || st.state == "X" {
			continue
		}
		live[pid] = true
		children[st.ppid] = append(children[st.ppid], pid)
		if start, ok := tracked[pid]; (ok && start == st.start) || (st.start >= since && carries(pid, token)) {
			roots = append(roots, pid)
		}
	}
	seen := map[int]bool{}
	queue := slices.Clone(roots)
	var out []int
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, p)
		for _, c := range children[p] {
			if live[c] && c != self {
				queue = append(queue, c)
			}
		}
	}
	return out
}

// markedBelow lists the live processes below pid (except spare's subtree)
// that carry token, or are below one that does.
func markedBelow(pid int, token string, spare int) []int {
	marked := map[int]bool{}
	var out []int
	walkChildren(pid, []int{spare}, func(c, parent int, st procStat) {
		if marked[parent] || carries(c, token) {
			marked[c] = true
			if st.state != "Z" && st.state != "X" {
				out = append(out, c)
			}
		}
	})
	return out
}

// carries reports whether the environment pid was started with has token
// among the marks in MarkEnv. A process of another user is unreadable,
// and not ours to end.
func carries(pid int, token string) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	if err != nil {
		return false
	}
	prefix := []byte(MarkEnv + "=")
	for kv := range bytes.SplitSeq(b, []byte{0}) {
		v, ok := bytes.CutPrefix(kv, prefix)
		if !ok {
			continue
		}
		for t := range strings.SplitSeq(string(v), ",") {
			if t == token {
				return true
			}
		}
	}
	return false
}

// withoutKey returns env without the entries for key.
func withoutKey(env []string, key string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		return strings.HasPrefix(kv, key+"=")
	})
}
