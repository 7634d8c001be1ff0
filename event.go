package cadre

import (
	"time"

	"github.com/cadre-dev/cadre/hooks"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/tool"
)

// EventType names what an Event reports.
type EventType string

// Event types, in the order a run produces them: one EventInit, then the
// conversation as it happens, and one EventResult last.
const (
	// EventInit carries Init: the session, model and tools of the run.
	EventInit EventType = "init"
	// EventText carries Text, a piece of the model's answer as it streams.
	EventText EventType = "text"
	// EventThinking carries Text, a piece of the model's thinking.
	EventThinking EventType = "thinking"
	// EventRetry carries Retry: a model request failed and is redone; text
	// streamed since the last EventAssistant is void.
	EventRetry EventType = "retry"
	// EventAssistant carries Message, a complete answer, with Usage,
	// MessageID, Model, StopReason and APIDuration of its request.
	EventAssistant EventType = "assistant"
	// EventToolStart carries Call, a tool call about to run.
	EventToolStart EventType = "tool_start"
	// EventToolEnd carries Call and ToolResult.
	EventToolEnd EventType = "tool_end"
	// EventUser carries Message, the tool results sent back to the model.
	EventUser EventType = "user"
	// EventTaskPending carries Task: an Agent call was admitted but waits
	// in the spawn gate's queue for a running slot (S-5.7). Its
	// EventTaskStarted follows when it gets one, or its
	// EventTaskCompleted (killed) when the run ends first.
	EventTaskPending EventType = "task_pending"
	// EventTaskStarted carries Task: a sub-agent started running.
	EventTaskStarted EventType = "task_started"
	// EventTaskCompleted carries Subagent: a sub-agent ended (completed,
	// failed or killed).
	EventTaskCompleted EventType = "task_completed"
	// EventNotification carries Notification: a background task's end was
	// delivered to the agent AgentID ("" for the main agent) with the
	// request that was just answered (S-7.3); each notification is
	// delivered exactly once.
	EventNotification EventType = "notification"
	// EventResult carries Result; it is the last event, but for the error
	// that follows the result of a failed run.
	EventResult EventType = "result"
)

// Event is one item of a run's stream.
type Event struct {
	Type EventType
	// AgentID is "" for the main agent.
	AgentID string
	// ParentToolUseID is the Agent tool call that started a sub-agent.
	ParentToolUseID string

	Text       string
	Message    *llm.Message
	Usage      llm.Usage
	Call       *llm.Block
	ToolResult *ToolResult
	Retry      *llm.Retry
	Init       *Init
	Task       *TaskInfo
	Subagent   *SubagentResult
	Result     *Result
	// Notification is set on EventNotification.
	Notification *task.Notification

	// MessageID is the provider's id of an EventAssistant's answer, Model
	// the model that gave it, StopReason why it stopped and APIDuration
	// how long its request took (retries included).
	MessageID   string
	Model       string
	StopReason  llm.StopReason
	APIDuration time.Duration

	// Hook is the hook run of EventHookStarted and EventHookFinished
	// (hooks.go); AgentID is the agent whose event fired it.
	Hook *hooks.Run
	// Todos is set on EventTodos (todos.go).
	Todos *TodoUpdate
}

// TaskInfo describes a sub-agent as it waits for a slot or starts.
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
	// a fork (resume.go).
	Continuable bool `json:"continuable"`
}

// SubagentStats counts the sub-agents of a run. Every spawned sub-agent
// ends completed, failed or killed (one that was killed while it waited
// for a slot included).
type SubagentStats struct {
	Spawned   int `json:"spawned"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
	Killed    int `json:"killed"`
	// Queued counts the spawned sub-agents that waited for a slot.
	Queued int `json:"queued"`
	// Refused counts Agent calls that started nothing, by reason.
	Refused map[RefusalReason]int `json:"refused"`
}

// Init describes a run as it starts.
type Init struct {
	SessionID      string
	Model          string
	Cwd            string
	Tools          []string
	TranscriptPath string
	// MCPServers are the configured MCP servers and their status when the
	// run starts (most are still pending: they connect in the background).
	MCPServers []MCPInitServer
	// PermissionMode is the main agent's permission mode in force.
	PermissionMode string
	// Provenance is Config.Provenance: where widening settings came from.
	Provenance *Provenance

	// Worktrees is what the session's start did about agents' worktrees
	// earlier sessions left (unchanged ones removed, changed ones listed);
	// nil when there were none.
	Worktrees *WorktreeHousekeeping
	// Sandbox is what the Bash sandbox does (Config.Sandbox); nil when
	// none was asked for (issue 9).
	Sandbox *SandboxStatus
}

// ToolResult is how one tool call ended.
type ToolResult struct {
	Text     string
	IsError  bool
	Denied   bool
	Duration time.Duration
}

// Result sums up a finished run.
type Result struct {
	// Text is the final answer.
	Text string
	// IsError is true when the run did not finish normally; Subtype says
	// how: "success", "error_max_turns" or "error_during_execution".
	IsError bool
	Subtype string
	// NumTurns counts model requests of the main agent.
	NumTurns int
	// ToolUses counts tool calls of the main agent.
	ToolUses int
	// Duration is the run's wall time.
	Duration time.Duration
	// Usage totals every model request of the run.
	Usage llm.Usage
	// SessionID names the session; TranscriptPath is its transcript ("" when
	// transcripts are off).
	SessionID      string
	TranscriptPath string
	// PermissionDenials lists the tool calls that were denied, by every
	// agent of the run.
	PermissionDenials []permission.Denial
	// Subagents counts the run's sub-agents.
	Subagents SubagentStats
	// Error says why a run with Subtype error_during_execution failed; the
	// same error follows the result in Run's stream.
	Error string
	// ModelUsage is Usage by model id, every agent included; CostUSD is
	// what it cost at Config.Prices, and UnpricedModels lists the models
	// the table has no price for (counted as 0).
	ModelUsage     map[string]llm.Usage
	CostUSD        float64
	UnpricedModels []string
	// Todos are the agents' todo lists at the end of the run, by agent id
	// ("main" for the main agent); agents with an empty list are left out.
	Todos map[string][]tool.Todo
}
