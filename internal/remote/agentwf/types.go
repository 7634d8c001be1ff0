package agentwf

import (
	"time"

	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/internal/remote/workspace"
	"github.com/cadre-dev/cadre/internal/telemetry"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/tool"
)

// Names the workflow, its queries and signal, and its activities are
// registered under.
const (
	// WorkflowName is the agent workflow (Agent).
	WorkflowName = "cadre.agent"
	// QueryEvents takes an index and returns the agent's events from it.
	QueryEvents = "events"
	// QueryProgress returns the agent's Progress.
	QueryProgress = "progress"
	// SignalMessage carries an executor.Message for the agent's next round.
	SignalMessage = "message"
	// ModelActivity and ToolActivity are the activities of one model call
	// and one tool call.
	ModelActivity = "cadre.model"
	ToolActivity  = "cadre.tool"
	// CheckoutActivity makes an agent's worktree on whichever worker
	// takes it; FinishActivity, on that worker, returns the agent's work.
	CheckoutActivity = "cadre.checkout"
	FinishActivity   = "cadre.finish"
	// SpanActivity records an ended agent's invoke_agent span on a
	// worker with telemetry on (telemetry.go).
	SpanActivity = "cadre.span"
)

// Checkout is the input of CheckoutActivity: the agent, its session and
// the repository and commit its tree starts from.
type Checkout struct {
	AgentID   string           `json:"agent_id"`
	SessionID string           `json:"session_id"`
	Source    workspace.Source `json:"source"`
	// Snapshot, when the agent moves because the worker holding its tree
	// died, is its tree after its last completed call: the new tree is
	// restored to it.
	Snapshot *workspace.Snapshot `json:"snapshot,omitempty"`
}

// Placement is where an agent with a workspace runs once its tree is
// checked out: the queue only the worker holding the tree polls, the
// tree, and how long a call may wait in that queue before the worker is
// taken for gone (the worker's setting, recorded with the checkout).
type Placement struct {
	Queue string        `json:"queue"`
	Dir   string        `json:"dir"`
	Wait  time.Duration `json:"wait_ns"`
	// Owner is the agent whose tree it is (a sub-agent works in its
	// parent's tree and does not finish it).
	Owner string `json:"owner"`
}

// Input starts an agent workflow: the spawn request, and for a run that
// continues an ended agent (SendMessage to it) the conversation so far
// and the message that continues it.
type Input struct {
	Request executor.SpawnRequest `json:"request"`
	History []llm.Message         `json:"history,omitempty"`
	Message *executor.Message     `json:"message,omitempty"`
	// Placement, for a sub-agent of an agent with a workspace, is its
	// parent's: it runs on the same worker in the same tree.
	Placement *Placement `json:"placement,omitempty"`
}

// Output is what an agent workflow returns: the structured result, the
// whole conversation (for continuing it) and every event of the agent
// and its sub-agents, in order.
type Output struct {
	Result   run.SubagentResult `json:"result"`
	Messages []llm.Message      `json:"messages"`
	Events   []run.Event        `json:"events"`
	// Work is what the agent left in its workspace (nil without one);
	// WorkError why it could not be brought back.
	Work      *workspace.Result `json:"work,omitempty"`
	WorkError string            `json:"work_error,omitempty"`
	// MessagesOmitted says Messages were left out and EventsTrimmed how
	// many of the oldest events lost their message bodies, so that the
	// output fits in one payload (payload.go).
	MessagesOmitted bool `json:"messages_omitted,omitempty"`
	EventsTrimmed   int  `json:"events_trimmed,omitempty"`
}

// Progress is a running agent's progress (QueryProgress).
type Progress struct {
	Turns    int       `json:"turns"`
	ToolUses int       `json:"tool_uses"`
	Tokens   int64     `json:"tokens"`
	LastTool string    `json:"last_tool,omitempty"`
	Usage    llm.Usage `json:"usage"`
}

// ModelCall is one model request of an agent (ModelActivity). The worker
// offers the tools named in Tools that it has, in that order.
type ModelCall struct {
	AgentID      string            `json:"agent_id"`
	ModelID      string            `json:"model"`
	System       string            `json:"system"`
	SystemPrefix string            `json:"system_prefix,omitempty"`
	Tools        []string          `json:"tools"`
	Messages     []llm.Message     `json:"messages"`
	CacheHints   []llm.CacheHint   `json:"cache_hints,omitempty"`
	Effort       llm.Effort        `json:"effort,omitempty"`
	Unavailable  map[string]string `json:"unavailable,omitempty"`
	// Extra are tools the workflow runs itself, offered after Tools: the
	// agent's StructuredOutput tool of its output schema (typed.go).
	Extra []llm.ToolSpec `json:"extra,omitempty"`
	// Budget offers the Agent tool's budget field (the agent has one).
	Budget bool `json:"budget,omitempty"`
	// MCPServers are the MCP servers the agent's definition names: the
	// worker offers their tools from its own configuration.
	MCPServers []string `json:"mcp_servers,omitempty"`
	// Trace is the agent's invoke_agent span on the workers, the parent
	// of the call's chat span; Session the launcher's session (empty
	// Trace: the launcher records no telemetry).
	Trace   executor.TraceContext `json:"trace,omitzero"`
	Session string                `json:"session,omitempty"`
}

// ModelAnswer is a model call's complete answer.
type ModelAnswer struct {
	Message     llm.Message    `json:"message"`
	Usage       llm.Usage      `json:"usage"`
	ID          string         `json:"id,omitempty"`
	Model       string         `json:"model,omitempty"`
	StopReason  llm.StopReason `json:"stop_reason,omitempty"`
	APIDuration time.Duration  `json:"api_duration_ns"`
}

// ToolCall is one tool call of an agent (ToolActivity), with what the
// worker needs to decide and run it: the agent's ceiling and mode (which
// the worker's own permission settings narrow further), its directory and
// what it has read so far (Edit's read-before-write guard).
type ToolCall struct {
	AgentID    string                    `json:"agent_id"`
	AgentType  string                    `json:"agent_type"`
	Background bool                      `json:"background,omitempty"`
	Cwd        string                    `json:"cwd"`
	Ceiling    executor.Ceiling          `json:"ceiling"`
	Mode       permission.Mode           `json:"mode"`
	Files      map[string]tool.FileStamp `json:"files,omitempty"`
	Call       llm.Block                 `json:"call"`
	// Tree, for an agent with a workspace, is the agent whose checkout
	// Cwd is: the worker refuses the call when it does not hold it.
	Tree string `json:"tree,omitempty"`
	// MCPServers are ModelCall's.
	MCPServers []string `json:"mcp_servers,omitempty"`
	// Trace and Session are ModelCall's, for the execute_tool span.
	Trace   executor.TraceContext `json:"trace,omitzero"`
	Session string                `json:"session,omitempty"`
}

// AgentSpan is the input of SpanActivity: an ended agent's run, under
// the launcher's session.
type AgentSpan struct {
	Session string              `json:"session"`
	Run     telemetry.RemoteRun `json:"run"`
}

// ToolDone is how a tool call ended: the event's result, the block the
// model reads, and the agent's file state after it.
type ToolDone struct {
	Result run.ToolResult            `json:"result"`
	Block  llm.Block                 `json:"block"`
	Files  map[string]tool.FileStamp `json:"files,omitempty"`
	// Snapshot is the agent's tree after the call when the call may have
	// changed it (nil: unchanged, or no tree of its own); SnapshotError
	// why it could not be taken (the agent then cannot move until its
	// next snapshot).
	Snapshot      *workspace.Snapshot `json:"snapshot,omitempty"`
	SnapshotError string              `json:"snapshot_error,omitempty"`
}
