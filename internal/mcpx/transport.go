package mcpx

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cadre-dev/cadre/internal/proclife"
)

// transportFor returns the SDK transport for a server. For stdio it also
// returns the process it will start, so the caller can stop its group.
func transportFor(cfg ServerConfig, o *Options) (mcp.Transport, *process) {
	switch cfg.Transport {
	case HTTP:
		return &mcp.StreamableClientTransport{
			Endpoint:   cfg.URL,
			HTTPClient: httpClient(cfg.Headers),
			MaxRetries: 2,
		}, nil
	case SSE:
		return &mcp.SSEClientTransport{Endpoint: cfg.URL, HTTPClient: httpClient(cfg.Headers)}, nil
	case InProcess:
		return pipeTransport{send: cfg.Pipe}, nil
	default:
		p := &process{cfg: cfg, dir: o.Dir, logPath: logPath(o, cfg.Name), grace: o.StopGrace}
		return p, p
	}
}

func httpClient(headers map[string]string) *http.Client {
	if len(headers) == 0 {
		return &http.Client{}
	}
	return &http.Client{Transport: headerTransport{base: http.DefaultTransport, headers: headers}}
}

// headerTransport adds the configured headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

// process is a stdio server: a child process in its own process group,
// spoken to over its stdin and stdout, its stderr copied to a log file and
// the last few KiB kept for error messages. It is an mcp.Transport that
// can connect once.
type process struct {
	cfg     ServerConfig
	dir     string
	logPath string
	grace   time.Duration

	mu      sync.Mutex
	cmd     *exec.Cmd
	stdin   *os.File
	stdoutR *os.File
	exited  chan struct{} // closed when the process has been waited for
	waitErr error
	stderr  tail
	copied  chan struct{} // closed when stderr is drained
	stopped bool
}

// Connect starts the process and returns the SDK connection over its pipes.
func (p *process) Connect(ctx context.Context) (mcp.Connection, error) {
	if err := p.start(); err != nil {
		return nil, err
	}
	return (&mcp.IOTransport{Reader: p.stdoutR, Writer: nopClose{p.stdin}}).Connect(ctx)
}

func (p *process) start() (err error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return err
	}
	cmd := exec.Command(p.cfg.Command, p.cfg.Args...)
	cmd.Dir = p.dir
	cmd.Env = os.Environ()
	for k, v := range p.cfg.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	proclife.SetParentDeathSignal(cmd.SysProcAttr) // issue 9: a server dies with cadre, even after kill -9
	startErr := cmd.Start()
	// The child has its own copies now.
	inR.Close()
	outW.Close()
	errW.Close()
	if startErr != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return fmt.Errorf("start %s: %w", p.cfg.Command, startErr)
	}
	p.mu.Lock()
	p.cmd, p.stdin, p.stdoutR = cmd, inW, outR
	p.exited, p.copied = make(chan struct{}), make(chan struct{})
	p.mu.Unlock()
	var log io.WriteCloser = nopClose{io.Discard}
	if f := openLog(p.logPath); f != nil { // serverlog.go
		log = f
	}
	go func() { // owned by the process: ends when the group closes stderr
		defer close(p.copied)
		defer log.Close()
		defer errR.Close()
		_, _ = io.Copy(io.MultiWriter(log, &p.stderr), errR)
	}()
	go func() { // owned by the process: ends when it exits (stop kills it)
		err := cmd.Wait()
		p.mu.Lock()
		p.waitErr = err
		p.mu.Unlock()
		close(p.exited)
	}()
	return nil
}

// Pid returns the process id (0 before start).
func (p *process) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// exitState reports whether the process has exited and how.
func (p *process) exitState() (bool, error) {
	p.mu.Lock()
	ch := p.exited
	p.mu.Unlock()
	if ch == nil {
		return false, nil
	}
	select {
	case <-ch:
		p.mu.Lock()
		defer p.mu.Unlock()
		return true, p.waitErr
	default:
		return false, nil
	}
}

// stop ends the process group: stdin closed, then SIGTERM to the group
// after the grace period, then SIGKILL; any member left once the leader
// is gone is killed too. It returns when the leader has been waited for
// and its stderr drained (a descendant that escaped the group and keeps
// stderr open is not waited for beyond the grace period).
func (p *process) stop() {
	p.mu.Lock()
	if p.stopped || p.cmd == nil {
		p.stopped = true
		p.mu.Unlock()
		return
	}
	p.stopped = true
	pgid := p.cmd.Process.Pid
	p.stdin.Close()
	p.mu.Unlock()
	grace := p.grace
	if grace <= 0 {
		grace = 500 * time.Millisecond
	}
	wait := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-p.exited:
			return true
		case <-t.C:
			return false
		}
	}
	if !wait(grace) {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		if !wait(grace) {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-p.exited
		}
	}
	// Whatever the leader left behind in its group goes with it.
	p.killGroup()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.copied:
	case <-t.C:
	}
	p.closeStdout()
}

// killGroup kills what is left of the process group once its leader
// has exited (before start it does nothing).
func (p *process) killGroup() {
	p.mu.Lock()
	cmd := p.cmd
	p.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// closeStdout closes cadre's end of the server's stdout, which ends the
// session reading it (stop closes it too; a second close is harmless).
func (p *process) closeStdout() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stdoutR != nil {
		_ = p.stdoutR.Close()
	}
}

// exitedChan is closed when the process has exited (nil before start).
func (p *process) exitedChan() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exited
}

// copiedChan is closed when the process's stderr has been drained (nil
// before start).
func (p *process) copiedChan() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.copied
}

// stderrTail returns the last lines the server wrote to stderr.
func (p *process) stderrTail() string { return p.stderr.String() }

// nopClose gives a writer a Close that does nothing: the process owns the
// pipe and closes it in stop.
type nopClose struct{ io.Writer }

func (nopClose) Close() error { return nil }

// tail keeps the last 4 KiB written to it.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailSize = 4 << 10

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > tailSize {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailSize:]...)
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
