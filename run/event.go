package run

import (
	"encoding/json"
	"time"

	"github.com/cadre-dev/cadre/hooks"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/mcp"
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
	// EventTaskProgress carries Task with its Progress as the task
	// registry has it, each time a sub-agent makes a tool call (S-7.2,
	// S-7.6).
	EventTaskProgress EventType = "task_progress"
	// EventNotification carries Notification: a background task's end was
	// delivered to the agent AgentID ("" for the main agent) with the
	// request that was just answered (S-7.3); each notification is
	// delivered exactly once.
	EventNotification EventType = "notification"
	// EventTodos carries Todos: an agent changed its todo list with
	// TodoWrite (S-2). Each agent has its own list; AgentID says whose it
	// is. It follows the EventToolEnd of the TodoWrite call.
	EventTodos EventType = "todos"
	// EventTeamTasks carries TeamTasks: the team's shared task list after
	// an agent changed it with TaskCreate or TaskUpdate (teams on). It
	// follows the EventToolEnd of that call.
	EventTeamTasks EventType = "team_tasks"
	// EventTeamMessage carries TeamMessage: one message of an agent team's
	// mailbox traffic (issue 25) as it is posted — a SendMessage between
	// the lead and a teammate or between teammates, structured or not, or
	// a teammate's idle notice to the lead. AgentID is the sender's.
	EventTeamMessage EventType = "team_message"
	// EventHookStarted carries Hook: a hook command or callback started.
	// Hook events come only from hooks that run during a run; SessionEnd's
	// hooks run when the session closes, where there is no stream.
	EventHookStarted EventType = "hook_started"
	// EventHookFinished carries Hook with its exit code, duration, output
	// and decision.
	EventHookFinished EventType = "hook_finished"
	// EventCompacting carries Compact (its Trigger): the agent's
	// conversation is being compacted (S-1.5; stream-json's system/status
	// "compacting").
	EventCompacting EventType = "compacting"
	// EventCompactBoundary carries Compact: the compaction is done. It is
	// the summary request's own turn: Usage, Model, MessageID and
	// APIDuration are that request's, counted in the agent's usage.
	EventCompactBoundary EventType = "compact_boundary"
	// EventContextWarning carries Compact (PreTokens, Threshold): the
	// agent's context is nearing the point where it will be compacted.
	EventContextWarning EventType = "context_warning"
	// EventWarning carries Text: part of the session's record could not
	// be written — a task-journal or transcript write failed — though the
	// run goes on. The exactly-once delivery of notifications rests on the
	// task journal, and resuming on the transcripts, so these are never
	// dropped: each comes once, just before the Result that lists it in
	// Result.Warnings (the next run's when it happened between runs).
	EventWarning EventType = "warning"
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

	// Hook is the hook run of EventHookStarted and EventHookFinished;
	// AgentID is the agent whose event fired it.
	Hook *hooks.Run
	// Todos is set on EventTodos.
	Todos *TodoUpdate
	// TeamTasks is the whole task list on EventTeamTasks, by id.
	TeamTasks []TeamTask
	// TeamMessage is set on EventTeamMessage.
	TeamMessage *TeamMessage
	// Compact is set on EventCompacting, EventCompactBoundary and
	// EventContextWarning.
	Compact *Compaction
	// Context is set on EventAssistant: how full the agent's context is
	// after that answer (the TUI's context meter); zero on other events.
	Context ContextUse
}

// ContextUse is how much of its context window an agent uses: Tokens the
// size of its conversation after its latest answer (input, cache and
// output tokens of that request), Window the model's context window it
// compacts against, CompactAt the size at which it compacts automatically
// (0 when automatic compaction is off).
type ContextUse struct {
	Tokens    int64 `json:"tokens"`
	Window    int64 `json:"window"`
	CompactAt int64 `json:"compact_at,omitempty"`
}

// Compaction describes one compaction of an agent's conversation.
type Compaction struct {
	// Trigger is "auto" or "manual".
	Trigger string `json:"trigger"`
	// PreTokens is the context size before; PostTokens an estimate of it
	// after; Threshold the size at which the agent compacts.
	PreTokens  int64 `json:"pre_tokens"`
	PostTokens int64 `json:"post_tokens,omitempty"`
	Threshold  int64 `json:"threshold,omitempty"`
	// Duration is how long it took.
	Duration time.Duration `json:"duration,omitempty"`
	// Summary is what the model wrote.
	Summary string `json:"summary,omitempty"`
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
	MCPServers []mcp.InitServer
	// PermissionMode is the main agent's permission mode in force.
	PermissionMode permission.Mode
	// Provenance is where the session's widening settings came from.
	Provenance *Provenance

	// Worktrees is what the session's start did about agents' worktrees
	// earlier sessions left (unchanged ones removed, changed ones listed);
	// nil when there were none.
	Worktrees *WorktreeHousekeeping
	// Sandbox is what the Bash sandbox does; nil when none was asked for.
	Sandbox *SandboxStatus
}

// ToolResult is how one tool call ended.
type ToolResult struct {
	Text     string
	IsError  bool
	Denied   bool
	Duration time.Duration
	// Result is the tool's structured result as JSON (tool.Output.Result),
	// for programs that read the run; empty when the tool gives none.
	Result json.RawMessage
}

// TodoUpdate is one change of an agent's todo list.
type TodoUpdate struct {
	// ToolUseID is the TodoWrite call that made the change.
	ToolUseID string `json:"tool_use_id"`
	// Old is the list before the call; New the list the call wrote. When
	// every item of New is completed the agent's list is cleared (Current
	// is then empty), as in Claude Code.
	Old     []tool.Todo `json:"oldTodos"`
	New     []tool.Todo `json:"newTodos"`
	Current []tool.Todo `json:"current"`
}

// TeamTaskStatus is where a task of a team's task list stands.
type TeamTaskStatus string

// The statuses of a team task.
const (
	TeamTaskPending    TeamTaskStatus = "pending"
	TeamTaskInProgress TeamTaskStatus = "in_progress"
	TeamTaskCompleted  TeamTaskStatus = "completed"
)

// TeamTask is one task of a team's shared task list as shown to people.
type TeamTask struct {
	ID      string `json:"id"`
	Subject string `json:"subject"`
	// Status is pending, in_progress or completed.
	Status TeamTaskStatus `json:"status"`
	// Owner is the agent working on it; "" is unowned.
	Owner string `json:"owner,omitempty"`
	// BlockedBy are the open tasks it waits for.
	BlockedBy []string `json:"blockedBy,omitempty"`
}
