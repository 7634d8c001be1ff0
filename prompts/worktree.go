package prompts

import (
	"fmt"
	"strings"
	"time"
)

// The texts of worktree isolation (S-9.1, S-15.5): what an isolated agent
// is told about where it works, the refusals of an isolation request, the
// worktree part of a report, and the merge-back tool.

// Worktree tells an agent that works in its own git worktree where it is:
// the tree, its branch, the parent's tree it was made from, and that paths
// it inherited (from its prompt or a forked history) name the parent's
// tree and must be translated and re-read.
func Worktree(path, branch, parentDir string) string {
	if branch == "" {
		// A tree a WorktreeCreate hook made: cadre knows no branch.
		branch = "(none known)"
	}
	return fmt.Sprintf(`<worktree>
You work in your own git worktree at %s, on branch %s, made from the repository at %s.
- Your working directory is the worktree. Read and change files only there, with absolute paths under %s. The parent's tree at %s is not yours: writes there are refused.
- Paths in your instructions or in any conversation you inherited refer to the parent's tree. Translate them to the same relative path under your worktree and read the file again before you rely on it: your copy may differ.
- Commit your work on your branch when it is done (git add, git commit), or leave the changes in the tree: either way the worktree is kept for the parent to merge. A worktree without changes is removed when you finish.
- Do not check out other branches, and do not remove or move the worktree.
</worktree>`, path, branch, parentDir, path, parentDir)
}

// IsolationNotInRepo refuses isolation: worktree outside a git repository.
func IsolationNotInRepo(dir string) string {
	return fmt.Sprintf("isolation: worktree needs a git repository, and %s is not inside one. No agent was started. Start it without isolation, or from a directory inside a git repository.", dir)
}

// IsolationWithCwd refuses a call that sets both cwd and isolation.
func IsolationWithCwd() string {
	return "cwd and isolation: worktree exclude each other: an isolated agent works in its own worktree. No agent was started. Drop one of the two."
}

// RemoteNotPickedUp: no worker took a remote agent in time.
func RemoteNotPickedUp(wait time.Duration) string {
	return fmt.Sprintf("no worker took the remote agent within %s: are `cadre worker` processes running on the task queue remote.temporal names? It was stopped and did no work", wait)
}

// RemoteWithCwd refuses a remote agent given a cwd.
func RemoteWithCwd() string {
	return "cwd and isolation: remote exclude each other: a remote agent works in its own worktree on the worker that runs it. No agent was started. Drop one of the two."
}

// IsolationUnsupported refuses an isolation kind cadre does not offer.
func IsolationUnsupported(kind string) string {
	if kind == "remote" {
		return "isolation: remote is not available in this session: no remote execution is configured (the remote.temporal settings, with `cadre worker` processes serving its task queue). No agent was started. Use isolation: worktree, or none."
	}
	return fmt.Sprintf("isolation %q is not known: use \"worktree\", or leave it out. No agent was started.", kind)
}

// WorktreeNotCreated says the worktree for an isolated agent could not be
// made, so the agent did not start.
func WorktreeNotCreated(err error) string {
	return fmt.Sprintf("The agent's worktree could not be created, so the agent did not start: %v", err)
}

// ReportWorktree is the worktree part of a report.
type ReportWorktree struct {
	Path, Branch string
	// State is removed, kept or held.
	State string
	// Commits are "hash subject" lines, newest first; CommitCount counts
	// them all.
	Commits     []string
	CommitCount int
	// Committed are files the commits changed; Uncommitted are files with
	// uncommitted changes, as "status path".
	Committed   []string
	Uncommitted []string
	Omitted     int
	// Reason says why a tree was kept without known changes.
	Reason string
}

// maxReportFiles bounds the files and commits a report lists.
const maxReportFiles = 20

// Render is the worktree paragraph of a report.
func (w ReportWorktree) Render() string {
	var b strings.Builder
	switch w.State {
	case "removed":
		if w.Branch == "" {
			fmt.Fprintf(&b, "worktree: %s was removed.", w.Path)
			return b.String()
		}
		fmt.Fprintf(&b, "worktree: %s made no changes; the worktree and branch %s were removed.", w.Path, w.Branch)
		return b.String()
	case "held":
		fmt.Fprintf(&b, "worktree: %s (branch %s) is still in use by an agent the sub-agent started; it is kept or removed when that agent ends.", w.Path, w.Branch)
		return b.String()
	}
	fmt.Fprintf(&b, "worktree kept: %s\nbranch: %s", w.Path, w.Branch)
	if w.CommitCount > 0 {
		fmt.Fprintf(&b, "\ncommits (%d):", w.CommitCount)
		for i, c := range w.Commits {
			if i == maxReportFiles {
				fmt.Fprintf(&b, "\n  … %d more", len(w.Commits)-i)
				break
			}
			b.WriteString("\n  " + c)
		}
	}
	list := func(title string, files []string) {
		if len(files) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n%s:", title)
		for i, f := range files {
			if i == maxReportFiles {
				fmt.Fprintf(&b, "\n  … %d more", len(files)-i)
				break
			}
			b.WriteString("\n  " + f)
		}
	}
	list("files changed by the commits", w.Committed)
	list("uncommitted changes", w.Uncommitted)
	if w.Omitted > 0 {
		fmt.Fprintf(&b, "\n(%d more files not listed)", w.Omitted)
	}
	if w.Reason != "" {
		b.WriteString("\n" + w.Reason)
	}
	b.WriteString("\nThe work is in that worktree, not in your tree. Review it there; bring it into your tree with the MergeWorktree tool (or `git merge " + w.Branch + "`).")
	return b.String()
}

// MergeWorktreeTool is the description of the MergeWorktree tool.
func MergeWorktreeTool() string {
	return `Merges the branch of a sub-agent that ran in a kept worktree (isolation: worktree) into your tree, then removes the worktree and branch.

- Name it by agent_id (its report names the worktree) or branch. strategy: merge (default) or cherry-pick.
- The worktree's uncommitted changes are committed first, unless leave_uncommitted.
- Your tree must be clean. On a conflict nothing changes and the conflicting files are listed.`
}

// MergeWorktreeField describes a field of the MergeWorktree tool's input.
func MergeWorktreeField(name string) string {
	switch name {
	case "agent_id":
		return "The id of the sub-agent whose kept worktree to merge."
	case "branch":
		return "The branch to merge, instead of agent_id."
	case "strategy":
		return "merge (default) or cherry-pick."
	case "leave_uncommitted":
		return "Merge only what is committed on the branch; leave uncommitted changes in the worktree."
	}
	return ""
}

// MergeResult is the MergeWorktree tool's result: what was merged, or the
// conflict.
type MergeResult struct {
	Status, Branch, Path, Head string
	Commits                    []string
	Committed                  string // the commit made of uncommitted changes
	Conflicts                  []string
	ConflictCommit             string
	Removed                    bool
	NotRemoved                 string
	// Identity says that no git identity was configured and which one
	// the commits were made as.
	Identity string
}

// Render is the tool result text.
func (m MergeResult) Render() string {
	var b strings.Builder
	switch m.Status {
	case "conflict":
		fmt.Fprintf(&b, "Merging %s stopped on conflicts and was aborted: your tree is as it was before.", m.Branch)
		if m.ConflictCommit != "" {
			fmt.Fprintf(&b, "\nThe commit that did not apply: %s", m.ConflictCommit)
		}
		b.WriteString("\nconflicting files:")
		for _, f := range m.Conflicts {
			b.WriteString("\n  " + f)
		}
		if m.Path != "" {
			fmt.Fprintf(&b, "\nThe work stays in %s on branch %s.", m.Path, m.Branch)
		}
		if m.Identity != "" {
			b.WriteString("\nNote: " + m.Identity + ".")
		}
		return b.String()
	case "up-to-date":
		fmt.Fprintf(&b, "Nothing to merge: your HEAD already has every commit of %s.", m.Branch)
	default:
		fmt.Fprintf(&b, "Merged %s into your tree; HEAD is now %s.", m.Branch, m.Head)
	}
	if m.Committed != "" {
		fmt.Fprintf(&b, "\nThe worktree's uncommitted changes were first committed on the branch as %s.", m.Committed)
	}
	if len(m.Commits) > 0 {
		fmt.Fprintf(&b, "\ncommits (%d):", len(m.Commits))
		for i, c := range m.Commits {
			if i == maxReportFiles {
				fmt.Fprintf(&b, "\n  … %d more", len(m.Commits)-i)
				break
			}
			b.WriteString("\n  " + c)
		}
	}
	switch {
	case m.Removed:
		b.WriteString("\nThe worktree and its branch were removed.")
	case m.NotRemoved != "":
		b.WriteString("\nThe worktree was kept: " + m.NotRemoved)
	}
	if m.Identity != "" {
		b.WriteString("\nNote: " + m.Identity + ".")
	}
	return b.String()
}

// RemoteNoRepos: a worker without repository roots was given an agent
// that works in a copy of the launcher's repository.
func RemoteNoRepos(worker string) string {
	return fmt.Sprintf("worker %s has no repository roots (start it with `cadre worker --repo DIR`): it cannot run an agent that works in a copy of the launcher's repository", worker)
}

// RemoteWorkspaceLost: the worker holding a remote agent's worktree
// stopped taking its calls.
func RemoteWorkspaceLost(queue string, wait time.Duration) string {
	return fmt.Sprintf("the worker holding this agent's worktree (queue %s) took none of its calls within %s: it stopped or died, and the work in that tree is lost with it. Start the agent again", queue, wait)
}

// RemoteResultTruncated ends a remote agent's tool result cut to its
// first shown bytes of total, so that it fits in the durable engine's
// payloads.
func RemoteResultTruncated(shown, total int) string {
	return fmt.Sprintf("[output truncated: the first %d of %d bytes are shown (this agent runs on a remote worker, whose results travel in payloads of at most 2 MB). Ask for less (a narrower command, a range of lines, a limit) to see the rest.]", shown, total)
}

// RemotePayloadTooLarge is why a remote agent stopped: its conversation
// has grown past what one model call may carry through the durable
// engine (Temporal's payload limit).
func RemotePayloadTooLarge(size, limit int) string {
	return fmt.Sprintf("this remote agent's conversation is %d bytes, over the %d-byte limit of one Temporal payload (2 MB by default): the model call that would carry it cannot be made. Continue with a new agent and a summary of what this one found, or run it locally", size, limit)
}

// RemoteWorkTooLarge is why a remote agent's work did not come back: its
// bundle and the rest of its result pass one payload.
func RemoteWorkTooLarge(bundle, limit int) string {
	return fmt.Sprintf("the agent's work (a %d-byte git bundle) and its result do not fit in one %d-byte Temporal payload, so its work could not be brought back", bundle, limit)
}
