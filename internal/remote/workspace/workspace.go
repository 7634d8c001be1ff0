// Package workspace gives a remote agent a git workspace without a shared
// disk (issue 26, S-9.2). The launcher names the repository and its
// commit (Describe); the worker picks its own clone of that repository
// among the roots it may use, fetches the commit when the clone lacks it
// and makes a fresh worktree at it (Pool.Checkout); at the end the
// agent's work — its commits and what it left uncommitted, committed as
// local isolation does — travels back as a git bundle (Checkout.Finish),
// which the launcher lands as the branch worktree-agent-<id> with the
// same kept and removed rules, and the same `cadre worktrees merge`, as a
// local worktree (Land).
//
// Every git process goes through internal/worktree and internal/gitcmd:
// no repository configuration runs a program. The package knows nothing
// of the engine that carries a Source and a Result between the machines.
package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/internal/gitcmd"
	"github.com/cadre-dev/cadre/internal/worktree"
)

// DefaultMaxBundle is the largest bundle a Result carries when no cap is
// configured: it travels inside a workflow result, whose payloads the
// durable engine caps at 2 MB.
const DefaultMaxBundle = 3 << 19 // 1.5 MiB

// Source is the repository and commit a remote agent starts from, as the
// launcher describes them. It is plain data that survives JSON.
type Source struct {
	// Remote is the launcher's origin URL, normalised (no credentials,
	// no .git suffix, no trailing slash); "" without an origin.
	Remote string `json:"remote,omitempty"`
	// Roots are the repository's root commits (sorted): what makes two
	// clones clones of one repository, whatever their URLs.
	Roots []string `json:"roots"`
	// Commit is the launcher's HEAD: the remote agent's tree starts there.
	// Uncommitted changes of the launcher do not travel.
	Commit string `json:"commit"`
	// Seed, for a continued agent, is a git bundle of the commits of its
	// landed branch (worktree-agent-<id>) that the repository's history
	// before its first run lacks; Commit is their tip. The worker fetches
	// them from it, so the agent goes on in the tree its earlier run left.
	Seed []byte `json:"seed,omitempty"`
}

// Describe names the repository dir belongs to and its HEAD commit.
func Describe(ctx context.Context, dir string) (Source, error) {
	g := newGit("")
	var src Source
	top, err := g.out(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return src, fmt.Errorf("describe the repository of %s for a remote agent: %w", dir, err)
	}
	if src.Commit, err = g.out(ctx, top, "rev-parse", "--verify", "HEAD^{commit}"); err != nil {
		return src, fmt.Errorf("describe the repository at %s for a remote agent: it has no commit to start from: %w", top, err)
	}
	if src.Roots, err = g.roots(ctx, top); err != nil {
		return src, fmt.Errorf("describe the repository at %s for a remote agent: %w", top, err)
	}
	if u, err := g.out(ctx, top, "config", "--get", "remote.origin.url"); err == nil {
		src.Remote = NormalizeRemote(u)
	}
	return src, nil
}

// Validate reports what makes s unusable.
func (s Source) Validate() error {
	if !worktree.IsObjectID(s.Commit) {
		return fmt.Errorf("workspace source: commit %q is not a full commit id", s.Commit)
	}
	if len(s.Roots) == 0 {
		return errors.New("workspace source: no root commit names the repository")
	}
	for _, r := range s.Roots {
		if !worktree.IsObjectID(r) {
			return fmt.Errorf("workspace source: root commit %q is not a full commit id", r)
		}
	}
	return nil
}

// NormalizeRemote reduces a remote URL to what names the repository:
// no user or password, no .git suffix or trailing slash, scp-like
// "host:path" written as "host/path", the host lower-cased.
func NormalizeRemote(raw string) string {
	s := strings.TrimSpace(raw)
	if s == "" {
		return ""
	}
	if u, err := url.Parse(s); err == nil && u.Scheme != "" && u.Host != "" {
		s = strings.ToLower(u.Hostname()) + u.Path
	} else if at := strings.Index(s, "@"); at >= 0 && !strings.Contains(s[:at], "/") {
		s = s[at+1:]
	}
	if host, path, ok := strings.Cut(s, ":"); ok && !strings.Contains(host, "/") && !strings.HasPrefix(path, "//") {
		s = strings.ToLower(host) + "/" + strings.TrimPrefix(path, "/")
	}
	s = strings.TrimSuffix(strings.TrimRight(s, "/"), ".git")
	return strings.TrimRight(s, "/")
}

// Config configures a worker's Pool.
type Config struct {
	// Roots are the directories the worker may use (`cadre worker
	// --repo`): each is a clone, or a directory whose subdirectories
	// are clones.
	Roots []string
	// Git is the git binary; "" is git from PATH.
	Git string
	// MaxBundle caps a Result's bundle in bytes; 0 is DefaultMaxBundle.
	MaxBundle int64
	// FetchTimeout bounds fetching a missing commit; 0 is 2 minutes.
	FetchTimeout time.Duration
}

// Pool hands out worktrees in the worker's clones.
type Pool struct {
	cfg   Config
	git   git
	trees *worktree.Manager
	// fetching holds one lock per clone, taken while commits are fetched
	// into that clone (see fetchLock).
	mu       sync.Mutex
	fetching map[string]*sync.Mutex
}

// fetchLock locks clone against fetches into it and new worktrees of it
// from this pool, and returns the unlock. git fetch walks every ref of
// the clone, the HEAD of each of its worktrees too: a tree being added
// meanwhile (its HEAD a placeholder for a moment), or one another fetch
// brought commits into, is a "bad object" to it, and the fetch fails.
// (Seen as a killed worker's agents, all restored at once on another
// worker, failing their moves.)
func (p *Pool) fetchLock(clone string) func() {
	p.mu.Lock()
	if p.fetching == nil {
		p.fetching = map[string]*sync.Mutex{}
	}
	l := p.fetching[clone]
	if l == nil {
		l = &sync.Mutex{}
		p.fetching[clone] = l
	}
	p.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// NewPool returns a Pool over cfg.Roots, which must exist.
func NewPool(cfg Config) (*Pool, error) {
	if len(cfg.Roots) == 0 {
		return nil, errors.New("remote workspaces: no repository roots (--repo) to work in")
	}
	for i, r := range cfg.Roots {
		abs, err := filepath.Abs(r)
		if err != nil {
			return nil, fmt.Errorf("repository root %s: %w", r, err)
		}
		if st, err := os.Stat(abs); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("repository root %s is not a directory", r)
		}
		cfg.Roots[i] = abs
	}
	if cfg.MaxBundle <= 0 {
		cfg.MaxBundle = DefaultMaxBundle
	}
	if cfg.FetchTimeout <= 0 {
		cfg.FetchTimeout = 2 * time.Minute
	}
	m, err := worktree.New(worktree.Config{Git: cfg.Git})
	if err != nil {
		return nil, fmt.Errorf("remote workspaces: %w", err)
	}
	return &Pool{cfg: cfg, git: newGit(cfg.Git), trees: m}, nil
}

// clones lists the clones under the pool's roots, in order.
func (p *Pool) clones(ctx context.Context) []string {
	var out []string
	for _, r := range p.cfg.Roots {
		if top, err := p.git.out(ctx, r, "rev-parse", "--show-toplevel"); err == nil && sameDir(top, r) {
			out = append(out, r)
			continue
		}
		ents, err := os.ReadDir(r)
		if err != nil {
			continue
		}
		for _, e := range ents {
			d := filepath.Join(r, e.Name())
			if !e.IsDir() {
				continue
			}
			if _, err := os.Stat(filepath.Join(d, ".git")); err != nil {
				continue
			}
			out = append(out, d)
		}
	}
	return out
}

// Pick returns the clone of src's repository among the pool's roots: one
// sharing a root commit with it, preferring one whose origin is src's.
func (p *Pool) Pick(ctx context.Context, src Source) (string, error) {
	if err := src.Validate(); err != nil {
		return "", err
	}
	var match []string
	var unread []error
	for _, c := range p.clones(ctx) {
		// rev-list --all walks the HEAD of each of the clone's worktrees
		// too: not while one is being added or fetched into (fetchLock).
		unlock := p.fetchLock(c)
		roots, err := p.git.roots(ctx, c)
		unlock()
		if err != nil {
			unread = append(unread, err)
			continue
		}
		if !slices.ContainsFunc(roots, func(r string) bool { return slices.Contains(src.Roots, r) }) {
			continue
		}
		match = append(match, c)
	}
	if len(match) == 0 {
		name := src.Remote
		if name == "" {
			name = "the repository with root commit " + src.Roots[0]
		}
		err := fmt.Errorf("no clone of %s under this worker's repository roots (%s): clone it there, or start the worker with --repo naming a clone", name, strings.Join(p.cfg.Roots, ", "))
		if len(unread) > 0 {
			err = fmt.Errorf("%w (clones that could not be read: %w)", err, errors.Join(unread...))
		}
		return "", err
	}
	if src.Remote != "" {
		for _, c := range match {
			if u, err := p.git.out(ctx, c, "config", "--get", "remote.origin.url"); err == nil && NormalizeRemote(u) == src.Remote {
				return c, nil
			}
		}
	}
	return match[0], nil
}

// Checkout is a remote agent's fresh worktree on the worker.
type Checkout struct {
	pool  *Pool
	clone string
	lease *worktree.Lease
	snap  snapState
}

// Dir is the tree the agent works in.
func (c *Checkout) Dir() string { return c.lease.Info().Path }

// Clone is the clone the tree was made in.
func (c *Checkout) Clone() string { return c.clone }

// Branch is the tree's branch, worktree-agent-<id>.
func (c *Checkout) Branch() string { return c.lease.Info().Branch }

// Checkout makes a fresh worktree at src.Commit for agent agentID in the
// worker's clone of src's repository, fetching the commit from the
// clone's origin when the clone lacks it.
func (p *Pool) Checkout(ctx context.Context, src Source, agentID, sessionID string) (*Checkout, error) {
	clone, err := p.Pick(ctx, src)
	if err != nil {
		return nil, fmt.Errorf("workspace for remote agent %s: %w", agentID, err)
	}
	if err := p.ensureSeeded(ctx, clone, src, agentID); err != nil {
		return nil, fmt.Errorf("workspace for remote agent %s: %w", agentID, err)
	}
	// git worktree add gives the new tree a placeholder HEAD for a
	// moment: no fetch into the clone may walk it then (fetchLock).
	unlock := p.fetchLock(clone)
	l, err := p.trees.Create(ctx, worktree.Request{Dir: clone, AgentID: agentID, SessionID: sessionID, Commit: src.Commit})
	unlock()
	if err != nil {
		return nil, fmt.Errorf("workspace for remote agent %s: %w", agentID, err)
	}
	return &Checkout{pool: p, clone: clone, lease: l}, nil
}

// ensureCommit fetches src.Commit into clone unless it is there already.
func (p *Pool) ensureCommit(ctx context.Context, clone string, src Source) error {
	if p.git.hasCommit(ctx, clone, src.Commit) {
		return nil
	}
	defer p.fetchLock(clone)()
	fctx, cancel := context.WithTimeout(ctx, p.cfg.FetchTimeout)
	defer cancel()
	// The commit itself (servers that allow it), else every branch.
	_, err1 := p.git.out(fctx, clone, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", "origin", src.Commit)
	if err1 != nil || !p.git.hasCommit(ctx, clone, src.Commit) {
		_, err2 := p.git.out(fctx, clone, "fetch", "--quiet", "--no-tags", "--no-recurse-submodules", "origin")
		if !p.git.hasCommit(ctx, clone, src.Commit) {
			return fmt.Errorf("commit %s is not in the clone at %s, nor could it be fetched from its origin (push it there first): %w", src.Commit, clone, errors.Join(err1, err2))
		}
	}
	return nil
}

// ensureSeeded is ensureCommit for a source that may carry a Seed: the
// commits of a continued agent's branch, fetched from the bundle (after
// the clone's origin, when the bundle's base is missing here too).
func (p *Pool) ensureSeeded(ctx context.Context, clone string, src Source, agentID string) error {
	if len(src.Seed) == 0 || p.git.hasCommit(ctx, clone, src.Commit) {
		return p.ensureCommit(ctx, clone, src)
	}
	defer p.fetchLock(clone)()
	dir, err := os.MkdirTemp("", "cadre-seed-")
	if err != nil {
		return fmt.Errorf("seed the tree: %w", err)
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "seed.bundle")
	if err := os.WriteFile(file, src.Seed, 0o600); err != nil {
		return fmt.Errorf("seed the tree: %w", err)
	}
	ref := "refs/cadre/seed/" + agentID
	fetch := func() error {
		_, err := p.git.out(ctx, clone, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules",
			file, "+refs/heads/"+worktree.BranchName(agentID)+":"+ref)
		return err
	}
	err = fetch()
	if err != nil {
		// Its base may be missing: the clone's origin has it, if anyone.
		fctx, cancel := context.WithTimeout(ctx, p.cfg.FetchTimeout)
		_, ferr := p.git.out(fctx, clone, "fetch", "--quiet", "--no-tags", "--no-recurse-submodules", "origin")
		cancel()
		if err = fetch(); err != nil {
			return fmt.Errorf("seed the tree from the agent's earlier work: %w", errors.Join(err, ferr))
		}
	}
	// The ref only carried the commits in; the worktree's branch keeps them.
	defer func() { _, _ = p.git.out(context.WithoutCancel(ctx), clone, "update-ref", "-d", ref) }()
	if !p.git.hasCommit(ctx, clone, src.Commit) {
		return fmt.Errorf("seed the tree: the agent's earlier work does not hold commit %s", src.Commit)
	}
	return nil
}

// Result is a remote agent's work as it travels back: the pack (base,
// tip, what was committed for it) and the bundle of its commits, empty
// when there is no work.
type Result struct {
	worktree.Pack
	Bundle []byte `json:"bundle,omitempty"`
}

// Finish turns the agent's work into a Result and removes the tree from
// the worker's clone (its work is in the bundle; an unchanged tree is
// removed as local isolation removes it). A bundle over the size cap is
// an error naming both sizes, and the tree is kept on the worker.
func (c *Checkout) Finish(ctx context.Context) (Result, error) {
	var res Result
	dir, err := os.MkdirTemp("", "cadre-bundle-")
	if err != nil {
		_, _ = c.lease.Release(ctx)
		return res, fmt.Errorf("finish the workspace of %s: %w", c.Dir(), err)
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "work.bundle")
	if res.Pack, err = c.lease.Pack(ctx, file); err != nil {
		o, _ := c.lease.Release(ctx)
		return res, fmt.Errorf("finish the workspace of %s (%s): %w", c.Dir(), o.State, err)
	}
	if res.Changed() {
		st, err := os.Stat(file)
		if err != nil {
			_, _ = c.lease.Release(ctx)
			return res, fmt.Errorf("finish the workspace of %s: %w", c.Dir(), err)
		}
		if st.Size() > c.pool.cfg.MaxBundle {
			_, _ = c.lease.Release(ctx)
			return res, &TooLargeError{Size: st.Size(), Max: c.pool.cfg.MaxBundle, Kept: c.Dir(), Branch: res.Branch}
		}
		if res.Bundle, err = os.ReadFile(file); err != nil {
			_, _ = c.lease.Release(ctx)
			return res, fmt.Errorf("finish the workspace of %s: %w", c.Dir(), err)
		}
	}
	// The work is in the bundle: a tree ReleasePacked could not remove
	// is kept on the worker by the usual rules, for its operator.
	_, _ = c.lease.ReleasePacked(ctx, res.Pack)
	return res, nil
}

// TooLargeError is a bundle over the size cap.
type TooLargeError struct {
	Size, Max int64
	// Kept is the tree left on the worker, Branch its branch.
	Kept, Branch string
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the agent's work is a %d-byte git bundle, over the %d-byte cap for remote results: it was kept on the worker in %s (branch %s)", e.Size, e.Max, e.Kept, e.Branch)
}

// Land lands a remote agent's Result in the launcher's repository (the
// one dir belongs to) through m: the branch worktree-agent-<id> and its
// record, kept for `cadre worktrees merge`; a result without work lands
// nothing (Removed). A bundle over max bytes (0: DefaultMaxBundle) is
// refused.
func Land(ctx context.Context, m *worktree.Manager, dir, agentID, sessionID string, res Result, max int64) (worktree.Outcome, error) {
	if max <= 0 {
		max = DefaultMaxBundle
	}
	if int64(len(res.Bundle)) > max {
		return worktree.Outcome{}, &TooLargeError{Size: int64(len(res.Bundle)), Max: max, Branch: res.Branch}
	}
	req := worktree.LandRequest{Dir: dir, AgentID: agentID, SessionID: sessionID, Pack: res.Pack}
	if !res.Changed() && len(res.Bundle) > 0 {
		// A pack that says nothing changed does not carry commits: the
		// two disagree, so nothing of it is trusted.
		return worktree.Outcome{}, fmt.Errorf("land the work of remote agent %s: its result carries a bundle but names no commit past its base %s", agentID, res.Base)
	}
	if res.Changed() {
		if len(res.Bundle) == 0 {
			return worktree.Outcome{}, fmt.Errorf("land the work of remote agent %s: its result names commit %s but carries no bundle", agentID, res.Tip)
		}
		tmp, err := os.MkdirTemp("", "cadre-landing-")
		if err != nil {
			return worktree.Outcome{}, fmt.Errorf("land the work of remote agent %s: %w", agentID, err)
		}
		defer os.RemoveAll(tmp)
		req.Bundle = filepath.Join(tmp, "work.bundle")
		if err := os.WriteFile(req.Bundle, res.Bundle, 0o600); err != nil {
			return worktree.Outcome{}, fmt.Errorf("land the work of remote agent %s: %w", agentID, err)
		}
	}
	return m.Land(ctx, req)
}

// git runs git through gitcmd (no repository configuration runs code).
type git struct{ r gitcmd.Runner }

func newGit(bin string) git {
	return git{gitcmd.Runner{Bin: bin, Env: gitcmd.Environ(os.Environ(), "LC_ALL=C", "GIT_OPTIONAL_LOCKS=0")}}
}

// out runs git in dir and returns its trimmed stdout.
func (g git) out(ctx context.Context, dir string, args ...string) (string, error) {
	cmd, err := g.r.Command(ctx, dir, args...)
	if err != nil {
		return "", err
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && stderr.Len() == 0 {
			return "", fmt.Errorf("git %s (in %s): exit %d", strings.Join(args, " "), dir, ee.ExitCode())
		}
		return "", fmt.Errorf("git %s (in %s): %s", strings.Join(args, " "), dir, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(stdout.String()), nil
}

// roots returns the root commits of the repository at dir, sorted.
func (g git) roots(ctx context.Context, dir string) ([]string, error) {
	out, err := g.out(ctx, dir, "rev-list", "--max-parents=0", "--all")
	if err != nil {
		return nil, err
	}
	roots := strings.Fields(out)
	if len(roots) == 0 {
		return nil, fmt.Errorf("the repository at %s has no commits", dir)
	}
	slices.Sort(roots)
	return slices.Compact(roots), nil
}

// hasCommit reports whether dir's repository holds commit.
func (g git) hasCommit(ctx context.Context, dir, commit string) bool {
	_, err := g.out(ctx, dir, "cat-file", "-e", commit+"^{commit}")
	return err == nil
}

// sameDir reports whether a and b name the same directory.
func sameDir(a, b string) bool {
	ea, err1 := filepath.EvalSymlinks(a)
	eb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ea == eb
}
