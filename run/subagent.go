package run

import (
	"encoding/json"
	"time"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/task"
)

// TaskInfo describes a sub-agent as it waits for a slot, starts, or makes
// progress.
type TaskInfo struct {
	AgentID     string `json:"task_id"`
	ToolUseID   string `json:"tool_use_id"`
	AgentType   string `json:"agent_type"`
	Description string `json:"description"`
	// Status is pending (EventTaskPending) or running (EventTaskStarted).
	Status     task.Status `json:"status"`
	Background bool        `json:"background"`
	Depth      int         `json:"depth"`
	// Parent is the id of the agent that made the call ("main" for the
	// main agent).
	Parent  string  `json:"parent"`
	Receipt Receipt `json:"receipt"`
	// Progress is set on EventTaskProgress: tool uses, last tool, tokens
	// and elapsed time so far.
	Progress task.Progress `json:"progress"`
	// Spent is set on EventTaskProgress of a budgeted agent: what its
	// subtree spent so far of Receipt.Budget (S-15.2).
	Spent *Spend `json:"spent,omitempty"`
	// Teammate is set for a teammate of an agent team (issue 25): its
	// name, team and state; its task type is in_process_teammate.
	Teammate *TeammateInfo `json:"teammate,omitempty"`
}

// TeammateInfo is a teammate's place in its team.
type TeammateInfo struct {
	Name string `json:"name"`
	Team string `json:"team"`
	// State is working, idle or waiting for approval.
	State string `json:"state"`
	// PlanModeRequired: started with mode plan, its plan not approved yet.
	PlanModeRequired bool `json:"plan_mode_required,omitempty"`
}

// TeamMessage is one message between the members of an agent team
// (EventTeamMessage): who sent it to whom, its kind and what the receiver
// reads inside the <teammate-message> frame.
type TeamMessage struct {
	// From and To are member names: a teammate's, or team-lead.
	From string `json:"from"`
	To   string `json:"to"`
	// FromAgentID and ToAgentID are their agent ids ("" for the lead).
	FromAgentID string `json:"from_agent_id,omitempty"`
	ToAgentID   string `json:"to_agent_id,omitempty"`
	Team        string `json:"team_name"`
	// Type is "message" for text, else the structured message's type
	// (shutdown_request, shutdown_approved, shutdown_rejected,
	// plan_approval_request, plan_approval_response, idle_notification;
	// and the team's own notices: task_assignment, teammate_terminated,
	// and tasks_released, whose Text is plain text, not JSON).
	Type      string `json:"message_type"`
	RequestID string `json:"request_id,omitempty"`
	Summary   string `json:"summary,omitempty"`
	// Text is the message's body: the text, or the structured message's
	// JSON.
	Text string `json:"message"`
}

// SubagentResult is the structured result of one sub-agent (S-3.6), for
// the library, hooks and stream-json; the model gets a framed text instead.
type SubagentResult struct {
	AgentID   string `json:"agent_id"`
	AgentType string `json:"agent_type"`
	ToolUseID string `json:"tool_use_id"`
	// Status is completed, failed or killed.
	Status task.Status `json:"status"`
	// Model is the resolved model and ModelRule the rule that chose it.
	Model      string    `json:"model"`
	ModelRule  ModelRule `json:"model_rule"`
	ModelsUsed []string  `json:"models_used"`
	// Text is the agent's final text, uncapped (the model gets it framed
	// and capped, with a note when the agent stopped at its turn limit).
	Text string `json:"text"`
	// Error says why a failed agent failed.
	Error string `json:"error,omitempty"`
	// MaxTurnsHit is true when the agent stopped at its turn limit.
	MaxTurnsHit bool `json:"max_turns_hit,omitempty"`
	// Turns counts the agent's own model requests; ToolUses its tool
	// calls, ToolStats per tool name.
	Turns     int            `json:"turns"`
	ToolUses  int            `json:"tool_uses"`
	ToolStats map[string]int `json:"tool_stats"`
	// Usage covers the agent and every agent it started.
	Usage          llm.Usage     `json:"usage"`
	Duration       time.Duration `json:"duration_ns"`
	TranscriptPath string        `json:"transcript_path,omitempty"`
	Receipt        Receipt       `json:"receipt"`
	// Worktree is what became of the agent's own worktree (isolation:
	// worktree); nil without one.
	Worktree *WorktreeOutcome `json:"worktree,omitempty"`
	// Continuable is true when SendMessage can continue the agent once it
	// has ended (S-8.2): it keeps a transcript and is neither one-shot nor
	// a fork.
	Continuable bool `json:"continuable"`
	// StructuredOutput is the agent's result as JSON that matched its
	// output schema (S-15.6: the Agent call's output_schema or its
	// definition's outputSchema); nil without a schema or a match.
	StructuredOutput json.RawMessage `json:"structured_output,omitempty"`
	// Subtype says how a failed agent failed when a plain error does not:
	// ErrorMaxStructuredOutputRetries when it spent its attempts without
	// a StructuredOutput call that matched its schema.
	Subtype Subtype `json:"subtype,omitempty"`
	// Budget is what the agent's subtree spent of its budget (S-15.2);
	// nil when no budget bounded it.
	Budget *BudgetSpend `json:"budget,omitempty"`
}

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
	// servers: its inline servers starting and its required servers
	// connecting. It is the servers' start-up, apart from cadre's part of
	// the spawn.
	MCPStart time.Duration `json:"mcp_start_ns,omitempty"`
	// Budget is what the spawn reserved for the child's subtree and why
	// (S-15.2); nil when no budget bounds it.
	Budget *BudgetGrant `json:"budget,omitempty"`
}

// BudgetGrant is a child's reservation (S-15.2): each limit is the least
// of what the Agent call asked, what its definition sets and what its
// parent had left; Why says which won for each. Zero fields do not
// limit.
type BudgetGrant struct {
	USD      float64       `json:"usd,omitempty"`
	Tokens   int64         `json:"tokens,omitempty"`
	Turns    int           `json:"turns,omitempty"`
	WallTime time.Duration `json:"wall_time_ns,omitempty"`
	Why      string        `json:"why"`
}

// Spend is what an agent's subtree spent of a budget: cost at list
// prices, tokens as billed, model turns.
type Spend struct {
	USD    float64 `json:"usd"`
	Tokens int64   `json:"tokens"`
	Turns  int     `json:"turns"`
}

// BudgetSpend is what a budgeted agent's subtree spent and what of its
// reservation went back to its parent when it ended.
type BudgetSpend struct {
	Spent    Spend `json:"spent"`
	Returned Spend `json:"returned"`
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
	// ModelRuleForced: the session forces every sub-agent's model.
	ModelRuleForced ModelRule = "forced"
	// ModelRuleCall: the Agent call's model field.
	ModelRuleCall ModelRule = "call"
	// ModelRuleDefinition: the definition's model key.
	ModelRuleDefinition ModelRule = "definition"
	// ModelRuleSubagentModel: the session's sub-agent model.
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
	// RefusedTotal: the session has started its limit of sub-agents.
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
	// RefusedForkNested: a fork called Agent; a fork cannot start agents
	// (S-6.3).
	RefusedForkNested RefusalReason = "fork_nested"
	// RefusedMCP: a server the definition requires (requiredMcpServers)
	// failed, has no tools or did not connect in time.
	RefusedMCP RefusalReason = "mcp"
	// RefusedOutputSchema: the output schema the child was given (the
	// Agent call's output_schema or its definition's outputSchema) is
	// not a usable JSON Schema, or a fork was given one.
	RefusedOutputSchema RefusalReason = "output_schema"
	// RefusedBudget: the calling agent's budget had nothing left to
	// reserve (S-15.2).
	RefusedBudget RefusalReason = "budget"
)
