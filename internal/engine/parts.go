package engine

// The parts of an agent and of the Runtime. Each part is a view of the
// agent (or Runtime) it serves, with one job, so that neither type holds
// every method of the engine:
//
//   - agent (agent.go, spawn.go, lifecycle.go): who the agent is, its
//     loop, and the spawn path and lifecycle of its children;
//   - tally (tally.go): what an agent's subtree used;
//   - toolSetup: an agent's tools, permissions and system prompt
//     (system.go renders the prompt);
//   - forkPath (fork.go): the fork path of the Agent tool;
//   - treeGlue, mcpGlue, hookGlue: what starts and ends around a child's
//     loop: its worktree, its MCP servers, its hooks;
//   - systemPrompts (system.go): the session's rendered system prompts;
//   - toolbox: the session's tools (the Agent tool's specs, the task,
//     worktree and structured-output tools) and whether a child runs in
//     the background;
//   - sessionGlue: what the session starts and stops: sandbox,
//     worktrees, MCP servers, hooks, closers;
//   - taskFeed (lifecycle.go, todos.go): a child task's progress and
//     todo events;
//   - childReport (lifecycle.go, spawn.go): a finished child's result,
//     report and notification;
//   - resumePath (resume.go): SendMessage's delivery to an agent, and
//     the continuation of one that ended;
//   - typedGlue (typed.go): a child's output schema and typed result;
//   - reattacher (reattach.go): a resumed session's remote agents that an
//     earlier launcher left running, taken up again.

// toolSetup sets up an agent's tools, permissions and system prompt.
type toolSetup struct{ a *agent }

func setupOf(a *agent) toolSetup { return toolSetup{a} }

// forkPath is an agent's side of the fork path (fork.go).
type forkPath struct{ a *agent }

func forkOf(a *agent) forkPath { return forkPath{a} }

// treeGlue puts an agent in its worktree and takes it out (worktree.go).
type treeGlue struct{ a *agent }

func worktreeOf(a *agent) treeGlue { return treeGlue{a} }

// mcpGlue holds an agent's MCP servers for as long as it runs (mcp.go).
type mcpGlue struct{ a *agent }

func mcpOf(a *agent) mcpGlue { return mcpGlue{a} }

// hookGlue binds an agent's hooks and fires its lifecycle hooks
// (hooks.go).
type hookGlue struct{ a *agent }

func hooksOf(a *agent) hookGlue { return hookGlue{a} }

// compactGlue is an agent's side of context compaction: when it compacts,
// what survives, its events and a compaction asked for now (compact.go).
type compactGlue struct{ a *agent }

func compactOf(a *agent) compactGlue { return compactGlue{a} }

// systemPrompts renders the session's system prompts and their parts.
type systemPrompts struct{ r *Runtime }

func promptsOf(r *Runtime) systemPrompts { return systemPrompts{r} }

// toolbox builds the session's tools and decides whether a child runs in
// the background.
type toolbox struct{ r *Runtime }

func toolboxOf(r *Runtime) toolbox { return toolbox{r} }

// sessionGlue starts and stops what the session runs beside its agents.
type sessionGlue struct{ r *Runtime }

func glueOf(r *Runtime) sessionGlue { return sessionGlue{r} }

// taskFeed streams what a child's task does as it runs: its progress and
// its todo list (lifecycle.go, todos.go).
type taskFeed struct{ a *agent }

func feedOf(a *agent) taskFeed { return taskFeed{a} }

// childReport turns how a child ended into what its parent reads: the
// structured result, the Agent call's output, the notification
// (lifecycle.go, spawn.go).
type childReport struct{ a *agent }

func reportOf(c *agent) childReport { return childReport{c} }

// resumePath is the background's side of SendMessage to an agent: it
// delivers to a running agent's mailbox and continues one that ended
// (resume.go).
type resumePath struct{ b *background }

func resumeOf(b *background) resumePath { return resumePath{b} }
