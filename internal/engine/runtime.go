// Package engine is the agent tree behind the public cadre package: the
// Runtime of one session, the spawn path (check, admit, new child,
// execute, report), a child's lifecycle (start, wait, background, finish,
// settle, notifications), the task tools and the glue that starts a
// child's worktree, MCP servers and hooks. The root package holds the
// embedder's API and delegates every call here; nothing outside the
// module imports this package.
package engine

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/hooks"
	"github.com/cadre-dev/cadre/internal/compact"
	"github.com/cadre-dev/cadre/internal/engine/hub"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/sandbox"
	"github.com/cadre-dev/cadre/internal/spawn"
	"github.com/cadre-dev/cadre/internal/telemetry"
	"github.com/cadre-dev/cadre/internal/workspace"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/pricing"
	"github.com/cadre-dev/cadre/mcp"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/skills"
	"github.com/cadre-dev/cadre/tool"
	"github.com/cadre-dev/cadre/tool/builtin"
	"github.com/cadre-dev/cadre/transcript"
	"github.com/google/uuid"
)

// Config is the engine's side of cadre.Config, field for field: the
// root converts one into the other (cadre.Config.engine) and
// TestConfigReachesTheEngine fails when they drift. What each field means
// is documented once, on cadre.Config; the copy exists because some
// fields have internal types here (Compaction is internal/compact's
// Settings, WorktreeHooks takes the engine's request) that an embedder
// could not name.
type Config struct {
	Model              llm.Model
	ModelID            string
	ResolveModel       func(alias string) (id string, ok bool)
	SubagentModel      string
	ForceSubagentModel string
	Cwd                string
	AddDirs            []string
	Home               string
	Tools              []tool.Tool
	SystemPrompt       string
	AppendSystemPrompt string
	MaxTurns           int
	MaxTokens          int64
	Thinking           *llm.Thinking
	Permissions        *Permissions
	Agents             []*agentdef.Definition
	DisableSubagents   bool
	Limits             Limits
	StateDir           string
	NoTranscript       bool
	SessionID          string
	History            []llm.Message
	Now                func() time.Time
	Hooks              *hooks.Config
	HookEnv            []string
	MCPServers         []mcp.Server
	MCPOptions         mcp.Options
	Provenance         *run.Provenance
	SmallModel         string
	WebSearch          builtin.Searcher
	Skills             *skills.Set
	Prices             pricing.Table
	ForkSubagent       bool
	WorktreeBase       string
	TaskListID         string
	WorktreeHooks      WorktreeHooks
	Background         BackgroundMode
	Sandbox            *SandboxConfig
	Coordinator        bool
	Effort             llm.Effort
	ToolNames          []string
	OutputSchema       json.RawMessage
	OutputRetries      int
	Compaction         compact.Settings
	Budget             agentdef.Budget
	Teams              bool
	TeamShutdownGrace  time.Duration
	Remote             Remote
	Telemetry          telemetry.Settings
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
	// {"behavior":"deny","message":"…"} (permprompt.go).
	PromptTool string
}

// Runtime is one agent session. Run may be called again to continue the
// conversation, but not concurrently.
type Runtime struct {
	cfg      Config
	compacts compactBook // running agents' manual compaction queues (compact.go)
	gate     *spawn.Gate
	defs     map[string]*agentdef.Definition
	defList  []*agentdef.Definition
	base     *tool.Pool // the tools before the Agent tool is added
	system   string
	// systemPrefix is the main agent's part of the system prompt every
	// agent shares (renderSystemFor); "" with a custom prompt.
	systemPrefix string
	session      string
	tpath        string
	agentDir     string // the directory of sub-agents' transcripts ("" when off)
	mainSpec     *agentToolSpec
	mainPool     *tool.Pool
	git          *workspace.Snapshot
	facts        workspace.FactCache

	specMu sync.Mutex
	specs  map[string]*agentToolSpec
	// sysMu guards sysShared: the shared part of sub-agents' system
	// prompts, rendered once per distinct input (spawn.go).
	sysMu     sync.Mutex
	sysShared map[sharedSystemKey]string
	// deferredBlocks are the deferred-tools blocks of system prompts, by
	// the set of tools (deferred.go); guarded by sysMu too.
	deferredBlocks map[uint32]string
	// gitBlocks are the git status blocks of sub-agents' prompts, by
	// directory (system.go); guarded by sysMu too.
	gitBlocks map[string]string

	mu       sync.Mutex
	messages []llm.Message
	todos    []tool.Todo // the main agent's todo list, carried to the next Run (todos.go)

	modeMu sync.Mutex
	mode   permission.Mode // set by SetPermissionMode; "" means the configured one

	mcp *mcpRuntime // the session's MCP servers (mcp.go)

	closeMu sync.Mutex
	closers []func() error // run by Close, last first
	closed  bool

	// modelMu guards the main agent's model id and the system prompt that
	// names it (SetModel, model.go).
	modelMu sync.Mutex
	modelID string

	// Hooks (hooks.go): the one dispatcher every agent fires through, the
	// sink that streams hook runs, and whether SessionStart has fired.
	hooks          *hooks.Dispatcher
	hookSink       hookSink
	hookMu         sync.Mutex
	sessionStarted bool

	// grants are the "always for this session" approvals, shared by every
	// agent and run of the session (issue 9, grants.go).
	grants permission.Grants
	// dirs remembers how the agents' working directories resolve, for
	// every agent's permission checker (permission.DirCache).
	dirs permission.DirCache
	// denials logs every denied call of the session, in order. Each
	// run's Result reports those no earlier Result did (denialsReported
	// of them were, guarded by mu), so a background agent's denial made
	// after one run's Result is in the next run's: never lost, never
	// reported twice.
	denials         permission.DenialLog
	denialsReported int
	// worktrees makes isolated agents' worktrees (worktree.go).
	worktrees *worktrees
	// bg is the session's background machinery (background.go).
	bg *background
	// sandbox confines agents' Bash (nil: none, or unavailable);
	// sandboxStatus is what init reports (sandbox.go, issue 9).
	sandbox       *sandbox.Sandbox
	sandboxStatus *run.SandboxStatus
	// structured is the StructuredOutput tool of Config.OutputSchema
	// (sdkoptions.go); nil without one.
	structured *builtin.StructuredOutput
	// budgets are the session's budgets (budget.go).
	budgets budgetBook
	// tasks is the team's task list, opened at first use (tasklist.go).
	tasks taskListBook
	// tel is the session's telemetry (telemetry.go); nil when off.
	tel *telemetry.Telemetry
}

// New validates cfg and prepares a session. It does no network I/O.
func New(cfg Config) (*Runtime, error) {
	if err := checkConfig(&cfg); err != nil {
		return nil, fmt.Errorf("cadre: %w", err)
	}
	r := &Runtime{cfg: cfg, gate: spawn.NewGate(cfg.Limits.gate()), defs: map[string]*agentdef.Definition{},
		git: workspace.NewSnapshot(cfg.Cwd), specs: map[string]*agentToolSpec{}}
	glueOf(r).initHooks()

	var err error
	if err := glueOf(r).openSandbox(); err != nil { // sandbox.go (issue 9)
		return nil, fmt.Errorf("cadre: %w", err)
	}
	if r.worktrees, err = glueOf(r).newWorktrees(); err != nil {
		return nil, fmt.Errorf("cadre: %w", err)
	}
	r.defList = cfg.Agents
	if r.defList == nil {
		r.defList = agentdef.Builtins()
	}
	for _, d := range r.defList {
		// Issue 9: a definition built in Go skips agentdef's name check;
		// its memory directory must stay inside its root.
		if _, err := workspace.CheckedMemoryDir(string(d.Memory), d.Name, cfg.Home, cfg.Cwd); err != nil {
			return nil, fmt.Errorf("cadre: agent definition %s: %w", d.Path, err)
		}
		r.defs[d.Name] = d
	}
	tools := cfg.Tools
	if tools == nil {
		tools = defaultTools(&cfg) // tools.go
	}
	tools = append(tools, toolboxOf(r).mergeTools()...)    // worktree_tool.go
	tools = append(tools, toolboxOf(r).taskListTools()...) // tasklist.go
	if cfg.Tools == nil {
		tools = append(tools, toolSearchTool()) // deferred.go: the default set defers its rarely used tools
	}
	r.base = tool.NewPool(tools...)
	if cfg.ToolNames != nil {
		r.base = r.base.Filter(func(t tool.Tool) bool { return namedTool(cfg.ToolNames, t.Spec().Name) }) // sdkoptions.go
	}
	if err := toolboxOf(r).checkRules(); err != nil {
		return nil, err
	}
	if rules := glueOf(r).rootPerms().Rules; len(rules) > 0 {
		// Tools a deny rule forbids outright are not offered at all.
		r.base = r.base.Filter(func(t tool.Tool) bool {
			_, denied := spawn.WholeToolDenied(rules, t.Spec().Name)
			return !denied
		})
	}
	if n := len(cfg.History); n > 0 && cfg.History[0].Role != llm.RoleUser {
		return nil, errors.New("cadre: Config.History must start with a user message")
	}
	// Calls of a crashed session's last answer that never got results
	// get error results, so the next request is well formed.
	r.messages, _ = transcript.CloseInterrupted(append([]llm.Message(nil), cfg.History...))
	r.session = cmp.Or(cfg.SessionID, uuid.NewString())
	r.tel = telemetry.New(cfg.Telemetry, r.session, cfg.Prices) // nil when off
	if !cfg.NoTranscript {
		// A session id names files: a UUID, and the path stays in StateDir (issue 9).
		tpath, err := transcript.SessionFile(cfg.StateDir, cfg.Cwd, r.session)
		if err != nil {
			return nil, fmt.Errorf("cadre: Config.SessionID: %w", err)
		}
		r.tpath = tpath
		// Where sub-agents' transcripts go, computed once (lifecycle.go).
		r.agentDir = filepath.Dir(transcript.AgentPath(cfg.StateDir, cfg.Cwd, r.session, "x"))
	}
	// After the session id: the servers' logs go beside its transcripts.
	if err := glueOf(r).initMCP(); err != nil { // mcp.go
		return nil, fmt.Errorf("cadre: %w", err)
	}
	if name := r.cfg.Permissions.PromptTool; name != "" {
		perms := *r.cfg.Permissions
		perms.Prompter = &mcpPrompter{r: r, tool: name} // permprompt.go
		r.cfg.Permissions = &perms
	}
	r.budgets = newBudgetBook(&r.cfg, r.defList) // budget.go
	if err := r.budgets.restore(cfg.StateDir, cfg.Cwd, r.session, r.tpath, len(cfg.History) > 0); err != nil {
		return nil, fmt.Errorf("cadre: %w", err)
	}
	r.modelID = cfg.ModelID
	if c, ok := cfg.Remote.Executor.(interface{ Close() }); ok {
		// Registered before the background machinery, so it closes after
		// it: stopping remote tasks still needs the executor (remote.go).
		glueOf(r).onClose(func() error { c.Close(); return nil })
	}
	r.bg = newBackground(r)
	r.mainPool = r.base
	if !cfg.DisableSubagents && (cfg.ToolNames == nil || namedTool(cfg.ToolNames, AgentToolName)) {
		if _, denied := spawn.WholeToolDenied(glueOf(r).rootPerms().Rules, AgentToolName); !denied {
			r.mainSpec = toolboxOf(r).agentSpec(glueOf(r).rootPerms().Rules, nil)
			r.mainPool = tool.NewPool(append([]tool.Tool{&agentTool{spec: r.mainSpec}}, r.base.Tools()...)...)
			r.mainPool = toolboxOf(r).withTaskTools(r.mainPool)   // tasktools.go
			r.mainPool = toolboxOf(r).coordinatorPool(r.mainPool) // coordinator.go
			r.mainPool = mainOnlyLast(r.mainPool)                 // toolorder.go
		}
	}
	if err := toolboxOf(r).addStructuredOutput(); err != nil { // sdkoptions.go
		return nil, fmt.Errorf("cadre: %w", err)
	}
	// After the main pool: the prompt names its deferred tools.
	r.systemPrefix, r.system = promptsOf(r).renderSystemFor(cfg.ModelID)
	return r, nil
}

// checkConfig validates cfg and fills in what defaults to something.
func checkConfig(cfg *Config) error {
	switch {
	case cfg.Model == nil:
		return errors.New("Config.Model is required")
	case cfg.ModelID == "":
		return errors.New("Config.ModelID is required")
	case cfg.StateDir == "" && !cfg.NoTranscript:
		return errors.New("Config.StateDir is required for transcripts (transcript.StateDir gives cadre's usual one); set NoTranscript to run without")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if !cfg.Background.Valid() {
		return fmt.Errorf("Config.Background %q: want \"\", %q, %q or %q", cfg.Background, BackgroundDefault, BackgroundForced, BackgroundOff)
	}
	if cfg.Remote.All && cfg.Remote.Executor == nil {
		return errors.New("Config.Remote.All (--remote) needs a remote executor: configure remote.temporal in settings (address, namespace, taskQueue) and start `cadre worker` processes")
	}
	if err := applyCoordinator(cfg); err != nil { // coordinator.go
		return err
	}
	if err := checkSDKOptions(cfg); err != nil { // sdkoptions.go
		return err
	}
	if cfg.Cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("working directory: %w", err)
		}
		cfg.Cwd = wd
	}
	var err error
	if cfg.Cwd, err = checkDir(cfg.Cwd); err != nil {
		return fmt.Errorf("working directory: %w", err)
	}
	dirs := make([]string, len(cfg.AddDirs))
	for i, d := range cfg.AddDirs {
		if !filepath.IsAbs(d) {
			d = filepath.Join(cfg.Cwd, d)
		}
		if dirs[i], err = checkDir(d); err != nil {
			return fmt.Errorf("additional directory: %w", err)
		}
	}
	cfg.AddDirs = dirs
	if cfg.Permissions == nil {
		cfg.Permissions = defaultPermissions() // safe by default (issue 9)
	}
	if p := cfg.Permissions; p != nil {
		if _, err := permission.ParseMode(string(p.Mode)); err != nil {
			return err
		}
		if err := checkPromptTool(cfg); err != nil { // permprompt.go
			return err
		}
		for _, rule := range p.Rules {
			if cfg.Home == "" && strings.HasPrefix(rule.Content, "~") {
				return fmt.Errorf("rule %s from %s uses ~ but Config.Home is empty", rule, cmp.Or(rule.Source, "Config.Permissions"))
			}
		}
	}
	return nil
}

func checkDir(d string) (string, error) {
	abs, err := filepath.Abs(d)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("%s: no such directory", d)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%s: not a directory", d)
	}
	return abs, nil
}

// newAgentID returns "a" + 16 hex digits (S-3.7).
func newAgentID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "a" + hex.EncodeToString(b[:])
}

func (sg sessionGlue) rootPerms() permission.Effective {
	r := sg.r
	m := r.PermissionMode()
	return permission.Effective{Mode: m, NoPrompt: m == permission.ModeDontAsk, Rules: r.cfg.Permissions.Rules}
}

// SessionID names the session.
func (r *Runtime) SessionID() string { return r.session }

// TranscriptPath is the session's transcript file ("" when off).
func (r *Runtime) TranscriptPath() string { return r.tpath }

// ToolNames lists the main agent's tools in the order the model sees them.
func (r *Runtime) ToolNames() []string { return r.mainPool.Names() }

// SystemPrompt is the rendered system prompt of the main agent.
func (r *Runtime) SystemPrompt() string {
	_, prefix, system := promptsOf(r).mainModel()
	if prefix == "" {
		return system
	}
	return prefix + "\n\n" + system
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
	return func(yield func(run.Event, error) bool) {
		if strings.TrimSpace(prompt) == "" {
			yield(run.Event{}, errors.New("cadre: empty prompt"))
			return
		}
		streamTurn(ctx, r, prompt, false)(yield)
	}
}

// streamTurn runs one turn of r's main agent on prompt (after what its
// inbox holds); with wait it first waits for notifications and runs no
// turn when none can come (see RunNotifications). It is a function, not a
// method, so that Runtime keeps to the embedder's API.
func streamTurn(ctx context.Context, r *Runtime, prompt string, wait bool) iter.Seq2[run.Event, error] {
	return func(yield func(run.Event, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		rs := &runState{rt: r, events: make(chan hub.Item, 64), start: r.cfg.Now(),
			stats: run.SubagentStats{Refused: map[run.RefusalReason]int{}}}
		go rs.produce(ctx, prompt, wait)
		for it := range rs.events {
			if !yield(it.Ev, it.Err) {
				cancel()
				for range rs.events {
					// Drain until the producer has wound down.
				}
				return
			}
		}
	}
}

// runState is one Run: the merged event stream of every agent, the run's
// counters and the denial log.
type runState struct {
	rt     *Runtime
	events chan hub.Item
	start  time.Time
	// denied is what the run's Result reports of the session's denials
	// (takeDenials).
	denied []permission.Denial
	// journal writes every transcript of the run; nil when off. The run
	// and every sub-agent it starts hold it (holdJournal), so agents that
	// outlive the run keep writing; the last release closes it.
	journal *transcript.Journal
	jmu     sync.Mutex
	jrefs   int

	mu    sync.Mutex
	usage llm.Usage
	stats run.SubagentStats
	// mainTurns and mainTools count the main agent's answers and tool
	// calls as they stream, for the Result of a run that fails; byModel
	// sums every agent's usage per model, for the cost (outcome.go).
	mainTurns, mainTools int
	byModel              map[string]llm.Usage
	todos                map[string][]tool.Todo // each agent's current todo list (todos.go)
	// output is the run's structured output (sdkoptions.go); nil without
	// Config.OutputSchema.
	output *builtin.OutputSlot
}

// send delivers an event to the consumer of the stream going on (this
// run's while it lasts: a background agent's later events go to a later
// run's stream, see hub); it fails once ctx is cancelled.
func (s *runState) send(ctx context.Context, ev run.Event) error {
	s.note(ev)
	return s.rt.bg.emit(ctx, ev)
}

// holdJournal takes a reference on the run's transcript journal.
func (s *runState) holdJournal() {
	if s.journal == nil {
		return
	}
	s.jmu.Lock()
	s.jrefs++
	s.jmu.Unlock()
}

// releaseJournal drops a reference; the last one closes the journal.
func (s *runState) releaseJournal() {
	if s.journal == nil {
		return
	}
	s.jmu.Lock()
	s.jrefs--
	last := s.jrefs == 0
	s.jmu.Unlock()
	if last {
		// Writes of agents that outlived the run end here: a failure
		// no Result reported yet goes in the next one.
		if err := s.journal.Close(); err != nil {
			s.rt.bg.recordFailed("transcripts", err)
		}
	}
}

func (s *runState) addUsage(u llm.Usage) {
	s.mu.Lock()
	s.usage = s.usage.Add(u)
	s.mu.Unlock()
}

func (s *runState) count(f func(st *run.SubagentStats)) {
	s.mu.Lock()
	f(&s.stats)
	s.mu.Unlock()
}

// produce runs the main agent and closes the stream when it has ended.
func (s *runState) produce(ctx context.Context, prompt string, wait bool) {
	defer close(s.events)
	r := s.rt
	// Every agent's events reach this stream while it is open, background
	// agents' included; it is detached (waiting for sends under way)
	// before the channel closes.
	r.bg.hub.Attach(ctx, s.events) // with the task events held since the last stream (background.go)
	defer r.bg.hub.Detach()
	var recorder loop.Recorder
	var mainRec *transcript.JournalWriter
	if r.tpath != "" {
		// Every agent's transcript goes through one journal, so no agent
		// waits for the disk; it is drained before the result is sent.
		s.journal = transcript.NewJournal()
		s.holdJournal()
		defer s.releaseJournal()
		mainRec = s.journal.Transcript(r.tpath, r.session, "", r.cfg.Now)
		recorder = mainRec
		if r.mainSpec != nil && r.agentDir != "" {
			// The directory of sub-agents' files, made off both the main
			// agent's and its children's way to their first request (the
			// task and mailbox journals, made by their first record, no
			// longer make it at the start).
			_ = s.journal.MakeDir(r.agentDir)
		}
	}
	if r.mainSpec != nil {
		// Take the git snapshot sub-agents will see while the first model
		// request is in flight; no spawn waits for it.
		gitCtx, stopGit := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() { r.git.Take(gitCtx) })
		defer wg.Wait()
		defer stopGit()
	}
	// Background tasks (background.go): the task journal is replayed on
	// the first run; RunNotifications waits for a notification first.
	if err := r.bg.open(); err != nil {
		s.events <- hub.Item{Err: fmt.Errorf("cadre: %w", err)}
		return
	}
	if wait && !r.bg.waitForNotes(ctx) {
		if err := ctx.Err(); err != nil {
			s.events <- hub.Item{Err: err}
		}
		return
	}
	r.StartMCP()                                        // in the background: the first request does not wait
	modelID, prefix, system := promptsOf(r).mainModel() // SetModel's choice (model.go)
	main := &agent{
		run: s, id: "", typ: "main", modelID: modelID, pool: r.mainPool, spec: r.mainSpec,
		perms: glueOf(r).rootPerms(), systemPrefix: prefix, system: system, maxTurns: r.cfg.MaxTurns, mcp: mainMCP{r}, effort: r.cfg.Effort,
		output:  s.outputSlot(), // structured output (sdkoptions.go)
		inbox:   r.bg.main,
		prompt:  &prompt,           // issue 15: UserPromptSubmit fires for it alone
		account: r.budgets.session, // budget.go: the session's budget
	}
	// Notifications taken for a request that was never answered go back
	// to the queue for the next turn.
	defer r.bg.main.requeue()
	shells := builtin.NewShells()
	defer shells.Close()
	main.env = &tool.Env{Cwd: r.cfg.Cwd, Dirs: r.cfg.AddDirs, Files: tool.NewFileState(), Shells: shells, Todos: &tool.TodoList{}}
	s.restoreTodos(main.env) // todos.go
	// Hooks (hooks.go): hook runs stream into this run until it ends.
	hooksOf(main).bind("")
	defer r.hookSink.attach(ctx, s)()
	// The worktrees earlier sessions left: unchanged ones of ended agents
	// are removed, changed ones reported (worktree.go).
	house := glueOf(r).housekeepWorktrees(ctx)
	if err := s.send(ctx, run.Event{Type: run.EventInit, Init: &run.Init{SessionID: r.session, Model: modelID, Cwd: r.cfg.Cwd, Tools: r.mainPool.Names(), TranscriptPath: r.tpath,
		MCPServers: glueOf(r).mcpInit(), PermissionMode: main.perms.Mode, Provenance: r.cfg.Provenance, // PermissionMode, Provenance: issue 9
		Worktrees: house, Sandbox: r.SandboxStatus()}}); err != nil {
		return
	}
	if instructions, ok := compactCommand(prompt); ok { // compact.go: /compact as a prompt
		res, err := compactOf(main).compactNow(ctx, instructions, recorder)
		s.finish(ctx, mainRec, res, err)
		return
	}
	r.mu.Lock()
	msgs := append(append([]llm.Message(nil), r.messages...), r.bg.firstMessage(prompt))
	r.mu.Unlock()
	s.startSession(ctx, main, &msgs[len(msgs)-1])
	mctx, span := telemetryOf(main).startMain(ctx, prompt, wait) // telemetry.go
	r.bg.team.rejoin(mctx, main)                                 // teamresume.go: a resumed session's teammates
	reattachOf(r.bg).all(mctx, main)                             // reattach.go: a resumed session's remote agents
	res, err := main.runLoop(mctx, msgs, recorder)
	telemetryOf(main).endMain(span, err)
	// Every way the run ends closes its record the same way (outcome.go).
	s.finish(ctx, mainRec, res, err)
}
