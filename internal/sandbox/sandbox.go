// Package sandbox runs shell commands under bubblewrap (bwrap), the way
// Claude Code confines Bash on Linux (S-10.5): the whole file system is
// read-only except the command's working directories, a private /tmp and
// the writable paths configured (tool caches); the paths deny rules protect
// are masked (a directory shows empty, a file cannot be read) or mounted
// read-only; the network can be cut; and the command runs as the init of
// its own PID namespace tied to cadre with --die-with-parent, so nothing
// it starts — daemonised or not — outlives the command, or cadre, even
// after kill -9.
//
// New checks once that bwrap exists and can create a sandbox here; when it
// cannot (not installed, no user namespaces), the error says why and what
// to do, and the caller either stops or runs commands unconfined, as the
// user's settings say.
package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/prompts"
)

// Config says how commands are confined. The zero value (with Writable
// from DefaultWritable) is the usual choice.
type Config struct {
	// BwrapPath is the bwrap binary; "" looks "bwrap" up on PATH.
	BwrapPath string
	// Writable are paths besides each command's working directories that
	// commands may write (DefaultWritable lists the common tool caches).
	// Paths that do not exist are skipped.
	Writable []string
	// Network allows network access. Without it a command has a network
	// namespace of its own with only loopback.
	Network bool
}

// Sandbox runs commands confined. It is immutable and safe for concurrent
// use.
type Sandbox struct {
	cfg   Config
	bwrap string
	// root is true when cadre runs as uid 0: bwrap then drops every
	// capability, so root inside cannot read a masked file or remount.
	root bool
}

// ErrUnavailable is wrapped by New when bubblewrap is missing or cannot
// create a sandbox on this machine.
var ErrUnavailable = errors.New("the Bash sandbox is not available")

// probeTimeout bounds the check that bwrap can run.
const probeTimeout = 30 * time.Second

// New finds bwrap and runs it once with the namespaces commands will get,
// so a machine where it cannot work is reported up front, with the reason
// and what to do, rather than on every command.
func New(ctx context.Context, cfg Config) (*Sandbox, error) {
	path := cfg.BwrapPath
	if path == "" {
		path = "bwrap"
	}
	bwrap, err := exec.LookPath(path)
	if err != nil {
		return nil, fmt.Errorf("%w: bubblewrap (bwrap) is not installed (%v); install it (Debian and Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap) or turn the sandbox off", ErrUnavailable, err)
	}
	s := &Sandbox{cfg: cfg, bwrap: bwrap, root: os.Geteuid() == 0}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	args := append(s.baseArgs(), "--", "true")
	cmd := exec.CommandContext(ctx, bwrap, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("%w: %s cannot create a sandbox here: %s; this usually means unprivileged user namespaces are disabled (enable them with `sysctl -w kernel.unprivileged_userns_clone=1`, or on Ubuntu 24.04+ `sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`; in a container, allow user namespaces) or turn the sandbox off", ErrUnavailable, bwrap, msg)
	}
	return s, nil
}

// Open starts the sandbox the way configuration should: when bubblewrap
// cannot run, required (a setting such as sandbox.failIfUnavailable)
// makes that an error; otherwise Open returns a nil Sandbox and the
// message to show once — commands then run unconfined, and the permission
// checker must be told so (no permission.Config.Sandbox).
func Open(ctx context.Context, cfg Config, required bool) (sb *Sandbox, warning string, err error) {
	sb, err = New(ctx, cfg)
	switch {
	case err == nil:
		return sb, "", nil
	case required || !errors.Is(err, ErrUnavailable):
		return nil, "", err
	}
	return nil, err.Error() + "; Bash commands run without it", nil
}

// Network reports whether commands may use the network.
func (s *Sandbox) Network() bool { return s.cfg.Network }

// Writable returns the configured writable paths besides each command's
// working directories.
func (s *Sandbox) Writable() []string { return append([]string(nil), s.cfg.Writable...) }

// Policy is what one command may see and change, besides what the
// Sandbox's Config allows every command.
type Policy struct {
	// Cwd is the command's working directory; it is writable.
	Cwd string
	// Dirs are further working directories, writable too.
	Dirs []string
	// Hidden are paths the command must not read: a directory is shown
	// empty (and read-only), a file as unreadable.
	Hidden []string
	// ReadOnly are paths inside writable places the command must not
	// change.
	ReadOnly []string
}

// baseArgs are the options every command gets: a read-only view of the
// whole file system, fresh /dev, /proc and /tmp, its own PID namespace
// tied to the caller's life, and no network unless allowed.
func (s *Sandbox) baseArgs() []string {
	args := []string{
		"--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
		"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
	}
	if !s.cfg.Network {
		args = append(args, "--unshare-net")
	}
	if s.root {
		args = append(args, "--cap-drop", "ALL")
	}
	return args
}

// Command returns the command that runs argv confined by p. The caller
// starts it (and must close the returned command's ExtraFiles once it has
// started: each masks a file). The environment is the caller's, with
// TMPDIR pointing at the private /tmp.
func (s *Sandbox) Command(p Policy, argv []string) (*exec.Cmd, error) {
	if !filepath.IsAbs(p.Cwd) {
		return nil, fmt.Errorf("sandbox: working directory %q is not absolute", p.Cwd)
	}
	if len(argv) == 0 {
		return nil, errors.New("sandbox: no command")
	}
	args := s.baseArgs()
	for _, w := range s.writable(p) {
		args = append(args, "--bind-try", w, w)
	}
	for _, r := range p.ReadOnly {
		args = append(args, "--ro-bind-try", r, r)
	}
	protected := s.protected(p)
	for _, r := range protected {
		args = append(args, "--ro-bind-try", r, r)
	}
	// A working directory below a protected one (an agent's worktree in
	// .cadre/worktrees, given to its parent as a further directory) stays
	// writable, with its own protected paths on top again.
	for _, w := range s.writable(p) {
		if !s.strictlyUnder(w, protected) {
			continue
		}
		args = append(args, "--bind-try", w, w)
		for _, r := range protected {
			if r != w && s.under(r, []string{w}) {
				args = append(args, "--ro-bind-try", r, r)
			}
		}
	}
	var masks []*os.File
	closeMasks := func() {
		for _, f := range masks {
			f.Close()
		}
	}
	for _, h := range p.Hidden {
		st, err := os.Stat(h)
		switch {
		case err != nil:
			continue // nothing there to hide
		case st.IsDir():
			args = append(args, "--tmpfs", h, "--remount-ro", h)
		default:
			// An empty file no one may open, mounted over the real one:
			// bwrap reads its content from the descriptor.
			f, err := os.Open(os.DevNull)
			if err != nil {
				closeMasks()
				return nil, fmt.Errorf("sandbox: mask %s: %w", h, err)
			}
			masks = append(masks, f)
			args = append(args, "--perms", "0000", "--ro-bind-data", fmt.Sprint(2+len(masks)), h)
		}
	}
	args = append(args, "--setenv", "TMPDIR", "/tmp", "--chdir", p.Cwd, "--")
	args = append(args, argv...)
	cmd := exec.Command(s.bwrap, args...)
	cmd.Dir = p.Cwd
	cmd.ExtraFiles = masks
	// Should cadre die, bwrap goes too; --die-with-parent then ends the
	// sandbox's init, and the kernel every process in its namespace.
	cmd.SysProcAttr = sysProcAttr()
	return cmd, nil
}

// writable lists the places a command may write: its working directories,
// the git directories a linked worktree among them writes to, and the
// configured writable paths.
func (s *Sandbox) writable(p Policy) []string {
	var out []string
	seen := map[string]bool{}
	add := func(d string) {
		if d != "" && !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	for _, d := range append([]string{p.Cwd}, p.Dirs...) {
		add(d)
		for _, g := range worktreeGitDirs(d) {
			add(g)
		}
	}
	for _, w := range s.cfg.Writable {
		add(w)
	}
	return out
}

// projectFiles are the names, in a project's root, of what cadre and
// Claude Code read as configuration: settings, agents, skills, hooks and
// MCP servers.
var projectFiles = []string{".cadre", ".claude", ".mcp.json"}

// gitFiles are the names, in a git directory, through which git runs
// programs or finds its configuration.
var gitFiles = []string{"config", "config.worktree", "hooks", "info", "commondir"}

// protected lists what commands must not change inside the places they
// may write, because cadre's own (unsandboxed) git and cadre's next run
// trust it (issue 23): in each writable directory that is a project, its
// .cadre/, .claude/ and .mcp.json; in each git
// directory among them (the project's .git, and the git directories a
// linked worktree writes to), config, hooks/, info/ and commondir. Only
// what exists can be protected: bwrap would otherwise create the mount
// point on the host.
func (s *Sandbox) protected(p Policy) []string {
	var out []string
	seen := map[string]bool{}
	add := func(path string) {
		if seen[path] {
			return
		}
		if _, err := os.Lstat(path); err == nil {
			seen[path] = true
			out = append(out, path)
		}
	}
	gitDir := func(d string) {
		for _, f := range gitFiles {
			add(filepath.Join(d, f))
		}
	}
	for _, w := range s.writable(p) {
		if isGitDir(w) {
			gitDir(w)
			continue
		}
		for _, f := range projectFiles {
			add(filepath.Join(w, f))
		}
		if st, err := os.Lstat(filepath.Join(w, ".git")); err == nil && st.IsDir() {
			gitDir(filepath.Join(w, ".git"))
		}
	}
	return out
}

// strictlyUnder reports whether path is below one of roots (not one of
// them).
func (s *Sandbox) strictlyUnder(path string, roots []string) bool {
	for _, r := range roots {
		if path != r && s.under(path, []string{r}) {
			return true
		}
	}
	return false
}

// trustedChildren are the files and directories below .cadre/ and
// .claude/ that cadre or Claude Code load; when the directory itself does
// not exist (so it cannot be mounted read-only), these are watched
// instead (see Absent).
var trustedChildren = []string{
	"settings.json", "settings.local.json", "agents", "skills", "commands", "hooks", "plugins", "output-styles",
}

// Absent lists the paths protected would protect if they existed, and
// which do not exist now: a command can create them (bwrap can only mount
// over what exists). Bash moves aside what a command created there
// (MoveAsideCreated).
func (s *Sandbox) Absent(p Policy) []string {
	var out []string
	add := func(path string) {
		if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
			out = append(out, path)
		}
	}
	gitDir := func(d string) {
		for _, f := range []string{"config", "config.worktree", "commondir", "hooks", filepath.Join("info", "attributes")} {
			add(filepath.Join(d, f))
		}
	}
	for _, w := range s.writable(p) {
		if isGitDir(w) {
			gitDir(w)
			continue
		}
		add(filepath.Join(w, ".mcp.json"))
		for _, d := range []string{".cadre", ".claude"} {
			if _, err := os.Lstat(filepath.Join(w, d)); err == nil {
				continue // mounted read-only as a whole
			}
			for _, c := range trustedChildren {
				add(filepath.Join(w, d, c))
			}
		}
		if st, err := os.Lstat(filepath.Join(w, ".git")); err == nil && st.IsDir() {
			gitDir(filepath.Join(w, ".git"))
		}
	}
	return out
}

// MoveAsideCreated renames each of absent (from Absent, before the
// command ran) that exists now — the command created it — to
// <path>.sandbox-refused (numbered if taken), so cadre and git never load
// it, and returns a note for each. Run it once the command and everything
// it started have ended (the sandbox guarantees nothing outlives it).
func MoveAsideCreated(absent []string) []string {
	var notes []string
	for _, path := range absent {
		if _, err := os.Lstat(path); err != nil {
			continue
		}
		to := path + ".sandbox-refused"
		for i := 2; ; i++ {
			if _, err := os.Lstat(to); errors.Is(err, os.ErrNotExist) {
				break
			}
			to = fmt.Sprintf("%s.sandbox-refused-%d", path, i)
		}
		if err := os.Rename(path, to); err != nil {
			notes = append(notes, prompts.SandboxCreatedProtected(path, "", err.Error()))
			continue
		}
		notes = append(notes, prompts.SandboxCreatedProtected(path, to, ""))
	}
	return notes
}

// isGitDir reports whether dir is a git directory (not a working tree):
// it has HEAD and either objects/ or a commondir file.
func isGitDir(dir string) bool {
	if _, err := os.Lstat(filepath.Join(dir, "HEAD")); err != nil {
		return false
	}
	for _, f := range []string{"objects", "commondir"} {
		if _, err := os.Lstat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	return false
}

// worktreeGitDirs returns, for a linked git worktree at dir (whose .git is
// a file naming its git directory), that directory and the repository's
// common directory: commits and index updates write there.
func worktreeGitDirs(dir string) []string {
	b, err := os.ReadFile(filepath.Join(dir, ".git"))
	if err != nil {
		return nil
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return nil
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(dir, gitdir)
	}
	out := []string{filepath.Clean(gitdir)}
	if c, err := os.ReadFile(filepath.Join(gitdir, "commondir")); err == nil {
		common := strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitdir, common)
		}
		out = append(out, filepath.Clean(common))
	}
	return out
}

// DefaultWritable returns the tool caches commands need to write so that
// common toolchains work in the sandbox: Go's build and module caches,
// npm's, pip's and cargo's, from the environment when it names them.
// getenv is os.Getenv in production.
func DefaultWritable(getenv func(string) string) []string {
	home := getenv("HOME")
	cache := getenv("XDG_CACHE_HOME")
	if cache == "" && home != "" {
		cache = filepath.Join(home, ".cache")
	}
	gopath := getenv("GOPATH")
	if gopath == "" && home != "" {
		gopath = filepath.Join(home, "go")
	}
	gopath, _, _ = strings.Cut(gopath, string(filepath.ListSeparator))
	cargo := getenv("CARGO_HOME")
	if cargo == "" && home != "" {
		cargo = filepath.Join(home, ".cargo")
	}
	pick := func(env, fallback string) string {
		if v := getenv(env); v != "" {
			return v
		}
		return fallback
	}
	var out []string
	for _, p := range []string{
		pick("GOCACHE", join(cache, "go-build")),
		pick("GOMODCACHE", join(gopath, "pkg", "mod")),
		pick("npm_config_cache", join(home, ".npm")),
		pick("PIP_CACHE_DIR", join(cache, "pip")),
		join(cargo, "registry"),
		join(cargo, "git"),
	} {
		if p != "" && filepath.IsAbs(p) {
			out = append(out, filepath.Clean(p))
		}
	}
	return out
}

// join is filepath.Join that keeps "" when the base is unknown.
func join(base string, elem ...string) string {
	if base == "" {
		return ""
	}
	return filepath.Join(append([]string{base}, elem...)...)
}
