package worktree

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// maxListed caps the commits and files a Changes lists; the counts say
// how many there are in all.
const maxListed = 100

// Changes is the work an agent left in its worktree: commits ahead of the
// base and files that differ, committed or not.
type Changes struct {
	// Head is the commit checked out in the tree at the end.
	Head string `json:"head"`
	// BranchTip is the tree's branch's commit ("" when the branch is gone);
	// it differs from Head when the agent checked out something else.
	BranchTip string `json:"branch_tip,omitempty"`
	// CommitCount counts the commits reachable from Head or BranchTip but
	// not from the base; Commits lists the newest maxListed of them.
	CommitCount int      `json:"commit_count"`
	Commits     []Commit `json:"commits,omitempty"`
	// Committed are the files the commits changed (base to Head and base
	// to BranchTip), sorted; Uncommitted are the files that differ from
	// Head in the tree, untracked files included and ignored ones not.
	Committed   []string     `json:"committed,omitempty"`
	Uncommitted []FileStatus `json:"uncommitted,omitempty"`
	// Omitted counts files not listed in Committed or Uncommitted.
	Omitted int `json:"omitted,omitempty"`
}

// Commit is one commit in a worktree's branch.
type Commit struct {
	Hash    string `json:"hash"`
	Subject string `json:"subject"`
}

// FileStatus is a file with uncommitted changes.
type FileStatus struct {
	Path string `json:"path"`
	// Status is one of untracked, modified, added, deleted, unmerged,
	// type changed.
	Status string `json:"status"`
}

// Dirty reports whether the tree has uncommitted changes.
func (c *Changes) Dirty() bool { return len(c.Uncommitted) > 0 }

// status is one `git status --porcelain=v2 --branch -z` reading.
type status struct {
	oid    string // HEAD's commit; "" before the first commit
	branch string // HEAD's branch; "" when detached
	files  []FileStatus
}

// parseStatus reads porcelain v2 output with -z. Entries: "# branch.oid X",
// "# branch.head X", "1 XY … path", "2 XY … path" followed by the
// original path as its own field, "u XY … path", "? path", "! path".
func parseStatus(out string) (status, error) {
	var st status
	fields := strings.Split(out, "\x00")
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if f == "" {
			continue
		}
		switch f[0] {
		case '#':
			if v, ok := strings.CutPrefix(f, "# branch.oid "); ok && v != "(initial)" {
				st.oid = v
			}
			if v, ok := strings.CutPrefix(f, "# branch.head "); ok && v != "(detached)" {
				st.branch = v
			}
		case '?':
			st.files = append(st.files, FileStatus{Path: strings.TrimPrefix(f, "? "), Status: "untracked"})
		case '!':
			// ignored files are not work
		case '1', '2', 'u':
			n := map[byte]int{'1': 9, '2': 10, 'u': 11}[f[0]]
			parts := strings.SplitN(f, " ", n)
			if len(parts) != n || len(parts[1]) != 2 {
				return st, fmt.Errorf("parse git status: malformed entry %q", f)
			}
			kind := "unmerged"
			if f[0] != 'u' {
				kind = statusWord(parts[1])
			}
			st.files = append(st.files, FileStatus{Path: parts[n-1], Status: kind})
			if f[0] == '2' {
				i++ // the original path of a rename or copy
			}
		default:
			return st, fmt.Errorf("parse git status: unknown entry %q", f)
		}
	}
	return st, nil
}

// statusWord names an XY status code of an ordinary changed entry.
func statusWord(xy string) string {
	switch {
	case strings.ContainsRune(xy, 'D'):
		return "deleted"
	case strings.ContainsRune(xy, 'A'):
		return "added"
	case strings.ContainsRune(xy, 'T'):
		return "type changed"
	default:
		return "modified"
	}
}

// inspect reads what the agent left in t's tree. changed is true when the
// tree is dirty (untracked, not ignored files included) or HEAD or the
// branch moved from the base. Any doubt — the directory is no longer a
// worktree of this repository, git fails — is an error, and the caller
// keeps the tree.
func (m *Manager) inspect(ctx context.Context, t *treeRef) (c Changes, changed bool, err error) {
	if err := checkGitFile(t.path, t.commonDir); err != nil {
		return c, true, err
	}
	out, err := m.git.run(ctx, t.path, "status", "--porcelain=v2", "--branch", "-z",
		"--untracked-files=all", "--ignore-submodules=none", "--no-renames")
	if err != nil {
		return c, true, fmt.Errorf("inspect worktree %s: %w", t.path, err)
	}
	st, err := parseStatus(out)
	if err != nil {
		return c, true, fmt.Errorf("inspect worktree %s: %w", t.path, err)
	}
	c.Head = st.oid
	c.BranchTip = st.oid
	if st.branch != t.branch {
		if c.BranchTip, err = m.branchTip(ctx, t.path, t.branch); err != nil {
			return c, true, fmt.Errorf("inspect worktree %s: %w", t.path, err)
		}
	}
	slices.SortFunc(st.files, func(a, b FileStatus) int { return strings.Compare(a.Path, b.Path) })
	if len(st.files) > maxListed {
		c.Omitted += len(st.files) - maxListed
		st.files = st.files[:maxListed]
	}
	c.Uncommitted = st.files
	moved := c.Head != t.base || (c.BranchTip != "" && c.BranchTip != t.base)
	if !moved {
		return c, len(c.Uncommitted) > 0, nil
	}
	if err := m.commitsSince(ctx, t, &c); err != nil {
		return c, true, fmt.Errorf("inspect worktree %s: %w", t.path, err)
	}
	return c, true, nil
}

// branchTip is the commit of refs/heads/branch, "" when there is none.
func (m *Manager) branchTip(ctx context.Context, dir, branch string) (string, error) {
	return m.commitOf(ctx, dir, "refs/heads/"+branch)
}

// commitsSince fills c's commits and committed files: what Head and the
// branch tip hold that the base does not.
func (m *Manager) commitsSince(ctx context.Context, t *treeRef, c *Changes) error {
	tips := []string{}
	for _, tip := range []string{c.Head, c.BranchTip} {
		if tip != "" && tip != t.base && !slices.Contains(tips, tip) {
			tips = append(tips, tip)
		}
	}
	if len(tips) == 0 {
		return nil
	}
	revs := append(append([]string{}, tips...), "^"+t.base)
	out, err := m.git.run(ctx, t.path, append([]string{"rev-list", "--count"}, revs...)...)
	if err != nil {
		return err
	}
	if c.CommitCount, err = strconv.Atoi(strings.TrimSpace(out)); err != nil {
		return fmt.Errorf("count commits: %w", err)
	}
	out, err = m.git.run(ctx, t.path, append([]string{"log", "--no-color", "--format=%H %s", "-n", strconv.Itoa(maxListed)}, revs...)...)
	if err != nil {
		return err
	}
	for _, l := range lines(out) {
		h, s, _ := strings.Cut(l, " ")
		c.Commits = append(c.Commits, Commit{Hash: h, Subject: s})
	}
	var files []string
	for _, tip := range tips {
		out, err := m.git.run(ctx, t.path, "diff", "--name-only", "-z", "--no-renames", t.base, tip, "--")
		if err != nil {
			return err
		}
		files = append(files, nulFields(out)...)
	}
	slices.Sort(files)
	files = slices.Compact(files)
	if len(files) > maxListed {
		c.Omitted += len(files) - maxListed
		files = files[:maxListed]
	}
	c.Committed = files
	return nil
}

// checkGitFile makes sure dir is still a linked worktree of the repository
// at commonDir: its .git file points into commonDir/worktrees. Without
// this check, git run in a directory whose .git file was deleted would
// answer for the enclosing main working tree.
func checkGitFile(dir, commonDir string) error {
	b, err := os.ReadFile(filepath.Join(dir, ".git"))
	if err != nil {
		return fmt.Errorf("%s is no longer a git worktree: %w", dir, err)
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok {
		return fmt.Errorf("%s is no longer a git worktree: its .git file is not a gitdir link", dir)
	}
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(dir, gitdir)
	}
	if filepath.Dir(canonical(gitdir)) != filepath.Join(commonDir, "worktrees") {
		return fmt.Errorf("%s is no longer a worktree of %s: its .git file points to %s", dir, commonDir, gitdir)
	}
	return nil
}
