// Package safefs creates cadre's own directories and files below a root
// (a repository's top level, the state directory) without following a
// symbolic link in any component (issue 23, S-10.4): a checked-in link
// such as .cadre/worktrees -> ~/.claude/agents must not redirect what
// cadre writes. A link is an error that names it; the root itself may be
// a link (a home directory often is), what is below it may not.
package safefs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// SymlinkError is a path component that is a symbolic link where cadre
// writes its own files.
type SymlinkError struct {
	// Path is the link.
	Path string
	// Target is what it points to ("" if unreadable).
	Target string
}

// Error names the link and where it points.
func (e *SymlinkError) Error() string {
	to := ""
	if e.Target != "" {
		to = " (to " + e.Target + ")"
	}
	return fmt.Sprintf("%s is a symbolic link%s: cadre does not follow links where it writes its own files; remove it or make it a directory", e.Path, to)
}

// components returns the paths from root (exclusive) down to path
// (inclusive), or an error if path is not below root.
func components(root, path string) ([]string, error) {
	root, path = filepath.Clean(root), filepath.Clean(path)
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return nil, fmt.Errorf("%s is not inside %s", path, root)
	}
	if rel == "." {
		return nil, nil
	}
	var out []string
	cur := root
	for _, c := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, c)
		out = append(out, cur)
	}
	return out, nil
}

// Check verifies that no existing component of path below root is a
// symbolic link (components that do not exist yet are fine).
func Check(root, path string) error {
	comps, err := components(root, path)
	if err != nil {
		return err
	}
	for _, c := range comps {
		st, err := os.Lstat(c)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("check %s: %w", c, err)
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			return symlinkError(c)
		}
	}
	return nil
}

func symlinkError(path string) error {
	target, _ := os.Readlink(path)
	return &SymlinkError{Path: path, Target: target}
}

// MkdirAll creates dir and every missing directory between root and it,
// one component at a time, refusing a component that is a symbolic link
// or not a directory. root must exist.
func MkdirAll(root, dir string, perm fs.FileMode) error {
	comps, err := components(root, dir)
	if err != nil {
		return err
	}
	for _, c := range comps {
		err := os.Mkdir(c, perm)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create %s: %w", c, err)
		}
		st, err := os.Lstat(c)
		if err != nil {
			return fmt.Errorf("create %s: %w", c, err)
		}
		switch {
		case st.Mode()&fs.ModeSymlink != 0:
			return symlinkError(c)
		case !st.IsDir():
			return fmt.Errorf("create %s: it exists and is not a directory", c)
		}
	}
	return nil
}

// OpenFile opens path (below root) like os.OpenFile after creating its
// directory with MkdirAll; the file itself is opened without following a
// link (O_NOFOLLOW), so a link there is an error naming it too.
func OpenFile(root, path string, flag int, perm fs.FileMode) (*os.File, error) {
	if err := MkdirAll(root, filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW, perm)
	if err != nil {
		if st, lerr := os.Lstat(path); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
			return nil, symlinkError(path)
		}
		return nil, err
	}
	return f, nil
}

// OpenNoFollow opens path like os.OpenFile without following a link at
// path itself: a link there is a *SymlinkError naming it. It is for
// cadre's files below a state directory it owns (transcripts, journals),
// where the directories are its own but the last component must not
// redirect a write.
func OpenNoFollow(path string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW, perm)
	if err != nil {
		if st, lerr := os.Lstat(path); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
			return nil, symlinkError(path)
		}
		return nil, err
	}
	return f, nil
}

// WriteFileAtomic writes data to path (below root) through a temporary
// file in the same directory renamed over it, after creating the
// directory with MkdirAll. rename replaces a link at path rather than
// writing through it.
func WriteFileAtomic(root, path string, data []byte, perm fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := MkdirAll(root, dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), perm)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// protectedHome are directories and files below a home directory that
// hold credentials: nothing cadre loads as configuration (agents,
// skills, plugins) is ever read from them, whatever link leads there.
var protectedHome = []string{
	".ssh", ".aws", ".gnupg", ".kube", ".docker", ".azure", ".netrc", ".git-credentials",
	".password-store", ".pki", filepath.Join(".config", "gcloud"), filepath.Join(".config", "gh"),
	filepath.Join(".local", "share", "keyrings"),
}

// protectedSystem are system places never loaded from for the same
// reason (and because reading a device or /proc file can block).
var protectedSystem = []string{"/etc", "/proc", "/sys", "/dev", "/root", "/var/lib", "/run"}

// Protected reports whether path (with links resolved) is, or is inside,
// a directory that holds credentials or system state: ~/.ssh, ~/.aws,
// ~/.gnupg and the like under home, /etc, /proc, /sys, /dev and the like.
func Protected(home, path string) bool {
	path = filepath.Clean(path)
	in := func(root string) bool {
		return path == root || strings.HasPrefix(path, root+string(filepath.Separator))
	}
	if home != "" {
		for _, p := range protectedHome {
			if in(filepath.Join(filepath.Clean(home), p)) {
				return true
			}
		}
	}
	for _, p := range protectedSystem {
		if in(p) {
			return true
		}
	}
	return false
}
