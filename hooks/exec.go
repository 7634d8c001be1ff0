package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"

	"github.com/cadre-dev/cadre/internal/proclife"
)

// runCommand runs one command hook: /bin/sh -c command in its own process
// group, input on stdin, stdout and stderr captured up to limit bytes
// each. At the timeout, or when ctx ends, the whole process group is
// killed; descendants that escaped the group and still hold the output
// pipes are waited for at most waitDelay.
func (d *Dispatcher) runCommand(ctx context.Context, h Handler, dir string, input []byte, run *Run) result {
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = d.opts.DefaultTimeout
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	cmd := exec.CommandContext(tctx, d.opts.Shell, "-c", h.Command)
	cmd.Dir = dir
	cmd.Env = d.env
	cmd.Stdin = bytes.NewReader(input)
	stdout := &cappedBuffer{limit: d.opts.MaxOutput}
	stderr := &cappedBuffer{limit: d.opts.MaxOutput}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	proclife.SetParentDeathSignal(cmd.SysProcAttr) // issue 9: a hook dies with cadre, even after kill -9
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = d.opts.WaitDelay

	start := time.Now()
	err := cmd.Run()
	run.Duration = time.Since(start)
	res := result{exit: -1}
	if cmd.ProcessState != nil {
		res.exit = cmd.ProcessState.ExitCode()
	}
	switch {
	case tctx.Err() != nil && ctx.Err() == nil && res.exit < 0:
		run.TimedOut = true
		run.Err = fmt.Errorf("timed out after %s and was killed", timeout)
	case ctx.Err() != nil && res.exit < 0:
		run.Canceled = true
		run.Err = fmt.Errorf("canceled: %w", ctx.Err())
	case errors.Is(err, exec.ErrWaitDelay):
		// The hook exited but something it started kept its output open:
		// end the group, keep what was read.
		_ = killGroup(cmd)
	case err != nil && res.exit < 0:
		run.Err = fmt.Errorf("run hook: %w", err)
	}
	if cmd.Process != nil && (run.TimedOut || run.Canceled) {
		// The shell may have died first; its group may live on.
		_ = killGroup(cmd)
	}
	run.ExitCode = res.exit
	res.stdout, res.stderr = stdout.Bytes(), stderr.Bytes()
	run.Stdout, run.Stderr = string(res.stdout), string(res.stderr)
	run.Truncated = stdout.dropped > 0 || stderr.dropped > 0
	return res
}

// killGroup kills the process group the command leads.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// cappedBuffer keeps the first limit bytes written and counts the rest,
// always accepting writes so the writer never blocks on a full pipe.
type cappedBuffer struct {
	buf     bytes.Buffer
	limit   int
	dropped int
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	room := c.limit - c.buf.Len()
	if room >= len(p) {
		c.buf.Write(p)
		return len(p), nil
	}
	if room > 0 {
		c.buf.Write(p[:room])
	}
	c.dropped += len(p) - max(room, 0)
	return len(p), nil
}

func (c *cappedBuffer) Bytes() []byte { return c.buf.Bytes() }
