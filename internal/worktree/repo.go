package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/cadre-dev/cadre/internal/safefs"
)

// TreesDir is where the worktrees live, relative to the main working
// tree's top level.
const TreesDir = ".cadre/worktrees"

// excludeLine keeps TreesDir out of `git status` without touching the
// user's .gitignore: it goes in the repository's info/exclude, which every
// linked worktree shares.
const excludeLine = "/" + TreesDir + "/"

// lockFile, in the repository's common git directory, serialises worktree
// creation and removal across cadre processes.
const lockFile = "cadre-worktrees.lock"

// ErrNotGitRepo is returned when the directory is not inside a git
// working tree.
var ErrNotGitRepo = errors.New("not inside a git working tree")

// repo is one git repository as a Manager knows it.
type repo struct {
	commonDir string // the repository's common git directory, absolute
	root      string // top level of the main working tree
	hook      string // where the post-checkout hook would be
	sem       chan struct{}

	mu       sync.Mutex
	excluded bool // info/exclude holds excludeLine

	fetches singleflight.Group // one fetch of the default branch at a time
}

// hasPostCheckout reports whether the repository has a post-checkout
// hook (in core.hooksPath or the hooks directory), which `git worktree
// add` would run.
func (r *repo) hasPostCheckout() bool {
	st, err := os.Stat(r.hook)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// treesDir is the directory holding the worktrees and their records.
func (r *repo) treesDir() string { return filepath.Join(r.root, filepath.FromSlash(TreesDir)) }

// where describes the repository a directory belongs to: its common git
// directory, and the commit checked out there.
type where struct {
	commonDir string
	toplevel  string // top level of the working tree dir is in
	head      string // "" when the branch has no commits yet
}

// locate asks git where dir is.
func (m *Manager) locate(ctx context.Context, dir string) (where, error) {
	out, err := m.git.run(ctx, dir, "rev-parse", "--path-format=absolute", "--git-common-dir", "--show-toplevel", "--verify", "-q", "HEAD^{commit}")
	ls := lines(out)
	var ge *GitError
	switch {
	case err == nil && len(ls) == 3:
		return where{commonDir: ls[0], toplevel: ls[1], head: ls[2]}, nil
	case errors.As(err, &ge) && ge.Code == 1 && len(ls) == 2:
		return where{commonDir: ls[0], toplevel: ls[1]}, nil
	case errors.As(err, &ge) && ge.Code == 128:
		return where{}, fmt.Errorf("%s: %w", dir, ErrNotGitRepo)
	case err != nil:
		return where{}, fmt.Errorf("locate the git repository of %s: %w", dir, err)
	}
	return where{}, fmt.Errorf("locate the git repository of %s: unexpected git output %q", dir, out)
}

// repoOf returns the Manager's record of the repository dir belongs to,
// resolving its main working tree the first time.
func (m *Manager) repoOf(ctx context.Context, dir string) (*repo, where, error) {
	w, err := m.locate(ctx, dir)
	if err != nil {
		return nil, w, err
	}
	common := canonical(w.commonDir)
	m.mu.Lock()
	r := m.repos[common]
	m.mu.Unlock()
	if r != nil {
		return r, w, nil
	}
	// Concurrent first calls share one lookup.
	v, err, _ := m.resolving.Do(common, func() (any, error) {
		root, err := m.mainRoot(ctx, dir)
		if err != nil {
			return nil, err
		}
		// The real hooks path (core.hooksPath as the repository sets it):
		// rev-parse runs nothing.
		out, err := m.git.runHook(ctx, root, "rev-parse", "--path-format=absolute", "--git-path", "hooks/post-checkout")
		if err != nil {
			return nil, fmt.Errorf("locate the hooks of %s: %w", root, err)
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		r := m.repos[common]
		if r == nil {
			r = &repo{commonDir: common, root: root, hook: strings.TrimSpace(out), sem: make(chan struct{}, 1)}
			m.repos[common] = r
		}
		return r, nil
	})
	if err != nil {
		return nil, w, err
	}
	return v.(*repo), w, nil
}

// mainRoot is the top level of the repository's main working tree: every
// agent's worktree goes under it, also when the parent itself works in a
// linked worktree, so that removing one worktree never removes another
// nested inside it.
func (m *Manager) mainRoot(ctx context.Context, dir string) (string, error) {
	out, err := m.git.run(ctx, dir, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return "", fmt.Errorf("list the worktrees of %s: %w", dir, err)
	}
	f := nulFields(out)
	if len(f) < 2 || !strings.HasPrefix(f[0], "worktree ") {
		return "", fmt.Errorf("list the worktrees of %s: unexpected git output %q", dir, out)
	}
	for _, attr := range f[1:] {
		if attr == "bare" {
			return "", fmt.Errorf("%s: the repository is bare; worktree isolation needs a main working tree", dir)
		}
		if strings.HasPrefix(attr, "worktree ") {
			break
		}
	}
	return canonical(strings.TrimPrefix(f[0], "worktree ")), nil
}

// canonical resolves symlinks (a temp dir under /tmp may be a symlink) so
// that paths from git and from the caller compare equal.
func canonical(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// lock serialises worktree creation and removal in r: one goroutine per
// process (a channel, so waiting respects ctx), and one process per
// repository (flock on a file in the common git directory). git's own
// lock files make concurrent `git worktree add` calls fail rather than
// wait; under this lock they never meet.
func (r *repo) lock(ctx context.Context) (unlock func(), err error) {
	select {
	case r.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for the worktree lock of %s: %w", r.root, ctx.Err())
	}
	f, err := safefs.OpenFile(r.commonDir, filepath.Join(r.commonDir, lockFile), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		<-r.sem
		return nil, fmt.Errorf("open the worktree lock: %w", err)
	}
	if err := safefs.Lock(ctx, f, time.Millisecond, 50*time.Millisecond); err != nil {
		f.Close()
		<-r.sem
		return nil, fmt.Errorf("wait for the worktree lock of %s: %w", r.root, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
		<-r.sem
	}, nil
}

// ensureExcluded adds excludeLine to the repository's info/exclude once.
// The caller holds r's lock.
func (r *repo) ensureExcluded() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.excluded {
		return nil
	}
	path := filepath.Join(r.commonDir, "info", "exclude")
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) == excludeLine {
			r.excluded = true
			return nil
		}
	}
	f, err := safefs.OpenFile(r.commonDir, path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	add := "# cadre: worktrees of isolated agents\n" + excludeLine + "\n"
	if len(b) > 0 && !strings.HasSuffix(string(b), "\n") {
		add = "\n" + add
	}
	if _, err := f.WriteString(add); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	r.excluded = true
	return nil
}
