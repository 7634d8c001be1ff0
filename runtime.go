package cadre

import (
	"context"
	"iter"

	"github.com/cadre-dev/cadre/hooks"
	"github.com/cadre-dev/cadre/internal/compact"
	"github.com/cadre-dev/cadre/internal/engine"
	"github.com/cadre-dev/cadre/mcp"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
)

// Runtime is one agent session. Run may be called again to continue the
// conversation, but not concurrently.
type Runtime struct {
	e *engine.Runtime
}

// New validates cfg and prepares a session. It does no network I/O.
func New(cfg Config) (*Runtime, error) {
	e, err := engine.New(cfg.engine())
	if err != nil {
		return nil, err
	}
	return &Runtime{e: e}, nil
}

// engine is c in the engine's terms: the same fields, field by field.
func (c Config) engine() engine.Config {
	ec := engine.Config{
		Model:              c.Model,
		ModelID:            c.ModelID,
		ResolveModel:       c.ResolveModel,
		SubagentModel:      c.SubagentModel,
		ForceSubagentModel: c.ForceSubagentModel,
		Cwd:                c.Cwd,
		AddDirs:            c.AddDirs,
		Home:               c.Home,
		Tools:              c.Tools,
		SystemPrompt:       c.SystemPrompt,
		AppendSystemPrompt: c.AppendSystemPrompt,
		MaxTurns:           c.MaxTurns,
		MaxTokens:          c.MaxTokens,
		Thinking:           c.Thinking,
		Agents:             c.Agents,
		DisableSubagents:   c.DisableSubagents,
		StateDir:           c.StateDir,
		NoTranscript:       c.NoTranscript,
		SessionID:          c.SessionID,
		History:            c.History,
		Now:                c.Now,
		Hooks:              c.Hooks,
		HookEnv:            c.HookEnv,
		MCPServers:         c.MCPServers,
		MCPOptions:         c.MCPOptions,
		Provenance:         c.Provenance,
		SmallModel:         c.SmallModel,
		WebSearch:          c.WebSearch,
		Skills:             c.Skills,
		Prices:             c.Prices,
		ForkSubagent:       c.ForkSubagent,
		WorktreeBase:       c.WorktreeBase,
		TaskListID:         c.TaskListID,
		Coordinator:        c.Coordinator,
		Effort:             c.Effort,
		ToolNames:          c.ToolNames,
		OutputSchema:       c.OutputSchema,
		OutputRetries:      c.OutputRetries,
		Limits:             engine.Limits(c.Limits),
		Background:         engine.BackgroundMode(c.Background),
		Compaction:         compact.Settings(c.Compaction),
		Teams:              c.Teams,
		TeamShutdownGrace:  c.TeamShutdownGrace,
	}
	if c.Permissions != nil {
		p := engine.Permissions(*c.Permissions)
		ec.Permissions = &p
	}
	if c.Sandbox != nil {
		s := engine.SandboxConfig(*c.Sandbox)
		ec.Sandbox = &s
	}
	if c.WorktreeHooks != nil {
		ec.WorktreeHooks = worktreeHooks{c.WorktreeHooks}
	}
	return ec
}

// worktreeHooks hands an embedder's WorktreeHooks to the engine.
type worktreeHooks struct{ h WorktreeHooks }

func (w worktreeHooks) HandlesWorktrees() bool { return w.h.HandlesWorktrees() }

func (w worktreeHooks) CreateWorktree(ctx context.Context, req engine.WorktreeHookRequest) (string, error) {
	return w.h.CreateWorktree(ctx, WorktreeHookRequest(req))
}

func (w worktreeHooks) RemoveWorktree(ctx context.Context, req engine.WorktreeHookRequest) error {
	return w.h.RemoveWorktree(ctx, WorktreeHookRequest(req))
}

// Close ends the session: it stops what the session started (background
// tasks, MCP servers, the SessionEnd hooks) in the reverse order of
// starting, and reports every failure. It is safe to call more than once
// (later calls do nothing); Run must not be running.
func (r *Runtime) Close() error {
	return r.e.Close()
}

// Grants returns the allow rules a person granted "always for this
// session" so far. They hold for every agent of the session — the main
// agent, its sub-agents, later runs — below deny and ask rules, plan mode
// and read-only agents.
func (r *Runtime) Grants() []permission.Rule {
	return r.e.Grants()
}

// Hooks returns the session's hook dispatcher: the settings' hooks
// (Config.Hooks) plus whatever is added to it. Every agent of the session
// — main, sub-agents at any depth — fires through it (S-14.3). Add
// registers hooks for every agent from then on, such as an SDK's
// callbacks.
func (r *Runtime) Hooks() *hooks.Dispatcher {
	return r.e.Hooks()
}

// Idle streams what background agents send while the main agent has no
// turn running (their messages, task events and notifications), so a
// program that waits for its user can still show them. It returns when a
// notification waits for the main agent (then RunNotifications runs it at
// once), when no task is running, or when ctx ends; it never runs the
// main agent, so cancelling ctx (a user message arrived) loses nothing:
//
//	for rt.RunningTasks() > 0 && !rt.PendingNotifications() {
//		for ev := range rt.Idle(waitCtx) { ... }
//	}
//
// Like RunNotifications, it must not run concurrently with Run.
func (r *Runtime) Idle(ctx context.Context) iter.Seq[run.Event] {
	return r.e.Idle(ctx)
}

// StartMCP begins connecting the configured MCP servers in the
// background and returns at once; Run calls it. Calling it again does
// nothing.
func (r *Runtime) StartMCP() {
	r.e.StartMCP()
}

// MCPStatus reports the configured MCP servers, sorted by name: source,
// transport, state and tools. Before StartMCP every server is idle.
func (r *Runtime) MCPStatus() []mcp.ServerStatus {
	return r.e.MCPStatus()
}

// WaitMCP starts the configured servers if needed and waits until none is
// still connecting, or ctx ends.
func (r *Runtime) WaitMCP(ctx context.Context) error {
	return r.e.WaitMCP(ctx)
}

// SetModel changes the main agent's model for the runs that start after it
// (the Agent SDK's set_model, a terminal UI's /model); a run in progress
// keeps the model it started with. model is an alias Config.ResolveModel
// knows (sonnet, opus, haiku…) or a model id of Config.Model's provider;
// "" or "default" goes back to Config.ModelID. Sub-agents that inherit
// their parent's model inherit the new one. The system prompt, which names
// the model, is rendered again.
func (r *Runtime) SetModel(model string) error {
	return r.e.SetModel(model)
}

// Model is the model id the main agent's next run uses.
func (r *Runtime) Model() string {
	return r.e.Model()
}

// SetPermissionMode changes the main agent's permission mode for the runs
// that start after it (a terminal UI's Shift+Tab); a run in progress keeps
// the mode it started with, and its sub-agents are ratcheted from that. The
// mode must be one a session may use: not the internal bubble mode, not
// auto (unsupported), not bypassPermissions when the session's limits
// disable it.
func (r *Runtime) SetPermissionMode(mode permission.Mode) error {
	return r.e.SetPermissionMode(mode)
}

// PermissionMode is the mode the main agent's next run starts in.
func (r *Runtime) PermissionMode() permission.Mode {
	return r.e.PermissionMode()
}

// SessionID names the session.
func (r *Runtime) SessionID() string {
	return r.e.SessionID()
}

// TranscriptPath is the session's transcript file ("" when off).
func (r *Runtime) TranscriptPath() string {
	return r.e.TranscriptPath()
}

// ToolNames lists the main agent's tools in the order the model sees them.
func (r *Runtime) ToolNames() []string {
	return r.e.ToolNames()
}

// SystemPrompt is the rendered system prompt of the main agent.
func (r *Runtime) SystemPrompt() string {
	return r.e.SystemPrompt()
}

// Run sends prompt to the main agent and streams the run: EventInit first,
// EventResult last, with every sub-agent's events in between (marked with
// their AgentID). A run that fails (a model API error, a cancelled ctx)
// still yields its EventResult, with Subtype error_during_execution and
// every number counted so far, and then the error; the transcript records
// how the run ended either way. The conversation of a finished run carries
// over to the next Run of the same Runtime. Breaking out of the loop
// cancels the run and waits for it to wind down.
func (r *Runtime) Run(ctx context.Context, prompt string) iter.Seq2[run.Event, error] {
	return r.e.Run(ctx, prompt)
}

// SandboxStatus reports what the session's sandbox does; nil when
// Config.Sandbox asked for none.
func (r *Runtime) SandboxStatus() *run.SandboxStatus {
	return r.e.SandboxStatus()
}

// Tasks lists every sub-agent task of the session, live or ended, in the
// order they started, with status and progress (S-7.2).
func (r *Runtime) Tasks() []task.Info {
	return r.e.Tasks()
}

// Task returns the task id.
func (r *Runtime) Task(id string) (task.Info, bool) {
	return r.e.Task(id)
}

// RunningTasks counts the tasks that have not ended.
func (r *Runtime) RunningTasks() int {
	return r.e.RunningTasks()
}

// PendingNotifications reports whether notifications wait for the main
// agent's next turn.
func (r *Runtime) PendingNotifications() bool {
	return r.e.PendingNotifications()
}

// RunNotifications is how the main agent hears from its background tasks
// while nobody prompts it (a headless run after its turn, an idle UI). It
// waits until a notification is queued for the main agent — streaming the
// events background agents send meanwhile — and then runs one turn of the
// main agent on every notification queued by then (EventInit ...
// EventResult, like Run). When no task is running and nothing is queued
// it yields nothing and returns at once, so a caller loops until it
// does:
//
//	for rt.RunningTasks() > 0 || rt.PendingNotifications() {
//		for ev, err := range rt.RunNotifications(ctx) { ... }
//	}
//
// Like Run, it must not run concurrently with Run.
func (r *Runtime) RunNotifications(ctx context.Context) iter.Seq2[run.Event, error] {
	return r.e.RunNotifications(ctx)
}

// Stop stops the live task id (S-7.4): it cancels the agent, its
// descendants and their shells. A background task's parent then gets one
// "killed" notification; a foreground task's Agent call returns saying it
// was stopped. Stop returns once the task has ended.
func (r *Runtime) Stop(ctx context.Context, id string) error {
	return r.e.Stop(ctx, id)
}

// Background moves the running foreground sub-agent agentID to the
// background (S-7.4): its parent's Agent call returns at once with
// async_launched and the agent goes on; its end reaches the parent as a
// notification. It fails for an unknown agent and for one that has ended
// or already runs in the background.
func (r *Runtime) Background(ctx context.Context, agentID string) error {
	return r.e.Background(ctx, agentID)
}

// Compact compacts the conversation of agent agentID ("" or "main" for
// the main agent) now (S-1.5): its model summarises the conversation and
// the summary, with what the agent's work needs, replaces it; custom
// instructions steer the summary ("" for none). An idle main agent is
// compacted at once, as a run of its own whose events are dropped (run
// the prompt "/compact [instructions]" to see them); a running agent —
// the main one during a run, or a live sub-agent — is compacted between
// its turns, and Compact returns once that is asked. It fails when
// compaction is disabled, for an agent that is not running, and when a
// PreCompact hook stops the compaction.
func (r *Runtime) Compact(ctx context.Context, agentID, instructions string) error {
	return r.e.Compact(ctx, agentID, instructions)
}

// SmallModelID is the model id that applies WebFetch's prompt to a
// fetched page in this session (see Config.SmallModel).
func (r *Runtime) SmallModelID() string {
	return r.e.SmallModelID()
}
