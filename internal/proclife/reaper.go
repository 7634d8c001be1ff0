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
// What it cannot see: a process that drops the mark from its environment
// (env -i) and is no longer below a marked one; the Bash sandbox's PID
// namespace is the stronger guarantee.

// MarkEnv is the environment variable holding the comma-separated tokens
// of the cadre runs a process descends from.
const MarkEnv = "CADRE_PROCLIFE"

// reaperEnv, set only in the reaper's environment, holds its token; the
// reaper is recognised at init, before any other package runs.
const reaperEnv = "CADRE_PROCLIFE_REAPER"

// reaperGrace is how long the reaper waits after SIGTERM before SIGKILL.
const reaperGrace = 2 * time.Second

func init() {
	// The reaper is this binary re-executed: it serves and exits here, so
	// none of cadre's start-up runs in it. Every other process pays one
	// getenv.
	if token := os.Getenv(reaperEnv); token != "" {
		os.Exit(serveReaper(token))
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
	cmd.Env = append(withoutKey(os.Environ(), MarkEnv), MarkEnv+"="+marks, reaperEnv+"="+token)
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

// Close is cadre's orderly end: it closes the pipe (the reaper ends what
// is still marked, normally nothing after EndDescendants), waits for the
// reaper and takes the token out of the environment again. Safe on nil.
func (r *Reaper) Close() error {
	if r == nil {
		return nil
	}
	_, err := r.w.Write([]byte{'.'})
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

// serveReaper is the reaper's main: wait for EOF on fd 3, then end every
// process marked with token. It returns the exit code.
func serveReaper(token string) int {
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
	var buf [64]byte
	orderly := false
	for {
		n, err := life.Read(buf[:])
		if n > 0 {
			orderly = true // Close says goodbye first; a death does not
		}
		if err != nil {
			break // EOF: cadre is gone (a read error on a pipe means the same)
		}
	}
	if EndMarked(token, reaperGrace) == 0 && !orderly {
		// Nothing found at cadre's death: look once more, in case what is
		// left was in the middle of execve (an empty environment) then.
		time.Sleep(20 * time.Millisecond)
		EndMarked(token, reaperGrace)
	}
	return 0
}

// EndMarked ends every live process whose environment carries token in
// MarkEnv, and every process below one of them, except the caller:
// SIGTERM, then SIGKILL to what is left after grace (and to what was
// started meanwhile). It returns how many processes it signalled.
func EndMarked(token string, grace time.Duration) int {
	self := os.Getpid()
	signalled := map[int]bool{}
	first := marked(token, self)
	for _, pid := range first {
		signalled[pid] = true
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	if len(first) == 0 {
		return 0
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) && len(marked(token, self)) > 0 {
		time.Sleep(20 * time.Millisecond)
	}
	// Kill until none is left: a dying process may still fork. A process
	// in the middle of execve shows an empty environment for a moment, so
	// "none left" counts only when two scans apart agree.
	empty := 0
	for range 200 {
		left := marked(token, self)
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

// marked lists the live processes (not zombies) that carry token, and the
// live processes below them, skipping self.
func marked(token string, self int) []int {
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
		ppid, state, ok := stat(pid)
		if !ok || state == "Z" || state == "X" {
			continue
		}
		live[pid] = true
		children[ppid] = append(children[ppid], pid)
		if carries(pid, token) {
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
