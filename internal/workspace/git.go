package workspace

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"

	"github.com/cadre-dev/cadre/internal/gitcmd"
)

// MaxStatusLines is how many lines of `git status --short` a snapshot
// keeps; GitStatus.MoreLines counts the rest.
const MaxStatusLines = 40

// GitStatus is git's view of a repository at one moment.
type GitStatus struct {
	// Status is `git status --short --branch`, at most MaxStatusLines.
	Status string
	// MoreLines counts the status lines left out.
	MoreLines int
	// Log is `git log --oneline -n 5`.
	Log string
}

// Empty reports whether there is nothing to show (not a repository, or
// git is missing or failed).
func (g GitStatus) Empty() bool { return g.Status == "" }

// Snapshot is a session's git status, taken once in the background when
// the first run starts and shown to sub-agents as it was then. A spawn
// never waits for it: a child started before git has answered goes
// without it. Safe for concurrent use.
type Snapshot struct {
	dir   string
	once  sync.Once
	ready chan struct{}
	git   GitStatus
}

// NewSnapshot returns the snapshot of the repository containing dir; it
// is empty until Take has run.
func NewSnapshot(dir string) *Snapshot { return &Snapshot{dir: dir, ready: make(chan struct{})} }

// Take computes the snapshot; only the first call does the work, and every
// call returns once it is there. Cancelling ctx kills git: a run that ends
// before git has answered does not wait for it and goes on without it.
func (s *Snapshot) Take(ctx context.Context) {
	s.once.Do(func() {
		s.git = ReadGitStatus(ctx, s.dir)
		close(s.ready)
	})
	<-s.ready
}

// Get returns the snapshot if cwd is the snapshot's directory and it is
// ready; other directories (an Agent call's cwd) get an empty one, ready.
func (s *Snapshot) Get(cwd string) (status GitStatus, ready bool) {
	if cwd != s.dir {
		return GitStatus{}, true
	}
	select {
	case <-s.ready:
		return s.git, true
	default:
		return GitStatus{}, false
	}
}

// ReadGitStatus runs git for the short status with branch and the recent
// commits of dir (the two at the same time). Outside a repository, without
// git, or when ctx ends first, it returns an empty status.
func ReadGitStatus(ctx context.Context, dir string) GitStatus {
	if _, ok := FindRepo(dir); !ok {
		return GitStatus{}
	}
	// The repository may be one the user has not trusted (yet): its
	// configuration cannot make git run anything (package gitcmd).
	// git is looked up in PATH once for the three commands (exec.Command
	// searched PATH for each).
	bin, err := exec.LookPath("git")
	if err != nil {
		return GitStatus{}
	}
	git := gitcmd.Runner{Bin: bin, Env: gitcmd.Environ(os.Environ())}
	// The repository's configuration is read once for both commands.
	cmds, err := git.Commands(ctx, dir,
		[]string{"--no-optional-locks", "status", "--short", "--branch"},
		[]string{"--no-optional-locks", "log", "--oneline", "-n", "5"})
	if err != nil {
		return GitStatus{}
	}
	gitOut := func(cmd *exec.Cmd) string {
		// Not cmd.Output: it keeps stderr for its error through a
		// pipe and a goroutine copying with a 32 KiB buffer; a failure
		// here is an empty status whatever git said, so stderr goes to
		// the null device.
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Run(); err != nil {
			return ""
		}
		return strings.TrimSpace(out.String())
	}
	var g GitStatus
	var wg sync.WaitGroup
	wg.Go(func() { g.Log = gitOut(cmds[1]) })
	status := gitOut(cmds[0])
	wg.Wait()
	if status == "" {
		return GitStatus{}
	}
	if lines := strings.Split(status, "\n"); len(lines) > MaxStatusLines {
		g.MoreLines = len(lines) - MaxStatusLines
		status = strings.Join(lines[:MaxStatusLines], "\n")
	}
	g.Status = status
	return g
}
