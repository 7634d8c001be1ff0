package prompts

import (
	"errors"
	"strings"
	"testing"
)

func TestWorktreeTextsGolden(t *testing.T) {
	golden(t, "worktree", Worktree("/r/.cadre/worktrees/agent-a1", "worktree-agent-a1", "/r"))
	golden(t, "worktree_refusals", strings.Join([]string{
		IsolationNotInRepo("/tmp/x"),
		IsolationWithCwd(),
		IsolationUnsupported("remote"),
		RemoteWithCwd(),
		IsolationUnsupported("docker"),
		WorktreeNotCreated(errors.New("git worktree add: fatal: disk full")),
	}, "\n"))
	kept := ReportWorktree{Path: "/r/.cadre/worktrees/agent-a1", Branch: "worktree-agent-a1", State: "kept", CommitCount: 2,
		Commits: []string{"0123456789ab add b", "ba9876543210 fix a"}, Committed: []string{"a.txt", "b.txt"},
		Uncommitted: []string{"modified c.txt", "untracked d.txt"}, Omitted: 3}
	golden(t, "worktree_report_kept", Report{AgentID: "a1", AgentType: "worker", Text: "done", Tokens: 10, ToolUses: 2, Worktree: &kept}.Render())
	golden(t, "worktree_report_removed", ReportWorktree{Path: "/r/.cadre/worktrees/agent-a1", Branch: "worktree-agent-a1", State: "removed"}.Render())
	golden(t, "worktree_report_held", ReportWorktree{Path: "/r/.cadre/worktrees/agent-a1", Branch: "worktree-agent-a1", State: "held"}.Render())
	golden(t, "worktree_report_unknown", ReportWorktree{Path: "/r/.cadre/worktrees/agent-a1", Branch: "worktree-agent-a1", State: "kept",
		Reason: "kept because it could not be inspected: git status failed"}.Render())
	many := make([]string, 25)
	for i := range many {
		many[i] = "untracked f" + strings.Repeat("x", i)
	}
	golden(t, "worktree_report_many", ReportWorktree{Path: "/p", Branch: "b", State: "kept", Uncommitted: many}.Render())
	golden(t, "merge_tool", MergeWorktreeTool())
	golden(t, "merge_results", strings.Join([]string{
		MergeResult{Status: "merged", Branch: "worktree-agent-a1", Head: "abc", Commits: []string{"abc add b"}, Committed: "abc Uncommitted work of agent a1", Removed: true}.Render(),
		MergeResult{Status: "up-to-date", Branch: "worktree-agent-a1", NotRemoved: "it has untracked files the merge did not bring"}.Render(),
		MergeResult{Status: "conflict", Branch: "worktree-agent-a1", Path: "/r/.cadre/worktrees/agent-a1", Conflicts: []string{"a.txt"}, ConflictCommit: "abc fix a"}.Render(),
	}, "\n---\n"))
	for _, f := range []string{"agent_id", "branch", "strategy", "leave_uncommitted"} {
		if MergeWorktreeField(f) == "" {
			t.Errorf("no description for %s", f)
		}
	}
	if AgentInputField("isolation") == "" {
		t.Error("no description for isolation")
	}
}
