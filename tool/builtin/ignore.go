package builtin

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// This file decides which paths Grep's Go search skips, with the same
// rules and precedence ripgrep applies when it is run the way grepRipgrep
// runs it (--no-require-git, and global excludes, .git/info/exclude and
// .ignore/.rgignore files turned off):
//
//  1. --glob overrides: the last glob that matches decides (a plain glob
//     includes, "!glob" excludes); when include globs exist, files that
//     match none of them are skipped. A decision here is final.
//  2. .gitignore files, nearest directory first; within a file the last
//     matching line decides ("!" re-includes). Parent directories above
//     the search root count too, up to the first one that holds a .git.
//  3. The type filter: a file must match one of the type's globs.
//  4. Hidden names (starting with ".") are skipped unless an earlier step
//     explicitly included them.

type matchResult int

const (
	matchNone matchResult = iota
	matchIgnore
	matchInclude
)

// ignorePattern is one line of a .gitignore file, or one --glob.
type ignorePattern struct {
	glob    string // doublestar pattern, matched against a slash path
	negated bool   // "!" prefix
	dirOnly bool   // trailing "/"
}

// parseIgnoreLine turns a .gitignore line into a pattern. ok is false for
// blank lines, comments and patterns that are not valid globs.
func parseIgnoreLine(line string) (ignorePattern, bool) {
	var p ignorePattern
	line = strings.TrimSuffix(line, "\r")
	if strings.HasPrefix(line, "#") {
		return p, false
	}
	if !strings.HasSuffix(line, "\\ ") {
		line = strings.TrimRight(line, " \t")
	}
	if line == "" {
		return p, false
	}
	if strings.HasPrefix(line, "!") {
		p.negated = true
		line = line[1:]
	}
	anchored := false
	if strings.HasPrefix(line, "/") {
		anchored = true
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		p.dirOnly = true
		line = strings.TrimSuffix(line, "/")
	}
	if line == "" {
		return p, false
	}
	if !anchored && !strings.Contains(line, "/") && !strings.HasPrefix(line, "**/") {
		line = "**/" + line
	}
	if strings.HasSuffix(line, "/**") {
		line += "/*" // "dir/**" matches what is inside dir, not dir itself
	}
	if !doublestar.ValidatePattern(line) {
		return p, false
	}
	p.glob = line
	return p, true
}

// matchPatterns returns the decision of the last pattern matching rel.
// include reports what a non-negated match means: for .gitignore lines a
// match ignores, for --glob overrides it includes.
func matchPatterns(ps []ignorePattern, rel string, isDir bool, plainMeansIgnore bool) matchResult {
	for i := len(ps) - 1; i >= 0; i-- {
		p := ps[i]
		if p.dirOnly && !isDir {
			continue
		}
		if ok, _ := doublestar.Match(p.glob, rel); !ok {
			continue
		}
		if p.negated == plainMeansIgnore {
			return matchInclude
		}
		return matchIgnore
	}
	return matchNone
}

// ignoreDir is a directory on the path from the filesystem root to the
// entry being judged, with its .gitignore patterns.
type ignoreDir struct {
	dir      string
	patterns []ignorePattern
	hasGit   bool
	parent   *ignoreDir
}

// loadIgnoreDir reads dir/.gitignore (if any) and notes whether dir holds
// a .git. It returns parent unchanged when neither matters.
func loadIgnoreDir(parent *ignoreDir, dir string, hasGitignore, hasGit bool) *ignoreDir {
	if !hasGitignore && !hasGit {
		return parent
	}
	n := &ignoreDir{dir: dir, hasGit: hasGit, parent: parent}
	if hasGitignore {
		if data, err := os.ReadFile(filepath.Join(dir, ".gitignore")); err == nil {
			for _, line := range strings.Split(string(data), "\n") {
				if p, ok := parseIgnoreLine(line); ok {
					n.patterns = append(n.patterns, p)
				}
			}
		}
	}
	return n
}

// parentIgnores builds the chain for the directories above root, from
// the filesystem root down to root's parent.
func parentIgnores(root string) *ignoreDir {
	var dirs []string
	for d := filepath.Dir(root); ; d = filepath.Dir(d) {
		dirs = append(dirs, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	var chain *ignoreDir
	for i := len(dirs) - 1; i >= 0; i-- {
		d := dirs[i]
		_, gi := os.Stat(filepath.Join(d, ".gitignore"))
		_, git := os.Stat(filepath.Join(d, ".git"))
		chain = loadIgnoreDir(chain, d, gi == nil, git == nil)
	}
	return chain
}

// match judges the absolute path against the .gitignore chain: the
// nearest file with a matching line decides; files above the nearest
// directory holding a .git do not count.
func (n *ignoreDir) match(abs string, isDir bool) matchResult {
	for ; n != nil; n = n.parent {
		if len(n.patterns) > 0 {
			if rel, ok := below(n.dir, abs); ok {
				if m := matchPatterns(n.patterns, rel, isDir, true); m != matchNone {
					return m
				}
			}
		}
		if n.hasGit {
			return matchNone
		}
	}
	return matchNone
}

// below returns abs relative to dir, with forward slashes, if abs lies
// below dir. Both are clean absolute paths.
func below(dir, abs string) (string, bool) {
	if dir == string(filepath.Separator) {
		return filepath.ToSlash(abs[1:]), abs != dir
	}
	if len(abs) <= len(dir) || abs[:len(dir)] != dir || abs[len(dir)] != filepath.Separator {
		return "", false
	}
	return filepath.ToSlash(abs[len(dir)+1:]), true
}

// grepFilter holds the --glob overrides and type globs of one search.
type grepFilter struct {
	overrides  []ignorePattern
	includes   int // overrides that include
	typeGlobs  []string
	hasTypeSel bool
}

// newGrepFilter parses the user's globs (already validated) and the type
// globs. ".git" is always excluded, as a final override.
func newGrepFilter(globs, typeGlobs []string) grepFilter {
	var f grepFilter
	for _, g := range append(append([]string(nil), globs...), "!.git") {
		p, ok := parseIgnoreLine(g)
		if !ok {
			continue
		}
		if !p.negated {
			f.includes++
		}
		f.overrides = append(f.overrides, p)
	}
	f.typeGlobs = typeGlobs
	f.hasTypeSel = len(typeGlobs) > 0
	return f
}

// skip decides whether the walk leaves out an entry. rel is the slash path
// relative to the search root, abs its absolute path.
func (f *grepFilter) skip(chain *ignoreDir, rel, abs, name string, isDir bool) bool {
	switch matchPatterns(f.overrides, rel, isDir, false) {
	case matchIgnore:
		return true
	case matchInclude:
		return false
	default:
		if f.includes > 0 && !isDir {
			return true
		}
	}
	included := false
	switch chain.match(abs, isDir) {
	case matchIgnore:
		return true
	case matchInclude:
		included = true
	}
	if f.hasTypeSel && !isDir {
		ok := false
		for _, g := range f.typeGlobs {
			if m, _ := doublestar.Match(g, name); m {
				ok = true
				break
			}
		}
		if !ok {
			return true
		}
		included = true
	}
	return !included && strings.HasPrefix(name, ".")
}
