// Package cadre is a runtime for LLM agents that delegate work to
// sub-agents. A Runtime holds one session: a model, a working directory,
// tools, permissions and agent definitions; Run sends it a prompt and
// streams what happens, sub-agents included.
//
// The command-line tool cmd/cadre is a thin layer over this package, so
// everything it does is reachable from Go. The agent tree itself (the
// spawn path, a child's lifecycle, notifications, the task tools) lives in
// internal/engine; this package is its public face.
package cadre

import (
	"context"
	"encoding/json"
	"time"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/hooks"
	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/internal/spawn"
	"github.com/cadre-dev/cadre/internal/worktree"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/pricing"
	"github.com/cadre-dev/cadre/mcp"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/skills"
	"github.com/cadre-dev/cadre/tool"
	"github.com/cadre-dev/cadre/tool/builtin"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Config configures a Runtime. Model and ModelID are required, and so is
// StateDir unless NoTranscript is set. The runtime reads nothing from the
// process environment: everything it needs is here (package config builds
// a Config from settings files and the environment the way the cadre
// command does).
type Config struct {
	// Model answers requests of every agent; ModelID is the main agent's
	// model id. Sub-agents may use other ids of the same provider.
	Model   llm.Model
	ModelID string
	// ResolveModel maps a model alias (sonnet, opus, haiku, or one from
	// settings) to a model id; nil means ids are used as given.
	ResolveModel func(alias string) (id string, ok bool)
	// SubagentModel is the model (alias or id) of a sub-agent whose Agent
	// call and definition name none; "" means its parent's (S-5.3).
	SubagentModel string
	// ForceSubagentModel, when set, is the model of every sub-agent
	// whatever its call or definition says, and the Agent tool offers no
	// model field (S-3.2).
	ForceSubagentModel string
	// Cwd is the working directory; "" means the process's.
	Cwd string
	// AddDirs are further working directories the agents may use.
	AddDirs []string
	// Home is the user's home directory: it expands ~ in permission rules
	// and holds the memory of agents with `memory: user`. "" means none
	// (a rule that starts with ~ is then an error, and user memory is off
	// with a warning in the spawn receipt).
	Home string
	// Tools replaces the built-in tools when non-nil. The Agent tool is
	// added unless DisableSubagents is set.
	Tools []tool.Tool
	// SystemPrompt replaces the default system prompt when non-empty;
	// AppendSystemPrompt is added to whichever is used.
	SystemPrompt       string
	AppendSystemPrompt string
	// MaxTurns bounds the main agent's model requests; 0 means no bound.
	MaxTurns int
	// MaxTokens bounds each answer; 0 lets the provider adapter choose.
	MaxTokens int64
	// Thinking turns on extended thinking for every agent where the
	// provider supports it; nil leaves it off.
	Thinking *llm.Thinking
	// Permissions decides every tool call of every agent. Nil means the
	// default mode with nobody to ask: read-only calls inside the working
	// directories run, and what would need approval (writes, most Bash
	// commands) is denied with the reason. AllowAll() opts out of checks.
	Permissions *Permissions
	// Agents are the agent definitions sub-agents are made from (see
	// agentdef.Load); nil means the built-in agents.
	Agents []*agentdef.Definition
	// DisableSubagents removes the Agent tool.
	DisableSubagents bool
	// Limits bound sub-agent spawning.
	Limits Limits
	// StateDir is where transcripts go (transcript.StateDir gives cadre's
	// usual one). NoTranscript turns transcripts off.
	StateDir     string
	NoTranscript bool
	// SessionID names the session; "" makes a new random one.
	SessionID string
	// History is the conversation the session continues (a resumed
	// session's messages, see transcript.Messages); the first Run sends
	// its prompt after it. It must alternate roles and start with a user
	// message.
	History []llm.Message
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	// Hooks (issue 15).

	// Hooks are the session's hooks (package config merges them from the
	// settings files); nil means none. Hooks of agent definitions are
	// added for as long as their agent runs, and Runtime.Hooks().Add adds
	// more (an SDK's callbacks).
	Hooks *hooks.Config
	// HookEnv is the environment of hook commands; nil means the
	// process's. CLAUDE_PROJECT_DIR and CADRE_PROJECT_DIR are set to Cwd.
	HookEnv []string

	// MCP servers (issue 14).

	// MCPServers are the session's MCP servers (package config reads
	// .mcp.json, --mcp-config and settings files); they connect in the
	// background when the first Run starts. Agent definitions' mcpServers
	// name them or configure their own.
	MCPServers []mcp.Server
	// MCPOptions tune the MCP connections; Dir defaults to Cwd.
	MCPOptions mcp.Options

	// Security (issue 9).

	// Provenance says where the session's widening settings came from and
	// what an untrusted workspace did not get; it is reported on EventInit
	// and changes nothing by itself. config.Load fills it.
	Provenance *run.Provenance
	// Tools (issue 16): used with the built-in tool set (Tools nil).

	// SmallModel is the model (alias or id) that applies WebFetch's
	// prompt to a fetched page; "" means the provider's "haiku" alias, or
	// the main model when ResolveModel knows no such alias.
	SmallModel string
	// WebSearch answers the WebSearch tool (builtin.AnthropicSearch,
	// builtin.SearXNG, builtin.Brave); nil makes WebSearch answer that no
	// search backend is configured, never a made-up result.
	WebSearch builtin.Searcher
	// Skills are the skills agents list in their system prompt and load
	// with the Skill tool, and that definitions preload with `skills:`
	// (skills.Load finds them); nil means none.
	Skills *skills.Set

	// Headless (issue 10).

	// Prices is the price table Result.CostUSD is figured with (settings'
	// modelPrices over pricing.Default); nil means pricing.Default().
	Prices pricing.Table

	// The fork path (issue 12, S-6).

	// ForkSubagent turns on the fork path: an Agent call without
	// subagent_type (or with "fork") starts a copy of the calling agent
	// that inherits its whole conversation, system prompt, tools and
	// model, and shares its prompt cache with its sibling forks.
	ForkSubagent bool

	// Worktree isolation (issue 13).
	// WorktreeBase is where an isolated agent's worktree starts:
	// WorktreeBaseHead ("head", the default: the parent's HEAD) or
	// WorktreeBaseDefault ("default": a fresh ref of the default branch).
	WorktreeBase string
	// WorktreeHooks, when set and handling worktrees, makes and removes
	// isolated agents' directories in place of git (the WorktreeCreate and
	// WorktreeRemove hooks); nil uses git.
	WorktreeHooks WorktreeHooks

	// Remote agents (issue 26).

	// Remote runs sub-agents on other machines: those started with
	// `isolation: remote` (an Agent call or a definition), or every one
	// with All set (--remote), through Executor (cadre's own bridge to
	// its workers; an embedder leaves it nil, and remote isolation is then
	// refused with a message naming how to configure it).
	Remote RemoteConfig

	// Background sub-agents (issue 11).

	// Background says when sub-agents run in the background (S-7.1);
	// the zero value runs one there when its call or definition asks.
	Background BackgroundMode

	// The Bash sandbox (issue 9).

	// Sandbox, when set, runs agents' Bash commands in the OS sandbox
	// (bubblewrap): writes only in the working directories, denied paths
	// masked, the network on or off, nothing outliving cadre. New checks
	// that bubblewrap can run; see SandboxConfig for what happens when it
	// cannot. Nil runs commands unconfined.
	Sandbox *SandboxConfig

	// Agent teams (issue 25, S-11.1).

	// Teams turns agent teams on: the Agent tool takes name, team_name and
	// mode, and an Agent call with a name starts a teammate that lives on
	// after its turn, idle until a message (SendMessage) wakes it; the
	// main agent is the team's lead and gets TeamCreate and TeamDelete.
	Teams bool
	// TeamShutdownGrace is how long a teammate sent a shutdown_request
	// has to answer before it is stopped anyway; 0 means 60 seconds.
	TeamShutdownGrace time.Duration

	// Coordinator mode (issue 11, S-11.2).

	// Coordinator makes the main agent a coordinator: it keeps only the
	// Agent, SendMessage, TaskStop and ListAgents tools, every worker it
	// starts runs in the background (Background is forced; off is an
	// error) and is continued with SendMessage, and the fork path is off.
	Coordinator bool

	// The Claude Agent SDK's session options (issue 29).

	// Effort is the main agent's reasoning effort (low, medium, high,
	// xhigh, max; Claude Code's --effort); "" lets the provider choose.
	Effort llm.Effort
	// ToolNames, when non-nil, is the session's tool set (Claude Code's
	// --tools): only the built-in tools named (Task or Agent for the Agent
	// tool, which brings the task tools with it) are offered, to every
	// agent; an empty list offers none. MCP tools are not affected.
	ToolNames []string
	// OutputSchema, when set, is a JSON Schema (root "type": "object") the
	// main agent's answer to each Run must match (Claude Code's
	// --json-schema, S-15.6): it gives the answer with the StructuredOutput
	// tool, whose input schema this is; each call that does not match gets
	// every error back, and a matching one ends the turn, its value in
	// Result.StructuredOutput. OutputRetries bounds the failed attempts
	// (0 means builtin.DefaultOutputAttempts); past them the run ends
	// with run.ErrorMaxStructuredOutputRetries. The same bound holds for
	// a sub-agent given an output schema (its definition's outputSchema,
	// the Agent call's output_schema): past it the child fails with
	// SubagentResult.Subtype run.ErrorMaxStructuredOutputRetries.
	OutputSchema  json.RawMessage
	OutputRetries int

	// Compaction (issue 27, S-1.5): when agents' conversations are
	// summarised to fit the model's context window. The zero value
	// compacts automatically at Claude Code's thresholds of each model's
	// window.
	Compaction Compaction

	// Budgets (issue 28, S-15.2).

	// Budget is the session's budget: what the main agent and every agent
	// it starts may spend together (cost at list prices and Prices, tokens,
	// turns, wall time); zero fields set no limit. With a session budget
	// or any definition's budget the Agent tool offers a budget field;
	// each child reserves the least of what its call asks, its
	// definition's budget and what its parent has left, and is stopped
	// with status budget_exhausted and a partial report when it is spent.
	// The main agent stops with run.ErrorMaxBudget.
	Budget Budget
	// TaskListID names the team's shared task list, a directory of
	// StateDir's tasks/ (issue 25; the config package fills it from
	// CADRE_TASK_LIST_ID or CLAUDE_CODE_TASK_LIST_ID, so sessions can
	// share a list); "" uses the team's own list.
	TaskListID string
	// Telemetry (S-15.7) puts the agent tree in OpenTelemetry when a
	// provider is set: an invoke_agent span per agent run (a child's is a
	// child of its parent's execute_tool Agent span; a Run's main agent
	// joins the span in the context given to Run), a chat span per model
	// request, an execute_tool span per tool call, and the cadre.* metrics.
	// The zero value is off and costs nothing.
	Telemetry Telemetry
}

// Telemetry says where the agent tree's spans and metrics go. Package
// config fills it from the OTEL_* variables (and
// CLAUDE_CODE_ENABLE_TELEMETRY) for the CLI; an embedder passes its own
// providers.
type Telemetry struct {
	// Provider is the gen_ai.provider.name of the spans ("anthropic",
	// "openai"); empty leaves it out.
	Provider string
	// TracerProvider receives the spans, MeterProvider the metrics; both
	// nil is off.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// LogPrompts puts each agent's prompt on its invoke_agent span
	// (gen_ai.input.messages); LogToolContent puts tool calls' input and
	// result on their execute_tool spans. Off by default.
	LogPrompts     bool
	LogToolContent bool
}

// Budget is what an agent or a session may spend (agentdef.Budget).
type Budget = agentdef.Budget

// Compaction configures context compaction for every agent of the
// session. Package config fills it from settings (autoCompactWindow,
// autoCompactEnabled) and the environment (CADRE_AUTO_COMPACT_WINDOW,
// CLAUDE_CODE_AUTO_COMPACT_WINDOW, CLAUDE_AUTOCOMPACT_PCT_OVERRIDE,
// DISABLE_AUTO_COMPACT, DISABLE_COMPACT); the runtime reads no
// environment.
type Compaction struct {
	// Window overrides every model's context window, in tokens; 0 uses
	// the window of the model's family. Windows overrides it per model:
	// a key is a model id or the start of one (the longest matching key
	// wins). autoCompactWindow fills Windows in its object form
	// ({"claude-haiku": 60000, "default": 150000}); an environment
	// variable's window replaces both.
	Window  int64
	Windows map[string]int64
	// Percent, in (0, 100), lowers the automatic threshold to this share
	// of the effective window; 0 for none.
	Percent float64
	// DisableAuto turns automatic compaction off (a prompt-too-long
	// answer then ends the agent); Disable turns /compact off too.
	DisableAuto, Disable bool
	// ClearToolResults turns on clearing the content of old, large tool
	// results (the calls stay, with a marker naming the transcript) once
	// the context nears the compaction threshold and that saves at least
	// 20,000 tokens — before a full compaction is needed. Off by
	// default: see BENCHMARKS.md for the measurement behind that.
	ClearToolResults bool
}

// Permissions configures permission checking for the session.
type Permissions struct {
	// Mode is the main agent's permission mode; "" means default.
	Mode permission.Mode
	// Rules are the allow, ask and deny rules with their sources.
	Rules []permission.Rule
	// Limits bound the modes any agent may use.
	Limits permission.SessionLimits
	// Prompter asks a person; nil means nobody can be asked (headless),
	// so what would be asked is denied with an explanation.
	Prompter permission.Prompter
	// PromptTool, when set instead of Prompter, names an MCP tool of a
	// configured server (mcp__<server>__<tool>) that answers the prompts,
	// as Claude Code's --permission-prompt-tool: it is called with
	// {"tool_name", "input", "tool_use_id"} and answers with the JSON text
	// {"behavior":"allow","updatedInput":{…}} or
	// {"behavior":"deny","message":"…"}.
	PromptTool string
}

// AllowAll is the Permissions of an embedder that wants every tool call of
// every agent to run without a check but deny rules: bypassPermissions
// mode and no rules (append deny rules to keep some calls out). A nil
// Config.Permissions is not this: it is the default mode with nobody to
// ask, so a run that is given no permissions cannot write or run commands.
func AllowAll() *Permissions {
	return &Permissions{Mode: permission.ModeBypassPermissions}
}

// AgentToolName is the name of the tool that spawns sub-agents; TaskAlias
// is its old name, accepted in rules and definitions.
const (
	AgentToolName = tool.Agent
	TaskAlias     = tool.Task
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

// SandboxConfig turns on the OS sandbox for Bash (bubblewrap, Linux): the
// file system is read-only except the agent's working directories (an
// isolated agent's worktree), a private /tmp and Writable; the paths Read
// deny rules protect are masked and those Edit deny rules protect are
// read-only; the network can be cut; and nothing a command starts
// outlives cadre, even after kill -9. package config builds it from the
// settings' sandbox object and --sandbox.
type SandboxConfig struct {
	// BackgroundOnly confines only the Bash commands of sub-agents that
	// start in the background; the main agent and foreground sub-agents
	// run theirs unconfined. A sub-agent moved to the background while
	// it runs keeps what it started with.
	BackgroundOnly bool
	// NoNetwork cuts the network: commands get a network namespace with
	// only loopback. The zero value leaves the network on.
	NoNetwork bool
	// Writable are paths besides the working directories commands may
	// write (config.Load puts the usual tool caches here: Go's, npm's,
	// pip's and cargo's). Paths that do not exist are skipped.
	Writable []string
	// FailIfUnavailable makes New fail when bubblewrap is missing or
	// cannot run here. Otherwise New succeeds, commands run unconfined,
	// and SandboxStatus (and the init event) carries the warning.
	FailIfUnavailable bool
	// BwrapPath is the bwrap binary; "" looks "bwrap" up on PATH.
	BwrapPath string
}

// BackgroundMode says when sub-agents run in the background (S-7.1).
type BackgroundMode string

// Background modes.
const (
	// BackgroundOn (the zero value): a sub-agent runs in the background
	// when its Agent call sets run_in_background or its definition says
	// `background: true`.
	BackgroundOn BackgroundMode = ""
	// BackgroundDefault: every sub-agent runs in the background unless
	// its call sets run_in_background to false.
	BackgroundDefault BackgroundMode = "default"
	// BackgroundForced: every sub-agent runs in the background (coordinator
	// mode, S-11.2); the Agent tool offers no run_in_background.
	BackgroundForced BackgroundMode = "forced"
	// BackgroundOff: every sub-agent runs in the foreground; the Agent
	// tool offers no run_in_background and definitions' `background` is
	// ignored.
	BackgroundOff BackgroundMode = "off"
)

// Valid reports whether m is a known mode.
func (m BackgroundMode) Valid() bool {
	switch m {
	case BackgroundOn, BackgroundDefault, BackgroundForced, BackgroundOff:
		return true
	}
	return false
}

// IsolationRuleSource is the source of the deny rules that keep an agent
// in a worktree from writing the parent's tree.
const IsolationRuleSource = "worktree isolation"

// WorktreeBase values (Config.WorktreeBase).
const (
	// WorktreeBaseHead starts a worktree at the parent's current HEAD.
	WorktreeBaseHead = string(worktree.BaseHead)
	// WorktreeBaseDefault starts it at a fresh ref of the default branch
	// (origin's, fetched now; without a remote the local one).
	WorktreeBaseDefault = string(worktree.BaseDefault)
)

// RemoteConfig configures remote agents (Config.Remote).
type RemoteConfig struct {
	// Executor starts remote children; nil: no remote execution. An
	// executor with a Close() method is closed when the session closes,
	// after its remote tasks were stopped.
	Executor RemoteExecutor
	// All makes every sub-agent of the session remote (--remote).
	All bool
	// PickupWait bounds how long a remote agent waits for a worker to
	// take it; past it, it fails saying that no worker did (an empty
	// worker pool never hangs a run silently). 0 is 2 minutes.
	PickupWait time.Duration
}

// RemoteExecutor starts remote children: the executor seam of the engine
// (internal/engine/executor), implemented by cadre's bridge to its
// workers.
type RemoteExecutor = executor.Executor

// WorktreeHooks makes and removes the directories of isolated agents in
// place of git: the seam for the WorktreeCreate and WorktreeRemove hooks
// (S-14), which let isolation work with other version control systems.
// Config.WorktreeHooks nil, or HandlesWorktrees false, uses git.
type WorktreeHooks interface {
	// HandlesWorktrees reports whether hooks make worktrees now (a
	// WorktreeCreate hook is configured); asked at every creation.
	HandlesWorktrees() bool
	// CreateWorktree makes the directory and returns its absolute path.
	CreateWorktree(ctx context.Context, req WorktreeHookRequest) (path string, err error)
	// RemoveWorktree disposes of a directory CreateWorktree made, when the
	// last agent working in it ends. cadre cannot inspect such a
	// directory, so keeping work is the hook's job.
	RemoveWorktree(ctx context.Context, req WorktreeHookRequest) error
}

// WorktreeHookRequest is what a WorktreeHooks is told.
type WorktreeHookRequest struct {
	// Name is the tree's name, agent-<id>.
	Name      string
	AgentID   string
	SessionID string
	// Dir is the parent's working directory.
	Dir string
	// Path is the directory CreateWorktree returned (RemoveWorktree only).
	Path string
}
