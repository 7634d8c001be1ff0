package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/hooks"
	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/mcpx"
	"github.com/cadre-dev/cadre/internal/spawn"
	"github.com/cadre-dev/cadre/internal/telemetry"
	"github.com/cadre-dev/cadre/internal/worktree"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/tool"
	"github.com/cadre-dev/cadre/tool/builtin"
	"github.com/cadre-dev/cadre/transcript"
)

// agent is one running agent of the tree: the main agent (depth 0) or a
// sub-agent. Every agent runs the same loop (loop.Run) with its own
// configuration.
type agent struct {
	run       *runState
	id        string // "" for the main agent
	typ       string
	toolUseID string // the Agent call that started it
	depth     int
	def       *agentdef.Definition
	modelID   string
	// ticket is the child's place in the spawn gate (nil for the main
	// agent): it holds a running slot, and gives it back while the agent
	// waits for its own children.
	ticket *spawn.Ticket
	// pendingErr is what sending its EventTaskPending returned, when the
	// gate queued it (spawn.go admit; lifecycle.go live).
	pendingErr error
	pool       *tool.Pool
	// deferred is what the agent loaded of its deferred tools (deferred.go).
	deferred deferredState
	spec     *agentToolSpec // nil when the agent cannot spawn
	types    []string       // spawnable types; nil means any
	perms    permission.Effective
	env      *tool.Env
	system   string
	// systemPrefix is the part of a sub-agent's system prompt siblings of
	// any type share, sent ahead of system (renderSystem); "" for the main
	// agent.
	systemPrefix string
	maxTurns     int
	effort       llm.Effort
	// output is the agent's structured output: the main agent's when the
	// session has an output schema, a sub-agent's when it was given one
	// (typed.go, outputSchema the compiled schema it carries); nil
	// otherwise.
	output       *builtin.OutputSlot
	outputSchema json.RawMessage
	// unavailable maps withheld tool names to the message a call gets.
	unavailable map[string]string
	// denialsFrom marks where this agent's denials begin in the
	// session's log (set with its authorizer): a continued agent's
	// notification lists only the calls denied since it was continued.
	denialsFrom int
	// spawnReceipt is what the spawn granted (sub-agents only).
	spawnReceipt run.Receipt
	// hooks is the agent's binding of the session's hook dispatcher
	// (hooks.go); nil until it is bound.
	hooks *hooks.Agent
	// prompt is what a person submitted for the main agent's run ("" for
	// a run on notifications alone); nil for sub-agents (issue 15:
	// UserPromptSubmit fires for it, not for notifications).
	prompt *string
	// mcp offers the agent's MCP tools turn by turn; mcpLease holds the
	// servers its definition asks for (mcp.go).
	mcp      loop.ToolSource
	mcpLease *mcpx.Lease
	// The fork path (fork.go): fork marks a fork (it cannot start agents);
	// start is a fork's first messages (nil: the prompt alone) and
	// cacheHints where the prefix its siblings share ends.
	fork       bool
	start      []llm.Message
	cacheHints []llm.CacheHint
	// resumed is set on a finished agent continued with SendMessage: its
	// start is the history read back from its transcript (resume.go).
	resumed *resumedFrom

	// Worktree isolation (worktree.go): isolation is the kind asked for;
	// tree the lease the agent holds on a worktree (its own when ownsTree,
	// else its parent's), released once by treeGlue.leave.
	isolation   agentdef.Isolation
	treeMu      sync.Mutex
	tree        *worktree.Lease
	ownsTree    bool
	treeOutcome *run.WorktreeOutcome

	// Background work (background.go, lifecycle.go): what arrives for the
	// agent while it works, whether it started in the background, and
	// how it ended (sub-agents only).
	inbox      *inbox
	background bool
	final      *run.SubagentResult

	tally // what its subtree used (tally.go)

	// compactQ holds a manual compaction asked for while it runs
	// (compact.go).
	compactQ compactQueue

	// account is the agent's budget (budget.go); nil when none bounds it.
	account *spawn.Account
	// Telemetry (telemetry.go), set only when it is on: the spawn
	// request the child was started from (its trace context and budget)
	// and its invoke_agent span.
	spawnReq *executor.SpawnRequest
	span     *telemetry.AgentSpan
	// member is set on a teammate (team.go, issue 25).
	member *member
	// held keeps a sub-agent's files unwritten until its first request
	// is out; burst holds the places of its own children starting
	// together (firstrequest.go).
	held  *transcript.Hold
	burst burst
}

// agentFrom returns the agent an Env belongs to (Env.Spawner, set by
// runLoop), nil for an Env made outside a Runtime.
func agentFrom(env *tool.Env) *agent {
	if env == nil {
		return nil
	}
	a, _ := env.Spawner.(*agent)
	return a
}

// authorizer builds the agent's permission session (New made
// Config.Permissions non-nil).
func (su toolSetup) authorizer(background bool) (permission.Authorizer, error) {
	a := su.a
	p := a.run.rt.cfg.Permissions
	cc := a.perms.CheckerConfig(a.env.Cwd, a.env.Dirs, a.run.rt.cfg.Home)
	cc.DisableBypass = p.Limits.DisableBypass
	cc.DirCache = &a.run.rt.dirs
	cc.Tools = toolboxOf(a.run.rt).extraToolNames()                      // rules may name the embedder's tools
	confined := su.confine(glueOf(a.run.rt).sandboxFor(background), &cc) // sandbox.go (issue 9)
	checker, err := permission.NewChecker(cc)
	if err != nil {
		return nil, fmt.Errorf("permissions of agent %s: %w", a.label(), err)
	}
	confined(checker)
	// A WebFetch(domain:host) allow rule lets WebFetch reach that host on
	// a private address; no rule, no private addresses (no SSRF).
	a.env.AllowPrivateHost = checker.AllowsPrivateHost
	if hasReadDeny(a.perms.Rules) {
		cwd := a.env.Cwd
		a.env.Hidden = func(path string) bool {
			_, denied := checker.PathDenied(cwd, path, false)
			return denied
		}
	}
	a.denialsFrom = a.run.rt.denials.Len()
	return su.session(checker, background)
}

// session is the agent's permission session over checker, in the
// checker's mode (a teammate's approved plan may change it: teamplanmode.go).
func (su toolSetup) session(checker *permission.Checker, background bool) (*permission.Session, error) {
	a := su.a
	p := a.run.rt.cfg.Permissions
	return permission.NewSession(permission.SessionConfig{
		Checker: checker, Prompter: forkPrompter(checker.Mode(), hooksOf(a).prompter(teammatePrompts(a, p.Prompter))), AgentID: a.id, AgentType: a.typ, Background: background, Log: &a.run.rt.denials,
		Answerer: hooksOf(a).answerer(), // PermissionRequest hooks of an agent that cannot prompt
		Grants:   &a.run.rt.grants,      // shared by the session's agents (issue 9)
		// issue 29: no hint names a settings file the workspace ignores
		UntrustedWorkspace: a.run.rt.cfg.Provenance != nil && !a.run.rt.cfg.Provenance.Trusted,
	})
}

func (a *agent) label() string {
	if a.id == "" {
		return "main"
	}
	return a.typ + " " + a.id
}

// runLoop runs the agent's loop over msgs, forwarding its events to the
// run's stream, and returns the loop's result.
func (a *agent) runLoop(ctx context.Context, msgs []llm.Message, rec loop.Recorder) (*loop.Result, error) {
	// A teammate's prompts reach whoever can answer (the UI, the SDK's
	// can_use_tool with its agent id, PermissionRequest hooks); with none,
	// they are denied (team.go, issue 25).
	canPrompt := !a.background || a.member != nil
	auth, err := setupOf(a).authorizer(!canPrompt)
	if err != nil {
		return nil, err
	}
	rec, tpath := compactRecorder(rec) // compact.go
	if a.background {
		rec = promptWrittenFirst(rec)
	}
	offered, dynamic := setupOf(a).offered() // deferred.go
	cfg := loop.Config{
		Model: heldUntilSent(a.run.rt.cfg.Model, a.held), ModelID: a.modelID, System: a.system, SystemPrefix: a.systemPrefix, Tools: offered, Env: a.env,
		SharedTools: setupOf(a).sharedTools(offered), // toolorder.go
		MaxTurns:    a.maxTurns, MaxTokens: a.run.rt.cfg.MaxTokens, Thinking: a.run.rt.cfg.Thinking, Effort: a.effort, Recorder: rec,
		AgentID: a.id, AgentType: a.typ, Unavailable: a.unavailable, Now: a.run.rt.cfg.Now,
		Hooks:      hooksOf(a).firer(),
		Dynamic:    dynamic,      // MCP tools, none for the coordinator (coordinator.go), and loaded deferred tools
		CacheHints: a.cacheHints, // a fork's shared prefix (fork.go)
		Background: !canPrompt,
		Prompt:     a.prompt, // issue 15: UserPromptSubmit's text
	}
	if a.inbox != nil {
		cfg.Inbox = a.inbox
		if w, ok := rec.(writtenRecorder); ok {
			cfg.Inbox = writtenFirst{a.inbox, w}
		}
	}
	cfg.Compaction = compactOf(a).compaction(tpath) // compact.go
	ctx, stopBudget := budgetsOf(a).bind(ctx, &cfg) // budget.go: the loop's checks, the wall-time deadline
	defer stopBudget()
	// telemetry.go: chat and execute_tool spans (a nil *Observer must not
	// become a non-nil loop.Observer).
	if o := a.run.rt.tel.Observer(a.id, a.typ); o != nil {
		cfg.Observer = o
	}
	defer a.run.rt.compacts.running(a)()
	defer burstOf(a).end() // firstrequest.go
	if a.output != nil {
		cfg.Output = a.output
	}
	// StructuredOutput calls fill the agent's own slot: the main agent's
	// or a typed sub-agent's; any other agent (a fork has the tool too)
	// gets none to fill.
	a.env.Answer = nil
	if a.output != nil { // a nil *OutputSlot must not become a non-nil AnswerSlot
		a.env.Answer = a.output
	}
	if a.member != nil { // a teammate (team.go, issue 25)
		cfg.Idle = teammateOf(a).idle
		defer teammateOf(a).left()
		if auth, err = teammateOf(a).authorizer(auth); err != nil {
			return nil, err
		}
		// A teammate rejoining idle rests before its first request (teamrest.go).
		next, res, ok := teammateOf(a).rejoin(ctx, msgs)
		if !ok {
			if res == nil {
				return nil, ctx.Err()
			}
			return res, nil
		}
		msgs = next
	}
	if auth != nil {
		cfg.Authorizer = auth
	}
	a.noteModel(a.modelID)
	a.env.Spawner = a // the Agent and task tools reach the agent tree through it
	for ev, err := range loop.Run(ctx, cfg, msgs) {
		if err != nil {
			return nil, err
		}
		out := run.Event{AgentID: a.id, ParentToolUseID: a.toolUseID}
		switch ev.Kind {
		case loop.TextDelta:
			out.Type, out.Text = run.EventText, ev.Text
		case loop.ThinkingDelta:
			out.Type, out.Text = run.EventThinking, ev.Text
		case loop.Retry:
			out.Type, out.Retry = run.EventRetry, ev.Retry
		case loop.AssistantMessage:
			a.addUsage(ev.Usage)
			a.run.addUsage(ev.Usage)
			feedOf(a).progress("", ev.Usage.Total())
			out.Type, out.Message, out.Usage = run.EventAssistant, ev.Message, ev.Usage
			out.MessageID, out.Model, out.StopReason, out.APIDuration = ev.MessageID, ev.Model, ev.StopReason, ev.APIDuration
			out.Context = compactOf(a).contextUse(ev.Usage, cfg.Compaction) // compact.go: the TUI's meter
		case loop.ToolStart:
			feedOf(a).progress(ev.Call.Name, 0) // a call made counts as a tool use (Claude Code's task_progress)
			out.Type, out.Call = run.EventToolStart, ev.Call
		case loop.ToolEnd:
			a.noteTool(ev.Call.Name)
			o := ev.ToolResult.Output
			out.Type, out.Call = run.EventToolEnd, ev.Call
			out.ToolResult = &run.ToolResult{Text: o.Text, IsError: o.IsError, Denied: ev.ToolResult.Denied, Duration: ev.ToolResult.Duration,
				Result: o.Result}
		case loop.UserMessage:
			out.Type, out.Message = run.EventUser, ev.Message
		case loop.CompactStart, loop.CompactEnd, loop.ContextWarning:
			compactOf(a).compactEvent(ev, &out, cfg.Compaction.Thresholds.Compact) // compact.go
		case loop.Done:
			return ev.Result, nil
		}
		if out.Type == "" {
			continue
		}
		if err := a.run.send(ctx, out); err != nil {
			return nil, err
		}
		if ev.Kind == loop.ToolStart {
			if err := feedOf(a).sendProgress(ctx); err != nil { // lifecycle.go
				return nil, err
			}
		}
		if err := feedOf(a).sendTodos(ctx, ev); err != nil { // todos.go
			return nil, err
		}
		if err := sendTeamTasks(ctx, a, ev); err != nil { // tasklist.go
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, errors.New("agent loop ended without a result")
}

// hasReadDeny reports whether any deny rule can hide files from reading, so
// search results must be filtered (only then: the check costs a path
// resolution per file).
func hasReadDeny(rules []permission.Rule) bool {
	for _, r := range rules {
		if r.Behavior == permission.Deny && r.Tool == tool.Read {
			return true
		}
	}
	return false
}

// writtenFirst marks the notifications and messages a request carried
// delivered only once the transcript lines that carry them are written: the task
// journal's record is written at once, the transcript's lines are queued
// (transcript.Journal), and a process killed between the two would
// otherwise leave a notification marked delivered that no conversation
// holds — lost on resume. Written is enough for that (the lines then
// survive the process); it does not wait for the disk.
type writtenFirst struct {
	*inbox
	rec writtenRecorder
}

// writtenRecorder is a transcript recorder that can wait for its queued
// lines (transcript.JournalWriter).
type writtenRecorder interface {
	Written() error
}

// Sent implements loop.Inbox.
func (x writtenFirst) Sent() {
	if x.inbox.inFlight() {
		if err := x.rec.Written(); err != nil {
			// The agent ends with this error too (its record fails);
			// the notification reached the model, so it is delivered.
			x.inbox.b.recordFailed("transcripts", err)
		}
	}
	x.inbox.Sent()
}

// promptWritten is a transcript recorder that waits for the agent's
// first message, and for each of its answers that calls tools, to be
// written before the loop goes on: a background agent's prompt is in its
// transcript before any model sees it, and a tool call is in it before
// the tool runs. A process killed while a request is in flight or a tool
// runs leaves a task that is continued from that point (S-8.1,
// resume.go, teamresume.go), never one that starts over and makes its
// calls — a message sent, a command run — a second time, whatever the
// transcript journal's queue held.
type promptWritten struct {
	loop.Recorder
	w    writtenRecorder
	done bool
}

// promptWrittenFirst wraps rec when it can wait for its lines.
func promptWrittenFirst(rec loop.Recorder) loop.Recorder {
	if w, ok := rec.(writtenRecorder); ok {
		return &promptWritten{Recorder: rec, w: w}
	}
	return rec
}

// AppendMessage implements loop.Recorder.
func (p *promptWritten) AppendMessage(m llm.Message, model string, usage *llm.Usage) error {
	if err := p.Recorder.AppendMessage(m, model, usage); err != nil {
		return err
	}
	if p.done && (m.Role != llm.RoleAssistant || len(m.ToolUses()) == 0) {
		return nil
	}
	p.done = true
	if err := p.w.Written(); err != nil {
		return fmt.Errorf("write the agent's transcript: %w", err)
	}
	return nil
}

// Written implements writtenRecorder.
func (p *promptWritten) Written() error { return p.w.Written() }
