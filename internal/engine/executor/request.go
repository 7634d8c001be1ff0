package executor

import (
	"encoding/json"
	"time"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/remote/workspace"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/pricing"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
)

// SpawnRequest is everything a child's run starts from, as plain data:
// the engine decides it (check, ceiling, model, gate) and an Executor
// runs it. It survives a JSON round trip unchanged (request_test.go), so
// a remote executor ships it as it is; nothing in it is a pointer into
// the launcher's process, a function or a secret (provider keys stay with
// whoever runs the child).
type SpawnRequest struct {
	// AgentID is the child's id, chosen by the engine; an executor keeps
	// it (events, results, transcripts and notifications name it).
	AgentID string `json:"agent_id"`
	// ParentID is the agent that made the Agent call ("main" for the main
	// agent); RootID names the tree the child belongs to: the session whose
	// main agent is its root.
	ParentID string `json:"parent_id"`
	RootID   string `json:"root_id"`
	// ToolUseID is the Agent call that started the child: every event of
	// the child carries it as ParentToolUseID.
	ToolUseID string `json:"tool_use_id"`
	// Depth is the child's depth in the tree (the main agent is 0).
	Depth int `json:"depth"`
	// Background is true when the child runs in the background: its
	// parent's call returned at once and its end is one notification.
	Background bool `json:"background"`
	// Description is the Agent call's short description (task lists,
	// notifications).
	Description string `json:"description"`

	// Definition is the agent type the child runs, resolved.
	Definition Definition `json:"definition"`
	// Prompt is the task the child is given (the Agent call's prompt);
	// Messages, when set, are the conversation a fork child starts from
	// instead (its parent's history and its directive), sent verbatim so
	// the prefix its siblings share stays byte-identical. CacheHints mark
	// where that shared prefix ends.
	Prompt     string          `json:"prompt,omitempty"`
	Messages   []llm.Message   `json:"messages,omitempty"`
	CacheHints []llm.CacheHint `json:"cache_hints,omitempty"`
	// Ceiling is what the child may do.
	Ceiling Ceiling `json:"ceiling"`
	// Model is the model the child runs on, and why.
	Model Model `json:"model"`
	// Mode is the child's permission mode in force (after the ratchet).
	Mode permission.Mode `json:"permission_mode"`
	// Cwd is the child's working directory (its worktree's, once it has
	// one); Isolation how it is kept apart from its parent's.
	Cwd       string    `json:"cwd"`
	Isolation Isolation `json:"isolation"`
	// Workspace, for a remote child (Isolation.Kind remote) started in a
	// git repository, names the repository and the launcher's commit: the
	// worker runs the child in a fresh worktree of its own clone at that
	// commit and hands its work back through WorkHandle. nil elsewhere.
	Workspace *workspace.Source `json:"workspace,omitempty"`
	// Receipt is what the spawn granted and why (S-15.1), carried into the
	// child's result.
	Receipt run.Receipt `json:"receipt"`
	// Budget is the child's reservation (S-15.2): what it and its subtree
	// may spend, already clamped to its parent's remainder; Trace joins
	// the child's spans to its parent's trace.
	Budget Budget       `json:"budget"`
	Trace  TraceContext `json:"trace"`
	// Prices, with a cost budget, are the launcher's prices of the
	// child's model: an executor elsewhere figures the child's spend with
	// them, so the limit means what it means on the launcher.
	Prices pricing.Table `json:"prices,omitempty"`
	// TypeBudgets are the budgets of the agent types the child may start
	// (their definitions' `budget`), by type name; types without one are
	// left out. An executor elsewhere, which reads no definitions, reserves
	// for each sub-agent the least of its call's, its type's and what the
	// child has free, as the launcher does.
	TypeBudgets map[string]Budget `json:"type_budgets,omitempty"`
}

// Definition is the resolved agent definition a child runs: what of
// agentdef.Definition the run needs, with the system prompt already
// rendered for the child (a remote worker does not render it again, so
// a fan-out's shared prefix stays byte-identical wherever it runs).
type Definition struct {
	// Name is the agent type ("general-purpose", "plugin:reviewer");
	// Path where it was read ("builtin:<name>", a file, "--agents").
	Name string `json:"name"`
	Path string `json:"path,omitempty"`
	// SystemPrefix is the part of the system prompt siblings of any type
	// share, System the type's own part (its body, memory, preloaded
	// skills); both rendered at spawn, except for a child isolated in a
	// worktree, whose prompt describes its tree and is rendered where it
	// runs once the tree exists (both empty here).
	SystemPrefix string `json:"system_prefix"`
	System       string `json:"system"`
	// InitialPrompt is put before the first user turn's prompt.
	InitialPrompt string `json:"initial_prompt,omitempty"`
	// Model is the definition's model key as written (Model.ID is what
	// was chosen); Effort the effort in force (the call's, else the
	// definition's).
	Model  string          `json:"model,omitempty"`
	Effort agentdef.Effort `json:"effort,omitempty"`
	// PermissionMode is the definition's mode as written (the mode in
	// force is SpawnRequest.Mode).
	PermissionMode permission.Mode `json:"permission_mode,omitempty"`
	// MaxTurns caps the child's turns; 0 means no cap of its own.
	MaxTurns int `json:"max_turns,omitempty"`
	// MCPServers names the MCP servers the child gets (those its
	// definition holds and those it reaches through its parent); an
	// executor connects them by name in its own configuration.
	MCPServers []string `json:"mcp_servers,omitempty"`
	// Hooks is the definition's frontmatter hooks object as written;
	// HooksFrom the definition file they come from (an executor runs
	// them with the hook settings of the place it runs the child).
	Hooks     json.RawMessage `json:"hooks,omitempty"`
	HooksFrom string          `json:"hooks_from,omitempty"`
	// Skills are the skills the child preloads (already in System).
	Skills []string `json:"skills,omitempty"`
	// Isolation is the definition's isolation key as written.
	Isolation agentdef.Isolation `json:"isolation,omitempty"`
	// OneShot marks a type whose result is only the report and which
	// cannot be continued with SendMessage (Explore, Plan); Fork a fork
	// child, which lives in its parent's conversation and cannot be
	// continued either.
	OneShot bool `json:"one_shot,omitempty"`
	Fork    bool `json:"fork,omitempty"`
	// OutputSchema is the JSON Schema the child's result must match
	// (S-15.6), already checked: the child answers with a StructuredOutput
	// tool of this schema (named in Ceiling.Tools) and its result carries
	// the JSON that matched. Empty without one.
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	// OutputAttempts bounds the StructuredOutput calls that do not match
	// (the launcher's setting; 0: the default, 5).
	OutputAttempts int `json:"output_attempts,omitempty"`
}

// Ceiling is what the child may do, as data (S-5, S-10.3): its tools in
// the order it sees them, the agent types it may start, and its
// permission state after the ratchet. An executor never widens it; a
// remote worker intersects it with its own settings.
type Ceiling struct {
	Tools []string `json:"tools"`
	// AgentTypes limits what the child may start; nil means any type the
	// rules allow.
	AgentTypes []string          `json:"agent_types,omitempty"`
	Rules      []permission.Rule `json:"rules,omitempty"`
	// NoPrompt turns asks into denies (under a dontAsk ancestor);
	// ReadOnly makes the child read-only whatever its mode.
	NoPrompt bool `json:"no_prompt,omitempty"`
	ReadOnly bool `json:"read_only,omitempty"`
	// Unavailable maps tools the child sees but may not use to the
	// message a call gets (the Agent tool at the depth limit).
	Unavailable map[string]string `json:"unavailable,omitempty"`
}

// Model is the model the child runs on and the rule that chose it.
type Model struct {
	ID   string        `json:"id"`
	Rule run.ModelRule `json:"rule"`
}

// Isolation is where the child works: Kind as asked (worktree, remote,
// or "" for its parent's directory) and, for a worktree, the tree and
// branch it was given (empty until the executor makes it, when it makes
// it itself).
type Isolation struct {
	Kind     agentdef.Isolation `json:"kind,omitempty"`
	Worktree string             `json:"worktree,omitempty"`
	Branch   string             `json:"branch,omitempty"`
}

// Budget is what the child may spend (S-15.2) in cost, tokens, turns and
// wall time, as its spawn reserved it (the least of what the call asked,
// its definition's budget and its parent's remainder); zero means no
// limit. The local executor holds the child to it through the child's
// account; an executor elsewhere holds it to these limits and reports the
// spend in SubagentResult.Budget.
type Budget struct {
	USD      float64       `json:"usd,omitempty"`
	Tokens   int64         `json:"tokens,omitempty"`
	Turns    int           `json:"turns,omitempty"`
	WallTime time.Duration `json:"wall_time_ns,omitempty"`
}

// TraceContext is the W3C trace context of the Agent call that started
// the child (traceparent and tracestate headers), so the child's spans
// join its parent's trace wherever it runs; empty when telemetry is off.
type TraceContext struct {
	TraceParent string `json:"traceparent,omitempty"`
	TraceState  string `json:"tracestate,omitempty"`
}
