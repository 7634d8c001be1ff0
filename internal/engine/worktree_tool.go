package engine

import (
	"context"

	"github.com/invopop/jsonschema"

	"github.com/cadre-dev/cadre/internal/worktree"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/tool"
)

// mergeInput is the MergeWorktree tool's input.
type mergeInput struct {
	AgentID          string `json:"agent_id,omitempty"`
	Branch           string `json:"branch,omitempty"`
	Strategy         string `json:"strategy,omitempty" jsonschema:"enum=merge,enum=cherry-pick"`
	LeaveUncommitted bool   `json:"leave_uncommitted,omitempty"`
}

// JSONSchemaExtend puts the descriptions from package prompts on the
// reflected schema.
func (mergeInput) JSONSchemaExtend(s *jsonschema.Schema) {
	for name, p := range s.Properties.FromOldest() {
		p.Description = prompts.MergeWorktreeField(name)
	}
}

// mergeTools returns the MergeWorktree tool when agents can be isolated in
// worktrees (the session is in a git repository and sub-agents are on):
// the merge-back path of S-15.5 for the agents themselves. The user has
// `cadre worktrees merge`.
func (tb toolbox) mergeTools() []tool.Tool {
	r := tb.r
	if r.cfg.DisableSubagents || r.worktrees.git == nil || !glueOf(r).isolationOffered() {
		return nil
	}
	return []tool.Tool{tool.Func(tool.FuncConfig{Name: tool.MergeWorktree, Description: prompts.MergeWorktreeTool()}, tb.mergeWorktree)}
}

// mergeWorktree merges a kept worktree's branch into the calling agent's
// tree. A conflict is an error result that lists the files; the tree is
// left as it was.
func (tb toolbox) mergeWorktree(ctx context.Context, env *tool.Env, in mergeInput) (tool.Output, error) {
	r := tb.r
	if (in.AgentID == "") == (in.Branch == "") {
		return errorOutput("Name either agent_id or branch."), nil
	}
	res, err := r.worktrees.git.Merge(ctx, worktree.MergeRequest{Dir: env.Cwd, AgentID: in.AgentID, Branch: in.Branch,
		Strategy: worktree.Strategy(in.Strategy), LeaveUncommitted: in.LeaveUncommitted, Remove: true})
	if err != nil {
		if ctx.Err() != nil {
			return tool.Output{}, ctx.Err()
		}
		return errorOutput(err.Error()), nil
	}
	out := prompts.MergeResult{Status: string(res.Status), Branch: res.Branch, Path: res.Path, Head: shortHash(res.Head),
		Conflicts: res.Conflicts, Removed: res.Removed, NotRemoved: res.NotRemoved, Identity: res.Identity}
	for _, c := range res.Commits {
		out.Commits = append(out.Commits, shortHash(c.Hash)+" "+c.Subject)
	}
	if c := res.Committed; c != nil {
		out.Committed = shortHash(c.Hash) + " " + c.Subject
	}
	if c := res.ConflictCommit; c != nil {
		out.ConflictCommit = shortHash(c.Hash) + " " + c.Subject
	}
	return tool.Output{Text: out.Render(), IsError: res.Status == worktree.MergeConflict}, nil
}
