package builtin

import (
	"context"
	_ "embed"
	"fmt"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/tool"
)

// ShellStatus is the state of a background shell.
type ShellStatus string

// The states a background shell moves through.
const (
	ShellRunning ShellStatus = "running"
	ShellExited  ShellStatus = "exited"
	ShellKilled  ShellStatus = "killed"
)

// ShellInfo describes one background shell.
type ShellInfo struct {
	ID          string
	Command     string
	Description string
	Started     time.Time
	Status      ShellStatus
	// ExitCode is set when Status is ShellExited (-1 if a signal ended it).
	ExitCode int
}

// Shells holds an agent's background shells. It implements tool.ShellHost:
// Close kills every shell still running, process group and all, and waits
// for them. Safe for concurrent use.
type Shells struct {
	mu     sync.Mutex
	next   int
	shells map[string]*bgShell
	closed bool
	wg     sync.WaitGroup
}

var _ tool.ShellHost = (*Shells)(nil)

// NewShells returns an empty host.
func NewShells() *Shells { return &Shells{shells: map[string]*bgShell{}} }

type bgShell struct {
	info  ShellInfo // guarded by mu
	mu    sync.Mutex
	p     *proc
	buf   *shellBuffer
	grace time.Duration
	kill  sync.Once
	done  chan struct{}
}

// shellBuffer keeps output not yet read by BashOutput, up to a limit;
// older unread output is dropped and counted.
type shellBuffer struct {
	mu      sync.Mutex
	limit   int
	unread  []byte
	dropped int64
}

func (b *shellBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.unread = append(b.unread, p...)
	if over := len(b.unread) - b.limit; over > 0 {
		b.dropped += int64(over)
		b.unread = append(b.unread[:0], b.unread[over:]...)
	}
	return len(p), nil
}

// take returns and forgets the unread output and how much was dropped.
func (b *shellBuffer) take() (string, int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, d := string(b.unread), b.dropped
	b.unread, b.dropped = nil, 0
	return s, d
}

func (s *Shells) start(cmd *exec.Cmd, command, description string, cfg Config) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		closeFiles(cmd.ExtraFiles)
		return "", fmt.Errorf("the agent's shells are closed")
	}
	s.next++
	id := "bash_" + strconv.Itoa(s.next)
	sh := &bgShell{
		info:  ShellInfo{ID: id, Command: command, Description: description, Started: time.Now(), Status: ShellRunning},
		buf:   &shellBuffer{limit: cfg.BackgroundBufferLimit},
		grace: cfg.KillGrace,
		done:  make(chan struct{}),
	}
	p, err := startProc(cmd, sh.buf)
	if err != nil {
		return "", err
	}
	sh.p = p
	s.shells[id] = sh
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(sh.done)
		p.drain(sh.grace)
		code, _ := p.exitStatus()
		sh.mu.Lock()
		if sh.info.Status == ShellRunning {
			sh.info.Status, sh.info.ExitCode = ShellExited, code
		}
		sh.mu.Unlock()
	}()
	return id, nil
}

// stop kills the shell's process group and waits until it is gone. It
// reports false when the shell had already finished.
func (sh *bgShell) stop() bool {
	select {
	case <-sh.done:
		return false
	default:
	}
	sh.mu.Lock()
	running := sh.info.Status == ShellRunning
	if running {
		sh.info.Status = ShellKilled
	}
	sh.mu.Unlock()
	if running {
		sh.kill.Do(func() { sh.p.kill(sh.grace) })
	}
	<-sh.done
	return running
}

func (sh *bgShell) snapshot() ShellInfo {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.info
}

func (s *Shells) get(id string) (*bgShell, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sh, ok := s.shells[id]; ok {
		return sh, nil
	}
	ids := make([]string, 0, len(s.shells))
	for k := range s.shells {
		ids = append(ids, k)
	}
	sortShellIDs(ids)
	return nil, ids
}

func shellNum(id string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(id, "bash_"))
	return n
}

func sortShellIDs(ids []string) {
	sort.Slice(ids, func(i, j int) bool { return shellNum(ids[i]) < shellNum(ids[j]) })
}

// List describes every shell started so far, oldest first.
func (s *Shells) List() []ShellInfo {
	s.mu.Lock()
	shells := make([]*bgShell, 0, len(s.shells))
	for _, sh := range s.shells {
		shells = append(shells, sh)
	}
	s.mu.Unlock()
	out := make([]ShellInfo, 0, len(shells))
	for _, sh := range shells {
		out = append(out, sh.snapshot())
	}
	sort.Slice(out, func(i, j int) bool { return shellNum(out[i].ID) < shellNum(out[j].ID) })
	return out
}

// Close kills every shell still running and waits for all of them. No
// shell can be started afterwards.
func (s *Shells) Close() error {
	s.mu.Lock()
	s.closed = true
	shells := make([]*bgShell, 0, len(s.shells))
	for _, sh := range s.shells {
		shells = append(shells, sh)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, sh := range shells {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sh.stop()
		}()
	}
	wg.Wait()
	s.wg.Wait()
	return nil
}

func statusText(info ShellInfo) string {
	switch info.Status {
	case ShellExited:
		if info.ExitCode < 0 {
			return "exited (killed by a signal)"
		}
		return fmt.Sprintf("exited with code %d", info.ExitCode)
	case ShellKilled:
		return "killed"
	}
	return "running"
}

//go:embed bashoutput.md
var bashOutputDescription string

type bashOutputInput struct {
	BashID string `json:"bash_id" jsonschema_description:"Shell id from Bash (bash_1)."`
	Filter string `json:"filter,omitempty" jsonschema_description:"Regex: keep only matching new lines."`
}

// NewBashOutput returns the BashOutput tool: the new output and status of
// a background shell.
func NewBashOutput(cfg Config) tool.Tool {
	cfg = cfg.withDefaults()
	return tool.Func(tool.FuncConfig{Name: NameBashOutput, Description: bashOutputDescription, ReadOnly: true},
		func(ctx context.Context, env *tool.Env, in bashOutputInput) (tool.Output, error) {
			return runBashOutput(cfg, env, in), nil
		})
}

func runBashOutput(cfg Config, env *tool.Env, in bashOutputInput) tool.Output {
	shells := shellsOf(env)
	if shells == nil {
		return tool.Errorf("background shells are not available here")
	}
	if in.BashID == "" {
		return tool.Errorf("bash_id is required")
	}
	var filter *regexp.Regexp
	if in.Filter != "" {
		var err error
		if filter, err = regexp.Compile(in.Filter); err != nil {
			return tool.Errorf("invalid filter %q: %v", in.Filter, err)
		}
	}
	sh, ids := shells.get(in.BashID)
	if sh == nil {
		return unknownShell(in.BashID, ids)
	}
	info := sh.snapshot() // status first, so output read after it is complete for a finished shell
	out, dropped := sh.buf.take()
	if filter != nil && out != "" {
		var kept []string
		for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			if filter.MatchString(l) {
				kept = append(kept, l)
			}
		}
		out = strings.Join(kept, "\n")
	}
	out = capText(strings.ToValidUTF8(strings.TrimRight(out, "\n"), "\uFFFD"), cfg.BashOutputLimit)
	var b strings.Builder
	fmt.Fprintf(&b, "Shell %s: %s\n", info.ID, statusText(info))
	if dropped > 0 {
		fmt.Fprintf(&b, "(%d bytes of older unread output were dropped)\n", dropped)
	}
	if out == "" {
		b.WriteString("(no new output)")
	} else {
		b.WriteString(out)
	}
	return tool.Output{Text: b.String()}
}

func unknownShell(id string, ids []string) tool.Output {
	if len(ids) == 0 {
		return tool.Errorf("no background shell %q: none have been started", id)
	}
	return tool.Errorf("no background shell %q; known shells: %s", id, strings.Join(ids, ", "))
}

//go:embed killshell.md
var killShellDescription string

type killShellInput struct {
	ShellID string `json:"shell_id" jsonschema_description:"Shell id from Bash (bash_1)."`
}

// NewKillShell returns the KillShell tool: stop a background shell and
// every process it started.
func NewKillShell(cfg Config) tool.Tool {
	return tool.Func(tool.FuncConfig{Name: NameKillShell, Description: killShellDescription},
		func(ctx context.Context, env *tool.Env, in killShellInput) (tool.Output, error) {
			shells := shellsOf(env)
			if shells == nil {
				return tool.Errorf("background shells are not available here"), nil
			}
			if in.ShellID == "" {
				return tool.Errorf("shell_id is required"), nil
			}
			sh, ids := shells.get(in.ShellID)
			if sh == nil {
				return unknownShell(in.ShellID, ids), nil
			}
			if !sh.stop() {
				return tool.Errorf("shell %s is not running: it %s", in.ShellID, statusText(sh.snapshot())), nil
			}
			return tool.Output{Text: fmt.Sprintf("Killed shell %s and every process it started.", in.ShellID)}, nil
		})
}
