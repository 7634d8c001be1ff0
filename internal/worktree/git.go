package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cadre-dev/cadre/internal/gitcmd"
)

// git runs the git binary with an environment fixed once per Manager.
type git struct {
	bin string
	env []string
	// spent, when set (by benchmarks), adds up the time spent waiting for
	// git processes.
	spent *atomic.Int64
}

// newGit returns a runner for bin with the process environment as
// gitcmd.Environ leaves it (no variables that select another repository,
// no prompts, pager or editor), plus stable output (LC_ALL=C), no optional
// locks (so inspecting a tree never contends with the agent's own git
// commands), no editor for merges, and extra. Every git it starts has the
// repository's program-running settings neutralised (package gitcmd).
func newGit(bin string, environ, extra []string) git {
	env := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if name == "LC_ALL" || name == "GIT_OPTIONAL_LOCKS" || name == "GIT_MERGE_AUTOEDIT" {
			continue
		}
		env = append(env, kv)
	}
	env = gitcmd.Environ(env, append([]string{"LC_ALL=C", "GIT_OPTIONAL_LOCKS=0", "GIT_MERGE_AUTOEDIT=no"}, extra...)...)
	return git{bin: bin, env: env}
}

// GitError is a git command that failed: its arguments, directory, exit
// code and what it printed on stderr.
type GitError struct {
	Args   []string
	Dir    string
	Code   int
	Stderr string
	Err    error
}

// Error names the command and git's own message.
func (e *GitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	if i := strings.IndexByte(msg, '\n'); i >= 0 && len(msg) > 400 {
		msg = msg[:i]
	}
	return fmt.Sprintf("git %s (in %s): %s", strings.Join(e.Args, " "), e.Dir, msg)
}

// Unwrap returns the underlying exec error.
func (e *GitError) Unwrap() error { return e.Err }

// run runs git in dir and returns its stdout. A non-zero exit is a
// *GitError.
func (g git) run(ctx context.Context, dir string, args ...string) (string, error) {
	return g.start(ctx, false, dir, args...)
}

// runHook is run for `git hook run`: the repository's hooks are kept
// (only in a workspace the user trusts).
func (g git) runHook(ctx context.Context, dir string, args ...string) (string, error) {
	return g.start(ctx, true, dir, args...)
}

func (g git) start(ctx context.Context, hooks bool, dir string, args ...string) (string, error) {
	r := gitcmd.Runner{Bin: g.bin, Env: g.env}
	newCmd := r.Command
	if hooks {
		newCmd = r.CommandRunningHooks
	}
	cmd, err := newCmd(ctx, dir, args...)
	if err != nil {
		return "", &GitError{Args: args, Dir: dir, Code: -1, Err: err}
	}
	// A killed git may leave a child (a hook, a filter) holding the pipes;
	// don't wait for it for long.
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	if g.spent != nil {
		g.spent.Add(int64(time.Since(start)))
	}
	if err != nil {
		ge := &GitError{Args: args, Dir: dir, Code: -1, Stderr: stderr.String(), Err: err}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			ge.Code = ee.ExitCode()
		}
		if ctx.Err() != nil {
			ge.Err = fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
		return stdout.String(), ge
	}
	return stdout.String(), nil
}

// lines splits git output into its non-empty lines.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimRight(l, "\r"); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// nulFields splits -z output into its non-empty fields.
func nulFields(s string) []string {
	var out []string
	for _, f := range strings.Split(s, "\x00") {
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}
