package permission

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/bmatcuk/doublestar/v4"
)

// Masks are what the sandbox does with the paths deny rules protect, for
// one agent at one moment.
type Masks struct {
	// Hidden are the existing paths Read deny rules cover: the sandbox
	// shows a directory empty and a file unreadable.
	Hidden []string
	// ReadOnly are the existing paths Edit deny rules cover: the sandbox
	// mounts them read-only.
	ReadOnly []string
}

// MaxMaskWalk bounds the directory entries SandboxMasks visits for one
// call; a rule like `Read(**/.env)` over a larger tree is an error rather
// than a mask with holes.
const MaxMaskWalk = 200_000

// ErrMaskWalk is wrapped when finding the paths a rule covers would visit
// more than MaxMaskWalk entries.
var ErrMaskWalk = errors.New("too many files to find every path the deny rules cover")

// SandboxMasks returns the paths the sandbox must hide (Read deny rules)
// and make read-only (Edit deny rules) for an agent whose working
// directories are cwd and dirs. A rule that names a path or a whole
// directory costs one stat; a pattern (`**/.env`) is matched against the
// tree below its fixed part, so the masks hold for the files present when
// the command starts. The Bash tool calls it before every sandboxed
// command.
func (c *Checker) SandboxMasks(cwd string, dirs []string) (Masks, error) {
	e := c.env(Request{Cwd: cwd, Dirs: dirs})
	budget := MaxMaskWalk
	var m Masks
	for _, r := range c.cfg.Rules {
		if r.Behavior != Deny || r.Content == "" {
			continue
		}
		t := canonicalTool(r.Tool)
		var dst *[]string
		switch {
		case isReadTool(t):
			dst = &m.Hidden
		case isEditTool(t):
			dst = &m.ReadOnly
		default:
			continue
		}
		for _, pat := range c.patternsFor(r, e) {
			found, err := coveredPaths(pat, &budget)
			if err != nil {
				return Masks{}, fmt.Errorf("sandbox masks for rule %s: %w", r.Label(), err)
			}
			*dst = append(*dst, found...)
		}
	}
	m.Hidden = outermost(m.Hidden)
	m.ReadOnly = outermost(m.ReadOnly)
	return m, nil
}

// coveredPaths returns the existing paths a rule pattern covers, the
// outermost of each covered tree. budget counts down the entries walked.
func coveredPaths(pat string, budget *int) ([]string, error) {
	fixed, rest := splitPattern(pat)
	st, err := os.Lstat(fixed)
	if err != nil {
		return nil, nil
	}
	if rest == "" || rest == "/**" {
		return withReal(fixed), nil
	}
	if !st.IsDir() {
		return nil, nil
	}
	var out []string
	err = filepath.WalkDir(fixed, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			// An unreadable directory hides nothing from cadre that the
			// command could read either.
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if *budget--; *budget < 0 {
			return fmt.Errorf("%w (more than %d entries under %s)", ErrMaskWalk, MaxMaskWalk, fixed)
		}
		if ok, _ := doublestar.Match(pat, p); ok {
			out = append(out, withReal(p)...)
			if d.IsDir() {
				return fs.SkipDir
			}
		}
		return nil
	})
	return out, err
}

// withReal returns p and, when it differs, p with symlinks resolved: a
// mount covers the place a path leads to.
func withReal(p string) []string {
	if r := evalExisting(p); r != p {
		return []string{p, r}
	}
	return []string{p}
}

// outermost sorts paths and drops those inside another one.
func outermost(paths []string) []string {
	slices.Sort(paths)
	paths = slices.Compact(paths)
	var out []string
	for _, p := range paths {
		if !slices.ContainsFunc(out, func(o string) bool { return inside(p, o) }) {
			out = append(out, p)
		}
	}
	return out
}
