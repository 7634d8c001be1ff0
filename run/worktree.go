package run

import "time"

// WorktreeState is what became of an isolated agent's worktree.
type WorktreeState string

// Worktree states of a WorktreeOutcome.
const (
	// WorktreeRemoved: the agent changed nothing; tree and branch are gone.
	WorktreeRemoved WorktreeState = "removed"
	// WorktreeKept: the tree holds work (or could not be proved not to).
	WorktreeKept WorktreeState = "kept"
	// WorktreeHeld: an agent the child started still works in the tree.
	WorktreeHeld WorktreeState = "held"
)

// Valid reports whether s is one of the worktree states (an outcome read
// back from an agent's meta file names one).
func (s WorktreeState) Valid() bool {
	switch s {
	case WorktreeRemoved, WorktreeKept, WorktreeHeld:
		return true
	}
	return false
}

// WorktreeOutcome is what became of an isolated agent's worktree when it
// ended (SubagentResult.Worktree).
type WorktreeOutcome struct {
	Path   string `json:"path"`
	Branch string `json:"branch,omitempty"`
	// State is removed, kept or held.
	State WorktreeState `json:"state"`
	// BaseCommit is where the tree started.
	BaseCommit string `json:"base_commit,omitempty"`
	// CommitCount counts the commits made in the tree; Commits lists the
	// newest of them.
	CommitCount int              `json:"commit_count,omitempty"`
	Commits     []WorktreeCommit `json:"commits,omitempty"`
	// Committed are the files the commits changed; Uncommitted the files
	// left changed (untracked included) in the tree.
	Committed   []string       `json:"committed,omitempty"`
	Uncommitted []WorktreeFile `json:"uncommitted,omitempty"`
	// Omitted counts files not listed.
	Omitted int `json:"omitted,omitempty"`
	// Reason says why a tree was kept without known changes, or what went
	// wrong finishing it.
	Reason string `json:"reason,omitempty"`
}

// WorktreeCommit is one commit in a worktree.
type WorktreeCommit struct {
	Hash    string `json:"hash"`
	Subject string `json:"subject"`
}

// WorktreeFile is a file with uncommitted changes: untracked, modified,
// added, deleted, unmerged or type changed.
type WorktreeFile struct {
	Path   string `json:"path"`
	Status string `json:"status"`
}

// LeftWorktree is a worktree an earlier session left behind with work in
// it (Init.Worktrees): nobody will remove it; merge it (MergeWorktree,
// `cadre worktrees merge`) or remove it by hand.
type LeftWorktree struct {
	Path      string    `json:"path"`
	Branch    string    `json:"branch"`
	AgentID   string    `json:"agent_id"`
	SessionID string    `json:"session_id,omitempty"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
	// Commits and Files count the work in it.
	Commits int `json:"commits"`
	Files   int `json:"files"`
}

// WorktreeHousekeeping is what the start of a session did about the
// worktrees of earlier sessions (Init.Worktrees): unchanged trees whose
// agents are gone were removed; trees with work are listed.
type WorktreeHousekeeping struct {
	Removed []string       `json:"removed,omitempty"`
	Left    []LeftWorktree `json:"left,omitempty"`
	// Error says what went wrong (the session goes on).
	Error string `json:"error,omitempty"`
}
