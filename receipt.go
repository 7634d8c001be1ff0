package cadre

import (
	"time"

	"github.com/cadre-dev/cadre/internal/spawn"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/tool"
)

// AgentToolName is the name of the tool that spawns sub-agents; TaskAlias
// is its old name, accepted in rules and definitions.
const (
	AgentToolName = tool.Agent
	TaskAlias     = tool.Task
)

// Receipt records what a spawn was granted and why (S-15.1): the resolved
// model and the rule that chose it, the tools granted and those dropped
// with the reason, the permission mode, the depth, whether the spawn had
// to wait for a slot, and warnings. It goes into the task events, the
// structured result and the agent's .meta.json.
type Receipt struct {
	AgentType string    `json:"agent_type"`
	Model     string    `json:"model"`
	ModelRule ModelRule `json:"model_rule"`
	// Tools are the granted tools, in the order the child sees them.
	Tools []string `json:"tools"`
	// Dropped are the tools the child did not get, with why.
	Dropped []DroppedTool `json:"dropped,omitempty"`
	// AllowedAgentTypes limits what the child may spawn (nil: any type
	// the rules allow).
	AllowedAgentTypes []string        `json:"allowed_agent_types,omitempty"`
	PermissionMode    permission.Mode `json:"permission_mode"`
	Depth             int             `json:"depth"`
	Background        bool            `json:"background"`
	// Queued is true when the spawn waited for a slot (the running cap
	// was reached, S-5.7); QueuePosition was its place in the queue and
	// QueueWait how long it waited (known once it started).
	Queued        bool          `json:"queued,omitempty"`
	QueuePosition int           `json:"queue_position,omitempty"`
	QueueWait     time.Duration `json:"queue_wait_ns,omitempty"`
	Warnings      []string      `json:"warnings,omitempty"`
	// MCPServers are the MCP servers the child got: those its definition
	// holds for it (named and inline mcpServers), then the servers whose
	// tools it gets through its parent. Its MCP tools are in Tools, the
	// ones it did not get in Dropped, and servers its tools name that
	// nobody configured in Warnings.
	MCPServers []string `json:"mcp_servers,omitempty"`
	// Worktree and WorktreeBranch are the agent's own git worktree
	// (isolation: worktree).
	Worktree       string `json:"worktree,omitempty"`
	WorktreeBranch string `json:"worktree_branch,omitempty"`
	// MCPStart is how long the spawn waited for the child's own MCP
	// servers (issue 14): its inline servers starting and its required
	// servers connecting. It is the servers' start-up, apart from
	// cadre's part of the spawn.
	MCPStart time.Duration `json:"mcp_start_ns,omitempty"`
}

// DroppedTool is a tool a child did not get.
type DroppedTool struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// ModelRule names the rule that chose a sub-agent's model (S-5.3).
type ModelRule string

// Model rules, strongest first.
const (
	// ModelRuleForced: Config.ForceSubagentModel.
	ModelRuleForced ModelRule = "forced"
	// ModelRuleCall: the Agent call's model field.
	ModelRuleCall ModelRule = "call"
	// ModelRuleDefinition: the definition's model key.
	ModelRuleDefinition ModelRule = "definition"
	// ModelRuleSubagentModel: Config.SubagentModel.
	ModelRuleSubagentModel ModelRule = "subagent_model"
	// ModelRuleParent: nothing else chose, so the parent's model.
	ModelRuleParent ModelRule = "parent"
)

// RefusalReason says why an Agent call did not start a sub-agent; the run
// counts refusals by reason (SubagentStats.Refused).
type RefusalReason string

// Refusal reasons.
const (
	// RefusedDepth: the calling agent is at the nesting limit.
	RefusedDepth RefusalReason = "depth"
	// RefusedTotal: the session has started Limits.MaxTotal sub-agents.
	RefusedTotal RefusalReason = "total"
	// RefusedPermission: a rule denies the type, or the caller's
	// definition does not allow it.
	RefusedPermission RefusalReason = "permission"
	// RefusedUnknownType: no definition has that name.
	RefusedUnknownType RefusalReason = "unknown_type"
	// RefusedNoTools: the child would have no tools.
	RefusedNoTools RefusalReason = "no_tools"
	// RefusedDefinition: the definition cannot be applied (a tools entry
	// that is not a valid rule).
	RefusedDefinition RefusalReason = "definition"
	// RefusedFork: the fork path was asked for and is off.
	RefusedFork RefusalReason = "fork"
)

// Limits bound sub-agent spawning for a session (S-5.7). Zero fields take
// the defaults.
type Limits struct {
	// MaxDepth is how deep sub-agents may nest: the main agent is depth 0,
	// its children depth 1; an agent at MaxDepth cannot spawn. Default 3.
	MaxDepth int
	// MaxRunning bounds the sub-agents running at once; further Agent
	// calls wait in a FIFO queue (shown as pending) and start as slots
	// free. An agent waiting for its own children does not hold a slot.
	// Default 20.
	MaxRunning int
	// MaxTotal bounds the sub-agents started in one session; calls beyond
	// it are refused. Default 1000.
	MaxTotal int
}

// Default limits.
const (
	DefaultMaxDepth   = spawn.DefaultMaxDepth
	DefaultMaxRunning = spawn.DefaultMaxRunning
	DefaultMaxTotal   = spawn.DefaultMaxTotal
)

func (l Limits) gate() spawn.Limits {
	return spawn.Limits{MaxDepth: l.MaxDepth, MaxRunning: l.MaxRunning, MaxTotal: l.MaxTotal}
}

// refusalReason maps a gate refusal onto the public reason.
func refusalReason(l spawn.Limit) RefusalReason {
	if l == spawn.LimitDepth {
		return RefusedDepth
	}
	return RefusedTotal
}

// newReceipt builds a child's receipt from its ceiling.
func newReceipt(def string, depth int, background bool, c *spawn.Ceiling) Receipt {
	r := Receipt{AgentType: def, Depth: depth, Background: background, Tools: c.Tools, PermissionMode: c.Perms.Mode,
		Warnings: c.Warnings}
	if len(c.Dropped) > 0 {
		r.Dropped = make([]DroppedTool, len(c.Dropped))
		for i, d := range c.Dropped {
			r.Dropped[i] = DroppedTool(d)
		}
	}
	for _, name := range c.Tools {
		if name == AgentToolName {
			r.AllowedAgentTypes = c.Types
		}
	}
	return r
}
