package permission

import "sync"

// DirCache remembers how working directories resolve (their symlinks),
// for every Checker of a session that shares it: each check resolves
// the agent's working directories (Checker.env), one lstat and one
// allocation per path component, and they are the same directories for
// every check. Request paths are still resolved on every check.
//
// What it changes: a working directory keeps the identity it resolved
// to the first time. That is the stricter reading — a working directory
// that is later replaced by a symlink does not carry the permission of
// its working directory to where the link points; paths there are
// checked against the directory as it was.
//
// The zero value is an empty cache. It is safe for concurrent use and
// must not be copied after first use.
type DirCache struct {
	mu sync.Mutex
	m  map[dirKey][2]string // lexical, real
}

// dirKey is one resolution's input.
type dirKey struct{ dir, cwd, home string }

// maxDirCache bounds a DirCache: a session has few working directories
// (the cwd, additional directories, worktrees); past this it starts over.
const maxDirCache = 256

// resolve is resolvePath(dir, cwd, home), remembered; a nil cache
// resolves every time.
func (c *DirCache) resolve(dir, cwd, home string) (lexical, real string) {
	if c == nil {
		return resolvePath(dir, cwd, home)
	}
	k := dirKey{dir, cwd, home}
	c.mu.Lock()
	v, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return v[0], v[1]
	}
	lexical, real = resolvePath(dir, cwd, home)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxDirCache {
		c.m = make(map[dirKey][2]string, 4)
	}
	c.m[k] = [2]string{lexical, real}
	c.mu.Unlock()
	return lexical, real
}
