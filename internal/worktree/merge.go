package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Strategy says how Merge brings a branch back.
type Strategy string

// The merge strategies.
const (
	// StrategyMerge runs `git merge` (a fast-forward when possible).
	StrategyMerge Strategy = "merge"
	// StrategyCherryPick applies the branch's commits one by one on top of
	// the parent's HEAD (merge commits on the branch are skipped).
	StrategyCherryPick Strategy = "cherry-pick"
)

// MergeRequest asks to bring a kept worktree's work into the parent's tree.
type MergeRequest struct {
	// Dir is the tree to merge into: the parent's working directory.
	Dir string
	// AgentID names the kept tree (its record gives the branch); or Branch
	// names the branch to merge. One of the two.
	AgentID string
	Branch  string
	// Strategy is StrategyMerge when "".
	Strategy Strategy
	// LeaveUncommitted merges only what is committed on the branch. By
	// default the tree's uncommitted changes are first committed on its
	// branch (`git add -A`, without running commit hooks), since most
	// agents edit files without committing.
	LeaveUncommitted bool
	// Remove removes the tree and its branch after a successful merge, if
	// nothing is left in it that the merge did not bring.
	Remove bool
}

// MergeStatus is how a merge ended.
type MergeStatus string

// The outcomes of Merge.
const (
	// MergeDone: the work is in the parent's tree.
	MergeDone MergeStatus = "merged"
	// MergeUpToDate: the parent's HEAD already has every commit.
	MergeUpToDate MergeStatus = "up-to-date"
	// MergeConflict: the merge stopped on conflicts and was aborted; the
	// parent's tree is as it was before.
	MergeConflict MergeStatus = "conflict"
)

// MergeResult is what Merge did.
type MergeResult struct {
	Status MergeStatus `json:"status"`
	Branch string      `json:"branch"`
	// Path is the kept tree ("" when only a branch was given).
	Path string `json:"path,omitempty"`
	// Commits are the commits the merge brought (or would have brought).
	Commits []Commit `json:"commits,omitempty"`
	// Committed is the commit made of the tree's uncommitted changes.
	Committed *Commit `json:"committed,omitempty"`
	// Head is the parent's HEAD after the merge.
	Head string `json:"head"`
	// Conflicts are the files in conflict; ConflictCommit, for a
	// cherry-pick, the commit that did not apply.
	Conflicts      []string `json:"conflicts,omitempty"`
	ConflictCommit *Commit  `json:"conflict_commit,omitempty"`
	// Uncommitted are changes left in the tree (LeaveUncommitted).
	Uncommitted []FileStatus `json:"uncommitted,omitempty"`
	// Removed: the tree and branch were removed (MergeRequest.Remove).
	Removed bool `json:"removed,omitempty"`
	// NotRemoved says why Remove did not remove the tree.
	NotRemoved string `json:"not_removed,omitempty"`
	// Identity, when set, says that no git identity was configured and
	// names the one cadre committed as (FallbackName, FallbackEmail).
	Identity string `json:"identity,omitempty"`
}

// The identity cadre commits as where git has none configured (no
// user.name or user.email, no GIT_AUTHOR_*/GIT_COMMITTER_*, no e-mail
// git could work out).
const (
	FallbackName  = "cadre"
	FallbackEmail = "cadre@localhost"
)

// committer returns the git to make commits with in dir: m.git when git
// knows who commits, else m.git with cadre's identity filling what is
// missing (the user's name kept if only the e-mail is missing, and so on),
// and a sentence saying so.
func (m merger) committer(ctx context.Context, dir string) (git, string, error) {
	_, aerr := m.git.run(ctx, dir, "var", "GIT_AUTHOR_IDENT")
	_, cerr := m.git.run(ctx, dir, "var", "GIT_COMMITTER_IDENT")
	if aerr == nil && cerr == nil {
		return m.git, "", nil
	}
	if err := ctx.Err(); err != nil {
		return git{}, "", err
	}
	get := func(key, fallback string) string {
		out, err := m.git.run(ctx, dir, "config", "--get", key)
		if v := strings.TrimSpace(out); err == nil && v != "" {
			return v
		}
		return fallback
	}
	name, email := get("user.name", FallbackName), get("user.email", FallbackEmail)
	var extra []string
	if aerr != nil {
		extra = append(extra, "GIT_AUTHOR_NAME="+name, "GIT_AUTHOR_EMAIL="+email)
	}
	if cerr != nil {
		extra = append(extra, "GIT_COMMITTER_NAME="+name, "GIT_COMMITTER_EMAIL="+email)
	}
	g := m.git
	g.env = append(slices.Clip(g.env), extra...)
	return g, fmt.Sprintf("no git identity is configured (user.name, user.email): committed as %s <%s>; set one with git config --global user.name/user.email", name, email), nil
}

// Merge brings a kept worktree's branch into the parent's tree. Conflicts
// are a result, not an error: the merge is aborted and the parent's tree
// left as it was. Errors are problems that stop it from starting: no such
// tree or branch, its agent still running, the parent's tree with
// uncommitted changes or an operation in progress.
func (m *Manager) Merge(ctx context.Context, req MergeRequest) (MergeResult, error) {
	var res MergeResult
	mg := merger{m}
	if req.Strategy == "" {
		req.Strategy = StrategyMerge
	}
	if req.Strategy != StrategyMerge && req.Strategy != StrategyCherryPick {
		return res, fmt.Errorf("merge worktree: unknown strategy %q: use %q or %q", req.Strategy, StrategyMerge, StrategyCherryPick)
	}
	r, w, err := m.repoOf(ctx, req.Dir)
	if err != nil {
		return res, fmt.Errorf("merge worktree: %w", err)
	}
	src, err := mg.mergeSource(ctx, r, req)
	if err != nil {
		return res, fmt.Errorf("merge worktree: %w", err)
	}
	res.Branch, res.Path = src.branch, src.path
	if canonical(w.toplevel) == src.path {
		return res, fmt.Errorf("merge worktree: %s is the tree being merged; run the merge from the tree to merge into", req.Dir)
	}
	unlock, err := r.lock(ctx)
	if err != nil {
		return res, fmt.Errorf("merge worktree: %w", err)
	}
	defer unlock()
	if err := mg.mergeable(ctx, w.toplevel); err != nil {
		return res, fmt.Errorf("merge %s into %s: %w", src.branch, w.toplevel, err)
	}
	// Commits need an identity: without one configured, cadre's own
	// stands in, and the result says so.
	g, identity, err := mg.committer(ctx, w.toplevel)
	if err != nil {
		return res, fmt.Errorf("merge %s: %w", src.branch, err)
	}
	if src.path != "" {
		if err := mg.settleTree(ctx, g, src, req.LeaveUncommitted, &res); err != nil {
			return res, fmt.Errorf("merge %s: %w", src.branch, err)
		}
	}
	if err := mg.bring(ctx, g, w.toplevel, src, req.Strategy, &res); err != nil {
		return res, fmt.Errorf("merge %s into %s: %w", src.branch, w.toplevel, err)
	}
	if res.Committed != nil || res.Status == MergeDone {
		res.Identity = identity
	}
	if req.Remove && res.Status != MergeConflict {
		mg.removeMerged(ctx, r, src, &res)
	}
	return res, nil
}

// mergeSrc is the branch to merge and the tree that has it checked out.
type mergeSrc struct {
	branch, path, agent string
	tip                 string
}

// mergeSource finds the branch and tree of req, and refuses a tree whose
// agent still runs.
func (m merger) mergeSource(ctx context.Context, r *repo, req MergeRequest) (mergeSrc, error) {
	var src mergeSrc
	switch {
	case req.AgentID != "" && req.Branch != "":
		return src, errors.New("give an agent id or a branch, not both")
	case req.AgentID != "":
		if !validAgentID(req.AgentID) {
			return src, fmt.Errorf("agent id %q is not valid", req.AgentID)
		}
		path := filepath.Join(r.treesDir(), TreeName(req.AgentID))
		rec, err := readRecord(path)
		if err != nil {
			return src, fmt.Errorf("no kept worktree for agent %s: %w", req.AgentID, err)
		}
		if rec.EndedAt.IsZero() && rec.Owner.alive(m.self()) {
			return src, fmt.Errorf("agent %s is still running in %s; merge after it ends", req.AgentID, path)
		}
		src = mergeSrc{branch: rec.Branch, agent: rec.AgentID}
		if _, err := os.Stat(path); err == nil {
			src.path = path
		}
	case req.Branch != "":
		src.branch = strings.TrimPrefix(req.Branch, "refs/heads/")
		out, err := m.git.run(ctx, r.root, "worktree", "list", "--porcelain", "-z")
		if err != nil {
			return src, err
		}
		for _, g := range parseWorktreeList(out) {
			if g.branch == src.branch && g.path != r.root {
				src.path = canonical(g.path)
			}
		}
		if src.path != "" {
			if rec, err := readRecord(src.path); err == nil {
				if rec.EndedAt.IsZero() && rec.Owner.alive(m.self()) {
					return src, fmt.Errorf("agent %s is still running in %s; merge after it ends", rec.AgentID, src.path)
				}
				src.agent = rec.AgentID
			}
		}
	default:
		return src, errors.New("name the agent id or the branch to merge")
	}
	m.mu.Lock()
	_, live := m.live[src.path]
	m.mu.Unlock()
	if live {
		return src, fmt.Errorf("%s is still leased by a running agent; merge after it ends", src.path)
	}
	tip, err := m.branchTip(ctx, r.root, src.branch)
	if err != nil {
		return src, err
	}
	if tip == "" {
		return src, fmt.Errorf("no branch %s", src.branch)
	}
	src.tip = tip
	return src, nil
}

// mergeable refuses a parent tree with uncommitted changes to tracked
// files (aborting a conflicted merge could not restore them) or with a
// merge, cherry-pick, revert or rebase in progress.
func (m merger) mergeable(ctx context.Context, dir string) error {
	for _, ref := range []string{"MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD"} {
		c, err := m.commitOf(ctx, dir, ref)
		if err != nil {
			return err
		}
		if c != "" {
			return fmt.Errorf("%s exists: finish or abort the operation in progress first", ref)
		}
	}
	out, err := m.git.run(ctx, dir, "status", "--porcelain=v2", "-z", "--untracked-files=no", "--no-renames")
	if err != nil {
		return err
	}
	st, err := parseStatus(out)
	if err != nil {
		return err
	}
	if n := len(st.files); n > 0 {
		return fmt.Errorf("the tree has uncommitted changes in %d files (%s): commit or stash them first", n, fileList(st.files, 5))
	}
	return nil
}

func fileList(fs []FileStatus, max int) string {
	var names []string
	for i, f := range fs {
		if i == max {
			names = append(names, fmt.Sprintf("and %d more", len(fs)-max))
			break
		}
		names = append(names, f.Path)
	}
	return strings.Join(names, ", ")
}

// settleTree commits the tree's uncommitted changes on its branch, or with
// leave set lists them in res.
func (m merger) settleTree(ctx context.Context, g git, src mergeSrc, leave bool, res *MergeResult) error {
	out, err := g.run(ctx, src.path, "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all", "--no-renames")
	if err != nil {
		return err
	}
	st, err := parseStatus(out)
	if err != nil || len(st.files) == 0 {
		return err
	}
	if leave {
		res.Uncommitted = st.files
		return nil
	}
	if st.branch != src.branch {
		return fmt.Errorf("the tree at %s has uncommitted changes but is not on %s; commit them there first", src.path, src.branch)
	}
	who := src.agent
	if who == "" {
		who = src.branch
	}
	if _, err := g.run(ctx, src.path, "add", "-A"); err != nil {
		return err
	}
	if _, err := g.run(ctx, src.path, "commit", "--quiet", "--no-verify", "-m", "Uncommitted work of agent "+who); err != nil {
		return err
	}
	out, err = g.run(ctx, src.path, "log", "-1", "--format=%H %s")
	if err != nil {
		return err
	}
	h, s, _ := strings.Cut(strings.TrimSpace(out), " ")
	res.Committed = &Commit{Hash: h, Subject: s}
	return nil
}

// bring merges or cherry-picks src into dir and fills res.
func (m merger) bring(ctx context.Context, g git, dir string, src mergeSrc, how Strategy, res *MergeResult) error {
	tip, err := m.branchTip(ctx, dir, src.branch)
	if err != nil {
		return err
	}
	out, err := g.run(ctx, dir, "log", "--no-color", "--reverse", "--format=%H %s", "HEAD.."+tip)
	if err != nil {
		return err
	}
	for _, l := range lines(out) {
		h, s, _ := strings.Cut(l, " ")
		res.Commits = append(res.Commits, Commit{Hash: h, Subject: s})
	}
	if len(res.Commits) == 0 {
		res.Status = MergeUpToDate
	} else if how == StrategyCherryPick {
		err = m.cherryPick(ctx, g, dir, tip, res)
	} else {
		err = m.merge(ctx, g, dir, src, tip, res)
	}
	if err != nil {
		return err
	}
	head, err := m.commitOf(ctx, dir, "HEAD")
	res.Head = head
	return err
}

// merge runs git merge; on conflicts it records them and aborts.
func (m merger) merge(ctx context.Context, g git, dir string, src mergeSrc, tip string, res *MergeResult) error {
	msg := "Merge branch '" + src.branch + "'"
	if src.agent != "" {
		msg += " (work of agent " + src.agent + ")"
	}
	_, err := g.run(ctx, dir, "merge", "--no-edit", "-m", msg, tip)
	if err == nil {
		res.Status = MergeDone
		return nil
	}
	if mh, _ := m.commitOf(ctx, dir, "MERGE_HEAD"); mh == "" {
		return err // stopped before merging (an untracked file in the way): nothing to undo
	}
	if res.Conflicts, err = m.conflicts(ctx, dir); err != nil {
		return err
	}
	res.Status = MergeConflict
	if _, err := g.run(ctx, dir, "merge", "--abort"); err != nil {
		return fmt.Errorf("abort the conflicted merge: %w", err)
	}
	return nil
}

// cherryPick applies the branch's commits; on a conflict it records it and
// aborts the whole sequence. A commit already in HEAD (empty once
// applied) is skipped.
func (m merger) cherryPick(ctx context.Context, g git, dir, tip string, res *MergeResult) error {
	out, err := g.run(ctx, dir, "rev-list", "--reverse", "--no-merges", "HEAD.."+tip)
	if err != nil {
		return err
	}
	commits := lines(out)
	if len(commits) == 0 {
		res.Status = MergeUpToDate
		return nil
	}
	_, err = g.run(ctx, dir, append([]string{"cherry-pick"}, commits...)...)
	for err != nil {
		cp, cerr := m.commitOf(ctx, dir, "CHERRY_PICK_HEAD")
		if cerr != nil {
			return cerr
		}
		if cp == "" {
			return err // stopped before applying anything
		}
		files, cerr := m.conflicts(ctx, dir)
		if cerr != nil {
			return cerr
		}
		if len(files) == 0 {
			// The commit became empty: its change is already in HEAD.
			_, err = g.run(ctx, dir, "cherry-pick", "--skip")
			continue
		}
		res.Status, res.Conflicts = MergeConflict, files
		for _, c := range res.Commits {
			if c.Hash == cp {
				res.ConflictCommit = &c
			}
		}
		if _, err := g.run(ctx, dir, "cherry-pick", "--abort"); err != nil {
			return fmt.Errorf("abort the conflicted cherry-pick: %w", err)
		}
		return nil
	}
	res.Status = MergeDone
	return nil
}

// conflicts lists the unmerged files in dir.
func (m merger) conflicts(ctx context.Context, dir string) ([]string, error) {
	out, err := m.git.run(ctx, dir, "diff", "--name-only", "-z", "--diff-filter=U")
	if err != nil {
		return nil, err
	}
	return nulFields(out), nil
}

// removeMerged removes a merged tree and its branch when nothing is left
// in it: the tree clean, and the branch tip the one merged. The caller
// holds the repository lock.
func (m merger) removeMerged(ctx context.Context, r *repo, src mergeSrc, res *MergeResult) {
	if len(res.Uncommitted) > 0 {
		res.NotRemoved = "the tree has uncommitted changes that were not merged"
		return
	}
	tip := src.tip
	if res.Committed != nil {
		tip = res.Committed.Hash
	}
	if src.path != "" {
		if _, err := m.git.run(ctx, r.root, "worktree", "remove", src.path); err != nil {
			res.NotRemoved = err.Error()
			return
		}
	}
	if _, err := m.git.run(ctx, r.root, "update-ref", "-d", "refs/heads/"+src.branch, tip); err != nil {
		res.NotRemoved = "the tree was removed but not its branch: " + err.Error()
		return
	}
	if src.path != "" {
		if err := removeRecord(src.path); err != nil {
			res.NotRemoved = err.Error()
			return
		}
	}
	res.Removed = true
}
