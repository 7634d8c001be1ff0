package cadre

import (
	"time"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/permission"
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
	// EventTaskStarted carries Task: a sub-agent was started.
	EventTaskStarted EventType = "task_started"
	// EventTaskCompleted carries Subagent: a sub-agent ended (completed,
	// failed or killed).
	EventTaskCompleted EventType = "task_completed"
	// EventResult carries Result; it is the last event.
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

	// MessageID is the provider's id of an EventAssistant's answer, Model
	// the model that gave it, StopReason why it stopped and APIDuration
	// how long its request took (retries included).
	MessageID   string
	Model       string
	StopReason  llm.StopReason
	APIDuration time.Duration
}

// TaskInfo describes a sub-agent as it starts.
type TaskInfo struct {
	AgentID     string  `json:"task_id"`
	ToolUseID   string  `json:"tool_use_id"`
	AgentType   string  `json:"agent_type"`
	Description string  `json:"description"`
	Background  bool    `json:"background"`
	Depth       int     `json:"depth"`
	Parent      string  `json:"parent"`
	Receipt     Receipt `json:"receipt"`
}

// SubagentResult is the structured result of one sub-agent (S-3.6), for
// the library, hooks and stream-json; the model gets a framed text instead.
type SubagentResult struct {
	AgentID   string `json:"agent_id"`
	AgentType string `json:"agent_type"`
	ToolUseID string `json:"tool_use_id"`
	// Status is completed, failed or killed.
	Status string `json:"status"`
	// Model is the resolved model and ModelRule the rule that chose it.
	Model      string   `json:"model"`
	ModelRule  string   `json:"model_rule"`
	ModelsUsed []string `json:"models_used"`
	// Text is the final report (uncapped).
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
}

// SubagentStats counts the sub-agents of a run.
type SubagentStats struct {
	Spawned   int `json:"spawned"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
	Killed    int `json:"killed"`
	// Refused counts spawns turned down, by reason (depth, concurrency,
	// total, permission, unknown_type, no_tools, fork).
	Refused map[string]int `json:"refused"`
}

// Init describes a run as it starts.
type Init struct {
	SessionID      string
	Model          string
	Cwd            string
	Tools          []string
	TranscriptPath string
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
}
