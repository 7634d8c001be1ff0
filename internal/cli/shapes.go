package cli

import (
	"bytes"
	"encoding/json"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/mcp"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/tool"
)

// The JSON shapes of stream-json and json output. Key names and types are
// those Claude Code 2.1.x prints (and the Claude Agent SDK's type
// declarations describe), so a consumer written for `claude -p` reads
// cadre's output unchanged; the golden test in shapes_test.go holds them
// to the keys Claude Code really emitted. cadre's own figures travel under
// the one key "cadre", which Claude Code never uses.

// protocolVersion is the Claude Code version whose output and control
// protocol cadre speaks; init's claude_code_version carries it so SDK
// programs that feature-detect by version keep working. cadre's own
// version is in init's cadre.version.
const protocolVersion = "2.1.328"

// initJSON is the system/init event.
type initJSON struct {
	Type              string          `json:"type"`
	Subtype           string          `json:"subtype"`
	Cwd               string          `json:"cwd"`
	SessionID         string          `json:"session_id"`
	Tools             []string        `json:"tools"`
	MCPServers        []mcpServerJSON `json:"mcp_servers"`
	Model             string          `json:"model"`
	PermissionMode    permission.Mode `json:"permissionMode"`
	SlashCommands     []string        `json:"slash_commands"`
	APIKeySource      string          `json:"apiKeySource"`
	ClaudeCodeVersion string          `json:"claude_code_version"`
	OutputStyle       string          `json:"output_style"`
	Agents            []string        `json:"agents"`
	Skills            []string        `json:"skills"`
	Plugins           []pluginJSON    `json:"plugins"`
	UUID              string          `json:"uuid"`
	AddDirs           []string        `json:"additional_directories"`
	Cadre             initExtra       `json:"cadre"`
}

// mcpServerJSON is one MCP server of init.
type mcpServerJSON struct {
	Name   string    `json:"name"`
	Status mcp.State `json:"status"`
}

// pluginJSON is one plugin of init; cadre loads none yet.
type pluginJSON struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

// initExtra is cadre's part of init.
type initExtra struct {
	Version        string `json:"version"`
	Provider       string `json:"provider,omitempty"`
	TranscriptPath string `json:"transcript_path,omitempty"`
	// Trust says where the permission mode and each widening setting came
	// from, and what an untrusted workspace did not get (issue 9).
	Trust *trustJSON `json:"trust,omitempty"`
	// Sandbox says whether Bash runs in the sandbox, for which agents and
	// with the network or not (issue 9).
	Sandbox sandboxJSON `json:"sandbox"`
}

// sandboxJSON is init's account of the Bash sandbox.
type sandboxJSON struct {
	Enabled bool `json:"enabled"`
	// Agents is "all" or "background" (only background sub-agents).
	Agents   string   `json:"agents,omitempty"`
	Network  *bool    `json:"network,omitempty"`
	Writable []string `json:"writable,omitempty"`
	// Unavailable says why a sandbox asked for is not running.
	Unavailable string `json:"unavailable,omitempty"`
}

// trustJSON is init's account of workspace trust and widening settings.
type trustJSON struct {
	Trusted        bool            `json:"trusted"`
	Source         string          `json:"source,omitempty"`
	PermissionMode permission.Mode `json:"permission_mode"`
	ModeSource     string          `json:"permission_mode_source,omitempty"`
	Widenings      []settingJSON   `json:"widenings"`
	Ignored        []settingJSON   `json:"ignored"`
}

// settingJSON is one setting and the file or flag that set it.
type settingJSON struct {
	What   string `json:"what"`
	Source string `json:"source"`
}

// apiMessage is an assistant message shaped like the Messages API's.
type apiMessage struct {
	ID           string      `json:"id"`
	Type         string      `json:"type"`
	Role         llm.Role    `json:"role"`
	Model        string      `json:"model"`
	Content      []llm.Block `json:"content"`
	StopReason   *string     `json:"stop_reason"`
	StopSequence *string     `json:"stop_sequence"`
	Usage        llm.Usage   `json:"usage"`
}

// assistantJSON is an assistant event. AgentID, SubagentType and
// TaskDescription are set on a sub-agent's events only.
type assistantJSON struct {
	Type            string     `json:"type"`
	Message         apiMessage `json:"message"`
	ParentToolUseID *string    `json:"parent_tool_use_id"`
	AgentID         string     `json:"agent_id,omitempty"`
	SessionID       string     `json:"session_id"`
	UUID            string     `json:"uuid"`
	Timestamp       string     `json:"timestamp"`
	SubagentType    string     `json:"subagent_type,omitempty"`
	TaskDescription string     `json:"task_description,omitempty"`
}

// userMessage is the message of a user event. Content holds llm.Block
// values, or toolResultJSON for a tool result whose content is one text.
type userMessage struct {
	Role    llm.Role `json:"role"`
	Content []any    `json:"content"`
}

// toolResultJSON is a tool_result block whose content is a string, as
// Claude Code writes the result of every tool but Agent.
type toolResultJSON struct {
	ToolUseID string `json:"tool_use_id"`
	Type      string `json:"type"`
	Content   string `json:"content"`
	IsError   bool   `json:"is_error"`
}

// toolResultBlocksJSON is a tool_result block whose content is a list of
// blocks (an Agent call's result, an image): llm.Block with is_error
// always written.
type toolResultBlocksJSON struct {
	ToolUseID string      `json:"tool_use_id"`
	Type      string      `json:"type"`
	Content   []llm.Block `json:"content"`
	IsError   bool        `json:"is_error"`
}

// userJSON is a user event: a tool result, or a sub-agent's prompt.
// ToolUseResult is set on the main agent's tool results, as Claude Code
// does.
type userJSON struct {
	Type            string      `json:"type"`
	Message         userMessage `json:"message"`
	ParentToolUseID *string     `json:"parent_tool_use_id"`
	AgentID         string      `json:"agent_id,omitempty"`
	SessionID       string      `json:"session_id"`
	UUID            string      `json:"uuid"`
	Timestamp       string      `json:"timestamp"`
	ToolUseResult   any         `json:"tool_use_result,omitempty"`
	SubagentType    string      `json:"subagent_type,omitempty"`
	TaskDescription string      `json:"task_description,omitempty"`
	IsReplay        bool        `json:"isReplay,omitempty"`
}

// agentToolResult is tool_use_result of an Agent call: the sub-agent's
// structured result in Claude Code's key names.
type agentToolResult struct {
	Status            task.Status `json:"status"`
	Prompt            string      `json:"prompt"`
	AgentID           string      `json:"agentId"`
	AgentType         string      `json:"agentType"`
	Content           []llm.Block `json:"content"`
	ToolsUsed         []string    `json:"toolsUsed"`
	ResolvedModel     string      `json:"resolvedModel"`
	TotalDurationMS   int64       `json:"totalDurationMs"`
	TotalTokens       int64       `json:"totalTokens"`
	TotalToolUseCount int         `json:"totalToolUseCount"`
	Usage             llm.Usage   `json:"usage"`
	// CanContinueAgent: SendMessage can continue the agent (S-8.2).
	CanContinueAgent bool `json:"canContinueAgent"`
}

// asyncLaunchResult is tool_use_result of an Agent call whose agent runs
// in the background: the Agent SDK's AgentOutput of status
// async_launched. OutputFile is the agent's transcript ("" when
// transcripts are off).
type asyncLaunchResult struct {
	Status        string `json:"status"`
	IsAsync       bool   `json:"isAsync"`
	AgentID       string `json:"agentId"`
	Description   string `json:"description"`
	ResolvedModel string `json:"resolvedModel,omitempty"`
	Prompt        string `json:"prompt"`
	OutputFile    string `json:"outputFile"`
	// CanReadOutputFile: OutputFile is there to read (transcripts on).
	CanReadOutputFile bool `json:"canReadOutputFile"`
	// CanContinueAgent: SendMessage can continue the agent once it ends
	// (it keeps a transcript and is not a fork, S-8.2).
	CanContinueAgent bool `json:"canContinueAgent"`
}

// backgroundTasksJSON is system/background_tasks_changed: the whole set
// of live background tasks, written when it changes (a level, which a
// consumer replaces its set with).
type backgroundTasksJSON struct {
	Type      string               `json:"type"`
	Subtype   string               `json:"subtype"`
	Tasks     []backgroundTaskJSON `json:"tasks"`
	UUID      string               `json:"uuid"`
	SessionID string               `json:"session_id"`
}

// backgroundTaskJSON is one live background task. ParentTaskID is the
// sub-agent that launched it, empty when the main agent did.
type backgroundTaskJSON struct {
	TaskID       string `json:"task_id"`
	RunID        string `json:"run_id,omitempty"`
	TaskType     string `json:"task_type"`
	SubagentType string `json:"subagent_type,omitempty"`
	Description  string `json:"description"`
	ParentTaskID string `json:"parent_task_id,omitempty"`
}

// taskUsage is the usage of task events: the tokens of the agent's latest
// request (its context), its tool calls and its age.
type taskUsage struct {
	TotalTokens int64 `json:"total_tokens"`
	ToolUses    int   `json:"tool_uses"`
	DurationMS  int64 `json:"duration_ms"`
}

// taskStartedJSON is system/task_started (S-7.6).
type taskStartedJSON struct {
	Type           string         `json:"type"`
	Subtype        string         `json:"subtype"`
	TaskID         string         `json:"task_id"`
	RunID          string         `json:"run_id,omitempty"`
	ToolUseID      string         `json:"tool_use_id"`
	Description    string         `json:"description"`
	SubagentType   string         `json:"subagent_type"`
	IsBackgrounded bool           `json:"is_backgrounded"`
	SpawnDepth     int            `json:"spawn_depth"`
	TaskType       string         `json:"task_type"`
	Prompt         string         `json:"prompt"`
	UUID           string         `json:"uuid"`
	SessionID      string         `json:"session_id"`
	Cadre          taskStartExtra `json:"cadre"`
}

// taskStartExtra is cadre's part of task_started: who started the agent
// and what the spawn granted.
type taskStartExtra struct {
	Parent  string      `json:"parent"`
	Receipt run.Receipt `json:"receipt"`
	// Teammate: a teammate's name, team and state (issue 25).
	Teammate *run.TeammateInfo `json:"teammate,omitempty"`
}

// taskProgressJSON is system/task_progress, sent when a sub-agent calls
// tools.
type taskProgressJSON struct {
	Type         string    `json:"type"`
	Subtype      string    `json:"subtype"`
	TaskID       string    `json:"task_id"`
	RunID        string    `json:"run_id,omitempty"`
	ToolUseID    string    `json:"tool_use_id"`
	Description  string    `json:"description"`
	SubagentType string    `json:"subagent_type"`
	Usage        taskUsage `json:"usage"`
	LastToolName string    `json:"last_tool_name"`
	UUID         string    `json:"uuid"`
	SessionID    string    `json:"session_id"`
	// Cadre is set for a budgeted agent (its spend against its budget) and
	// for a teammate (its state, issue 25); nil for other tasks.
	Cadre *taskProgressExtra `json:"cadre,omitempty"`
}

// taskProgressExtra is task_progress's cadre object: a budgeted task's
// spend so far against what its spawn reserved (S-15.2), and a
// teammate's parent, receipt and state (issue 25).
type taskProgressExtra struct {
	Parent   string            `json:"parent,omitempty"`
	Receipt  *run.Receipt      `json:"receipt,omitempty"`
	Teammate *run.TeammateInfo `json:"teammate,omitempty"`
	Spent    *run.Spend        `json:"budget_spent,omitempty"`
	Reserved *run.BudgetGrant  `json:"budget_reserved,omitempty"`
}

// taskPatch is the change a task_updated event reports.
type taskPatch struct {
	Status task.Status `json:"status"`
	// Description is set on the pending update (a queued Agent call).
	Description string `json:"description,omitempty"`
	EndTime     int64  `json:"end_time,omitempty"` // 0 only while pending
	Error       string `json:"error,omitempty"`
}

// taskUpdatedJSON is system/task_updated.
type taskUpdatedJSON struct {
	Type      string    `json:"type"`
	Subtype   string    `json:"subtype"`
	TaskID    string    `json:"task_id"`
	RunID     string    `json:"run_id,omitempty"`
	Patch     taskPatch `json:"patch"`
	UUID      string    `json:"uuid"`
	SessionID string    `json:"session_id"`
}

// taskNotificationJSON is system/task_notification: how a sub-agent
// ended. Status is completed, failed or stopped (Claude Code's word for
// killed).
type taskNotificationJSON struct {
	Type       string             `json:"type"`
	Subtype    string             `json:"subtype"`
	TaskID     string             `json:"task_id"`
	RunID      string             `json:"run_id,omitempty"`
	ToolUseID  string             `json:"tool_use_id"`
	Status     notificationStatus `json:"status"`
	OutputFile string             `json:"output_file"`
	Summary    string             `json:"summary"`
	// SummaryIsReport: Summary is the agent's final report, not an
	// account of its failure.
	SummaryIsReport bool          `json:"summary_is_report"`
	Usage           taskUsage     `json:"usage"`
	UUID            string        `json:"uuid"`
	SessionID       string        `json:"session_id"`
	Cadre           subagentExtra `json:"cadre"`
}

// notificationStatus is a task_notification's status: how a task ended,
// in Claude Code's words.
type notificationStatus string

// Notification statuses.
const (
	notifyCompleted notificationStatus = "completed"
	notifyFailed    notificationStatus = "failed"
	// notifyStopped is Claude Code's word for a killed task.
	notifyStopped notificationStatus = "stopped"
)

// notificationStatusOf is the notification status of a task that ended
// in s: killed is stopped; anything else that is not completed failed.
func notificationStatusOf(s task.Status) notificationStatus {
	switch s {
	case task.Completed:
		return notifyCompleted
	case task.Killed, task.BudgetExhausted: // budget_exhausted is in cadre.status
		return notifyStopped
	case "":
		return notifyStopped
	}
	return notifyFailed
}

// subagentExtra is cadre's structured sub-agent result (S-3.6) without the
// report text, which is the notification's summary.
type subagentExtra struct {
	AgentType   string         `json:"agent_type"`
	Model       string         `json:"model"`
	ModelRule   string         `json:"model_rule"`
	ModelsUsed  []string       `json:"models_used"`
	Error       string         `json:"error,omitempty"`
	MaxTurnsHit bool           `json:"max_turns_hit,omitempty"`
	Turns       int            `json:"turns"`
	ToolUses    int            `json:"tool_uses"`
	ToolStats   map[string]int `json:"tool_stats"`
	Usage       llm.Usage      `json:"usage"`
	DurationMS  int64          `json:"duration_ms"`
	Receipt     run.Receipt    `json:"receipt"`
	// StructuredOutput is the JSON that matched the agent's output schema
	// (S-15.6); Subtype error_max_structured_output_retries says it spent
	// its attempts without one.
	StructuredOutput json.RawMessage `json:"structured_output,omitempty"`
	Subtype          run.Subtype     `json:"subtype,omitempty"`
	// Status is set when it says more than the notification's status:
	// budget_exhausted (the report is partial); Budget is what a
	// budgeted agent spent and returned (S-15.2).
	Status task.Status      `json:"status,omitempty"`
	Budget *run.BudgetSpend `json:"budget,omitempty"`
}

// retryJSON is system/api_retry: a model request failed and is retried.
// ErrorStatus is null for failures without an HTTP status.
type retryJSON struct {
	Type            string  `json:"type"`
	Subtype         string  `json:"subtype"`
	Attempt         int     `json:"attempt"`
	MaxRetries      int     `json:"max_retries"`
	RetryDelayMS    int64   `json:"retry_delay_ms"`
	ErrorStatus     *int    `json:"error_status"`
	Error           string  `json:"error"`
	ParentToolUseID *string `json:"parent_tool_use_id"`
	UUID            string  `json:"uuid"`
	SessionID       string  `json:"session_id"`
	Cadre           struct {
		Cause   llm.RetryCause `json:"cause"`
		Message string         `json:"message"`
		AgentID string         `json:"agent_id,omitempty"`
	} `json:"cadre"`
}

// streamEventJSON is a stream_event (--include-partial-messages): a piece
// of an answer as it streams, in the Messages API's event shapes.
type streamEventJSON struct {
	Type            string  `json:"type"`
	Event           any     `json:"event"`
	ParentToolUseID *string `json:"parent_tool_use_id"`
	UUID            string  `json:"uuid"`
	SessionID       string  `json:"session_id"`
}

// resultUsage is the result's usage: the main agent's requests, in the
// Messages API's usage shape.
type resultUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	ServerToolUse            struct {
		WebSearchRequests int `json:"web_search_requests"`
		WebFetchRequests  int `json:"web_fetch_requests"`
	} `json:"server_tool_use"`
	ServiceTier   string `json:"service_tier"`
	CacheCreation struct {
		Ephemeral1h int64 `json:"ephemeral_1h_input_tokens"`
		Ephemeral5m int64 `json:"ephemeral_5m_input_tokens"`
	} `json:"cache_creation"`
}

// modelUsageJSON is one model's entry of modelUsage: every request of
// every agent that used the model.
type modelUsageJSON struct {
	InputTokens              int64   `json:"inputTokens"`
	OutputTokens             int64   `json:"outputTokens"`
	CacheReadInputTokens     int64   `json:"cacheReadInputTokens"`
	CacheCreationInputTokens int64   `json:"cacheCreationInputTokens"`
	WebSearchRequests        int     `json:"webSearchRequests"`
	CostUSD                  float64 `json:"costUSD"`
	ContextWindow            int64   `json:"contextWindow"`
	MaxOutputTokens          int64   `json:"maxOutputTokens"`
}

// killedJSON counts killed sub-agents by who killed them.
type killedJSON struct {
	Parent int `json:"parent"`
	User   int `json:"user"`
	System int `json:"system"`
}

// subagentStatsJSON is the result's sub-agent statistics (S-7.6).
type subagentStatsJSON struct {
	Spawned   int `json:"spawned"`
	Requested struct {
		Background int `json:"background"`
		Foreground int `json:"foreground"`
		Unset      int `json:"unset"`
	} `json:"requested"`
	StartedInBackground int `json:"started_in_background"`
	MaxDepth            int `json:"max_depth"`
	SpawnedBySubagents  int `json:"spawned_by_subagents"`
	// Teammates counts the teammates started (issue 25).
	Teammates int        `json:"teammates,omitempty"`
	Completed int        `json:"completed"`
	Failed    int        `json:"failed"`
	Killed    killedJSON `json:"killed"`
	Refused   struct {
		DepthLimit       int `json:"depth_limit"`
		ConcurrencyLimit int `json:"concurrency_limit"`
		Budget           int `json:"budget"`
	} `json:"refused"`
	ByType map[string]int `json:"by_type"`
}

// resultJSON is the last event of stream-json and the whole of json
// output. Errors is set on error subtypes.
type resultJSON struct {
	Type              string                    `json:"type"`
	Subtype           run.Subtype               `json:"subtype"`
	IsError           bool                      `json:"is_error"`
	DurationMS        int64                     `json:"duration_ms"`
	DurationAPIMS     int64                     `json:"duration_api_ms"`
	NumTurns          int                       `json:"num_turns"`
	Result            string                    `json:"result"`
	StopReason        *string                   `json:"stop_reason"`
	SessionID         string                    `json:"session_id"`
	TotalCostUSD      float64                   `json:"total_cost_usd"`
	Usage             resultUsage               `json:"usage"`
	ModelUsage        map[string]modelUsageJSON `json:"modelUsage"`
	PermissionDenials []permission.Denial       `json:"permission_denials"`
	SubagentStats     subagentStatsJSON         `json:"subagent_stats"`
	Errors            []string                  `json:"errors,omitempty"`
	StructuredOutput  json.RawMessage           `json:"structured_output,omitempty"`
	TerminalReason    string                    `json:"terminal_reason"`
	APIErrorStatus    *int                      `json:"api_error_status"`
	// ResultIndex numbers the run's results from 0 in the order they are
	// written (one per turn of the main agent).
	ResultIndex int `json:"result_index"`
	// Origin is set on the result of a turn run on task notifications.
	Origin *originJSON `json:"origin,omitempty"`
	UUID   string      `json:"uuid"`
	Cadre  resultExtra `json:"cadre"`
}

// resultExtra is cadre's part of the result: the whole run's usage (every
// agent), the main agent's tool calls, sub-agent counts by cadre's refusal
// reasons, the transcript, and whether any model's price was unknown.
type resultExtra struct {
	Version    string    `json:"version"`
	TotalUsage llm.Usage `json:"total_usage"`
	// ToolUses counts the main agent's tool calls in this result's turn;
	// TotalTurns its model requests in every turn of the run so far.
	ToolUses       int               `json:"tool_uses"`
	TotalTurns     int               `json:"total_turns"`
	Subagents      run.SubagentStats `json:"subagents"`
	TranscriptPath string            `json:"transcript_path,omitempty"`
	UnpricedModels []string          `json:"unpriced_models,omitempty"`
	// Todos are the agents' todo lists at the end, by agent id ("main"
	// for the main agent), when any is not empty (todos.go).
	Todos map[string][]tool.Todo `json:"todos,omitempty"`
	// Tasks lists every sub-agent task of the session (tasksjson.go).
	Tasks []taskJSON `json:"tasks,omitzero"`
}

// todoToolResult is tool_use_result of a TodoWrite call, as Claude Code
// writes it: the list before and the list the call wrote (todos.go).
type todoToolResult struct {
	OldTodos []tool.Todo `json:"oldTodos"`
	NewTodos []tool.Todo `json:"newTodos"`
}

// marshalLine encodes v as one line of JSON, without HTML escaping.
func marshalLine(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// budgetStatus is cadre.status of a task_notification: set only for a
// status Claude Code has no word for (budget_exhausted).
func budgetStatus(s task.Status) task.Status {
	if s == task.BudgetExhausted {
		return s
	}
	return ""
}
