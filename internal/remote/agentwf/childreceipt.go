package agentwf

// A sub-agent's spawn receipt on the worker (S-15.1): what its spawn
// granted — its type, model, tools, the types it may start, its
// permission mode, depth, MCP servers and its budget's reservation and
// why — as the launcher records a local child's, so its task, result and
// notification say what it was given rather than its parent's.

import (
	"slices"

	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/internal/spawn"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/tool"
)

// childReceipt is the receipt of the sub-agent of req, whose account is
// acct (nil when no budget bounds it).
func childReceipt(req executor.SpawnRequest, acct *spawn.Account) run.Receipt {
	r := run.Receipt{AgentType: req.Definition.Name, Model: req.Model.ID, ModelRule: req.Model.Rule,
		Tools: slices.Clone(req.Ceiling.Tools), PermissionMode: req.Mode, Depth: req.Depth, Background: req.Background,
		MCPServers: slices.Clone(req.Definition.MCPServers)}
	if slices.Contains(r.Tools, tool.Agent) {
		r.AllowedAgentTypes = slices.Clone(req.Ceiling.AgentTypes)
	}
	if acct != nil {
		l := acct.Limits()
		r.Budget = &run.BudgetGrant{USD: l.USD, Tokens: l.Tokens, Turns: l.Turns, WallTime: l.WallTime, Why: acct.Why()}
	}
	return r
}
