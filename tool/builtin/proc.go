package builtin

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// proc is a running `bash -c` in its own process group, its combined
// stdout and stderr flowing into a writer. Two goroutines serve it, and
// both have ended once wait and drain have returned.
type proc struct {
	cmd        *exec.Cmd
	pgid       int
	out        *os.File // read end of the output pipe
	readerDone chan struct{}
	waitDone   chan struct{}
	waitErr    error
}

// shellCommand returns the process that runs command with bash in dir:
// confined by the sandbox when one is configured, otherwise as is. It
// leads a new process group, so the group can be signalled as a whole,
// and gets SIGKILL should cadre die first (a parent-death signal).
// explain is nil without a sandbox. sb is the agent's own sandbox
// (tool.Env.Sandbox); nil falls back to cfg.Sandbox.
func shellCommand(cfg Config, sb Sandbox, dir string, dirs []string, command string) (cmd *exec.Cmd, explain func(string) string, err error) {
	if sb == nil {
		sb = cfg.Sandbox
	}
	if sb != nil {
		cmd, explain, err = sb.Command(dir, dirs, command)
		if err != nil {
			return nil, nil, fmt.Errorf("sandbox: %w", err)
		}
	} else {
		cmd = exec.Command("bash", "-c", command)
		cmd.Dir = dir
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	setParentDeathSignal(cmd.SysProcAttr)
	return cmd, explain, nil
}

// startProc starts cmd with stdin from /dev/null and its combined output
// flowing into w.
func startProc(cmd *exec.Cmd, w io.Writer) (*proc, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		closeFiles(cmd.ExtraFiles)
		return nil, fmt.Errorf("create output pipe: %w", err)
	}
	cmd.Stdout = pw
	cmd.Stderr = pw
	err = cmd.Start()
	closeFiles(cmd.ExtraFiles) // the child holds its own copies
	if err != nil {
		pr.Close()
		pw.Close()
		return nil, fmt.Errorf("start bash: %w", err)
	}
	pw.Close() // the child holds its own copies
	p := &proc{cmd: cmd, pgid: cmd.Process.Pid, out: pr, readerDone: make(chan struct{}), waitDone: make(chan struct{})}
	go func() {
		defer close(p.readerDone)
		io.Copy(w, pr)
	}()
	go func() {
		defer close(p.waitDone)
		p.waitErr = cmd.Wait()
	}()
	return p, nil
}

func closeFiles(fs []*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// kill ends the whole process group: SIGTERM, then SIGKILL once the
// leader has exited or grace has passed. It returns after the leader has
// been reaped.
func (p *proc) kill(grace time.Duration) {
	syscall.Kill(-p.pgid, syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.waitDone:
	case <-t.C:
	}
	// Members that outlive the leader or ignore SIGTERM go now.
	syscall.Kill(-p.pgid, syscall.SIGKILL)
	<-p.waitDone
}

// drain waits, after the leader has exited, for the output pipe to close.
// Processes the command left behind that still hold the pipe are killed
// after grace; one that escaped the group (setsid) is cut off by closing
// our end. The reader goroutine has ended when drain returns. It reports
// whether leftovers had to be killed.
func (p *proc) drain(grace time.Duration) bool {
	<-p.waitDone
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.readerDone:
		p.out.Close()
		return false
	case <-t.C:
	}
	syscall.Kill(-p.pgid, syscall.SIGKILL)
	t.Reset(grace)
	select {
	case <-p.readerDone:
	case <-t.C:
		p.out.Close()
		<-p.readerDone
	}
	p.out.Close()
	return true
}

// exitStatus describes how the leader ended: its exit code, or the signal
// that killed it.
func (p *proc) exitStatus() (code int, signal string) {
	<-p.waitDone
	var ee *exec.ExitError
	if p.waitErr != nil && !errors.As(p.waitErr, &ee) {
		return -1, ""
	}
	st := p.cmd.ProcessState
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, ws.Signal().String()
	}
	return st.ExitCode(), ""
}

// headTail keeps the first and last bytes written to it, up to limit in
// all, and counts what it dropped between them. Safe for concurrent use.
type headTail struct {
	mu      sync.Mutex
	limit   int
	head    []byte
	tail    []byte // ring of the most recent bytes once head is full
	total   int64
	dropped int64
}

func newHeadTail(limit int) *headTail { return &headTail{limit: limit} }

func (h *headTail) Write(b []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(b)
	h.total += int64(n)
	half := h.limit / 2
	if room := half - len(h.head); room > 0 {
		k := min(room, len(b))
		h.head = append(h.head, b[:k]...)
		b = b[k:]
	}
	if len(b) == 0 {
		return n, nil
	}
	keep := h.limit - half
	h.tail = append(h.tail, b...)
	if over := len(h.tail) - keep; over > 0 {
		h.dropped += int64(over)
		h.tail = append(h.tail[:0], h.tail[over:]...)
	}
	return n, nil
}

// String returns the kept output with a note where the middle was cut.
func (h *headTail) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.dropped == 0 {
		return string(h.head) + string(h.tail)
	}
	return fmt.Sprintf("%s\n\n... [%d bytes of output cut from the middle] ...\n\n%s", h.head, h.dropped, h.tail)
}
