package worktree

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// resolveBase returns the commit a new tree starts from, what it was read
// from, and warnings.
func (m bases) resolveBase(ctx context.Context, r *repo, w where, b Base) (commit, ref string, warnings []string, err error) {
	if b == BaseDefault {
		return m.defaultBase(ctx, r)
	}
	if w.head == "" {
		return "", "", nil, fmt.Errorf("the repository at %s has no commits yet: commit once before starting agents in worktrees", w.toplevel)
	}
	return w.head, "HEAD", nil, nil
}

// defaultBase is the default branch, fresh: with a remote named origin,
// origin's default branch fetched now (the last fetched one, with a
// warning, when the fetch fails); without one, the local branch named by
// init.defaultBranch, main or master.
func (m bases) defaultBase(ctx context.Context, r *repo) (commit, ref string, warnings []string, err error) {
	out, err := m.git.run(ctx, r.root, "remote")
	if err != nil {
		return "", "", nil, fmt.Errorf("list remotes: %w", err)
	}
	if !slices.Contains(lines(out), "origin") {
		return m.localDefault(ctx, r)
	}
	branch, err := m.originDefaultBranch(ctx, r)
	if err != nil {
		return "", "", nil, err
	}
	ref = "origin/" + branch
	// Concurrent spawns share one fetch, which therefore does not end with
	// the first caller's context.
	ch := r.fetches.DoChan(branch, func() (any, error) {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.cfg.FetchTimeout)
		defer cancel()
		_, err := m.git.run(fctx, r.root, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "origin",
			"+refs/heads/"+branch+":refs/remotes/origin/"+branch)
		return nil, err
	})
	select {
	case v := <-ch:
		if v.Err != nil {
			warnings = append(warnings, fmt.Sprintf("could not fetch %s; the worktree starts from the last fetched %s: %v", ref, ref, v.Err))
		}
	case <-ctx.Done():
		return "", "", nil, ctx.Err()
	}
	commit, err = m.commitOf(ctx, r.root, "refs/remotes/"+ref)
	if err != nil {
		return "", "", nil, err
	}
	if commit == "" {
		return "", "", nil, fmt.Errorf("no commit for %s: the fetch failed and it was never fetched before", ref)
	}
	return commit, ref, warnings, nil
}

// originDefaultBranch names origin's default branch: from
// refs/remotes/origin/HEAD, or else by asking the remote.
func (m bases) originDefaultBranch(ctx context.Context, r *repo) (string, error) {
	out, err := m.git.run(ctx, r.root, "symbolic-ref", "-q", "refs/remotes/origin/HEAD")
	if b, ok := strings.CutPrefix(strings.TrimSpace(out), "refs/remotes/origin/"); err == nil && ok && b != "" {
		return b, nil
	}
	lctx, cancel := context.WithTimeout(ctx, m.cfg.FetchTimeout)
	defer cancel()
	out, err = m.git.run(lctx, r.root, "ls-remote", "--symref", "origin", "HEAD")
	if err != nil {
		return "", fmt.Errorf("find origin's default branch (set it with `git remote set-head origin --auto`): %w", err)
	}
	for _, l := range lines(out) {
		target, name, _ := strings.Cut(l, "\t")
		if b, ok := strings.CutPrefix(target, "ref: refs/heads/"); ok && name == "HEAD" {
			return b, nil
		}
	}
	return "", errors.New("find origin's default branch: the remote does not say; set it with `git remote set-head origin BRANCH`")
}

// localDefault is the local default branch of a repository without a
// remote.
func (m bases) localDefault(ctx context.Context, r *repo) (commit, ref string, warnings []string, err error) {
	candidates := []string{}
	if out, err := m.git.run(ctx, r.root, "config", "--get", "init.defaultBranch"); err == nil && strings.TrimSpace(out) != "" {
		candidates = append(candidates, strings.TrimSpace(out))
	}
	candidates = append(candidates, "main", "master")
	for _, b := range candidates {
		c, err := m.commitOf(ctx, r.root, "refs/heads/"+b)
		if err != nil {
			return "", "", nil, err
		}
		if c != "" {
			return c, b, nil, nil
		}
	}
	return "", "", nil, fmt.Errorf("no default branch in %s: no remote named origin and no branch named %s", r.root, strings.Join(candidates, " or "))
}

// commitOf is the commit ref points at, "" when there is no such ref.
func (m *Manager) commitOf(ctx context.Context, dir, ref string) (string, error) {
	out, err := m.git.run(ctx, dir, "rev-parse", "-q", "--verify", ref+"^{commit}")
	var ge *GitError
	if errors.As(err, &ge) && ge.Code == 1 {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", ref, err)
	}
	return strings.TrimSpace(out), nil
}

// exactBase is the tree's base when the caller names the commit (a remote
// agent starts at its launcher's commit): it must be a commit of r.
func (m bases) exactBase(ctx context.Context, r *repo, want string) (commit, ref string, warnings []string, err error) {
	if !IsObjectID(want) {
		return "", "", nil, fmt.Errorf("base commit %q is not a full commit id", want)
	}
	commit, err = m.commitOf(ctx, r.root, want)
	if err != nil {
		return "", "", nil, err
	}
	if commit == "" {
		return "", "", nil, fmt.Errorf("commit %s is not in the repository at %s", want, r.root)
	}
	return commit, want, nil, nil
}

// IsObjectID reports whether s is a full SHA-1 or SHA-256 object id.
func IsObjectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
