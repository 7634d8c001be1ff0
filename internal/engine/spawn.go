package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/spawn"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/tool"
	"github.com/cadre-dev/cadre/tool/builtin"
	"github.com/cadre-dev/cadre/transcript"
)

// refusal is an Agent call that starts nothing: the reason it is counted
// under and the message the model reads.
type refusal struct {
	reason run.RefusalReason
	msg    string
}

// spawn starts a sub-agent of a for one Agent call: the checks, the
// child's configuration, a place in the spawn gate (queued when the
// running cap is reached), the run. It returns the foreground child the
// call waits on (waiting.wait), or the call's result. Every refusal is an
// error result the model can read, counted by reason; a Go error is
// returned only when the run itself is cancelled.
func (a *agent) spawn(ctx context.Context, call tool.Call, in agentInput) (*waiting, tool.Output, error) {
	// firstrequest.go: this call's place in its answer's burst, given
	// back once its child's own hold is in.
	defer burstOf(a).enter(a, call).Release()
	if in.Name != "" || in.TeamName != "" || in.Mode != "" {
		out, err := a.teamSpawn(ctx, call, in) // team.go (issue 25)
		return nil, out, err
	}
	child, bg, ref, err := a.build(ctx, call, in)
	if err != nil {
		return nil, tool.Output{}, err
	}
	if ref == nil {
		// execute releases at the child's own end; admit (refused by the
		// gate) and finish (killed while queued) cover a child that never
		// ran.
		return a.admit(ctx, call.Turn, child, in, bg)
	}
	if ref.reason != "" {
		a.run.count(func(s *run.SubagentStats) { s.Refused[ref.reason]++ })
	}
	return nil, errorOutput(ref.msg), nil
}

// waiting is a foreground child its parent's Agent call waits on. The
// wait happens in a frame of its own, after the spawn path's frames
// (decoding, checks, the child's configuration, the ~900-byte spawn
// request) have returned: a waiting call's stack then stays under a
// quarter of 16 KiB and shrinks back to 8 KiB at a GC — 8 KiB per live
// agent (TestLiveAgentRetainedBounded).
type waiting struct {
	parent, child *agent
	hd            executor.Handle
}

// wait waits for the child and gives the parent its slot in the spawn
// gate back (admit gave it up).
func (w *waiting) wait(ctx context.Context) (tool.Output, error) {
	// Taking the slot back waits its turn ahead of queued spawns; a
	// cancelled run does not wait.
	defer func() { _ = w.parent.ticket.Resume(ctx) }()
	if h, ok := w.hd.(*childRun); ok {
		return h.wait(ctx) // a local child, as await would, one frame less
	}
	return w.parent.await(ctx, w.child, w.hd)
}

// build decides and builds the child of one Agent call: the checks, its
// isolation, its configuration (newChild, newFork) and MCP servers, and
// whether it runs in the background. A refusal is for the model to read;
// a Go error means the run is cancelled.
func (a *agent) build(ctx context.Context, call tool.Call, in agentInput) (child *agent, bg bool, ref *refusal, err error) {
	toolUseID := call.ID
	var def *agentdef.Definition
	var cwd string
	var iso agentdef.Isolation
	ref = &refusal{run.RefusedForkNested, prompts.ForkNested()} // a fork cannot start agents (fork.go)
	if !forkOf(a).inFork(call.Conversation) {
		def, cwd, ref = a.check(in)
	}
	if ref == nil {
		// isolation: worktree (worktree.go). A fork takes the call's
		// isolation (it ignores cwd) and is told about its tree after its
		// directive (fork.go, S-6.4).
		q := isolationRequest{call: in.Isolation, def: def.Isolation, cwd: in.Cwd}
		if isForkDef(def) {
			q.cwd = ""
		}
		iso, ref = worktreeOf(a).checkIsolation(q)
	}
	if ref != nil {
		return nil, false, ref, nil
	}
	if isForkDef(def) {
		child, ref = forkOf(a).newFork(call.Conversation, in, toolUseID, iso)
	} else {
		child, ref = a.newChild(def, in, toolUseID, cwd, iso)
	}
	if ref == nil {
		ref = typedOf(child).attach(in) // typed.go: its output schema
	}
	if ref != nil {
		return nil, false, ref, nil
	}
	if ref, err = mcpOf(child).acquire(ctx, a); err != nil || ref != nil { // mcp.go
		return nil, false, ref, err
	}
	if ref, err = mcpOf(child).onlyReady(ctx); err != nil || ref != nil { // mcp.go
		mcpOf(child).release()
		return nil, false, ref, err
	}
	// A remote child always runs in the background (remote.go).
	bg = iso == agentdef.IsolationRemote || toolboxOf(a.run.rt).wantsBackground(bgAsk{Call: in.RunInBackground, Definition: def.Background, Fork: isForkDef(def)})
	return child, bg, nil, nil
}

// check validates an Agent call against what a may start (S-3.3, S-3.4)
// and returns the definition and working directory of the child. A
// refusal without a reason is a malformed call, not counted.
func (a *agent) check(in agentInput) (*agentdef.Definition, string, *refusal) {
	rt := a.run.rt
	if strings.TrimSpace(in.Prompt) == "" {
		return nil, "", &refusal{msg: prompts.AgentNeedsPrompt()}
	}
	typ := strings.TrimSpace(in.SubagentType)
	if def, ref := forkOf(a).forkRoute(typ); def != nil || ref != nil {
		return def, a.env.Cwd, ref // the fork path (fork.go)
	}
	typ = cmp.Or(typ, defaultAgentType)
	if rule, denied := permission.AgentTypeDenied(a.perms.Rules, typ); denied {
		return nil, "", &refusal{run.RefusedPermission, prompts.AgentTypeDenied(typ, rule.String(), rule.Source)}
	}
	def := rt.defs[typ]
	if def == nil {
		return nil, "", &refusal{run.RefusedUnknownType, prompts.UnknownAgentType(typ, setupOf(a).listedTypes())}
	}
	if a.types != nil && !slices.Contains(a.types, typ) {
		return nil, "", &refusal{run.RefusedPermission, prompts.AgentTypeNotAllowed(typ, a.types)}
	}
	if in.Cwd == "" {
		return def, a.env.Cwd, nil
	}
	if !filepath.IsAbs(in.Cwd) {
		return nil, "", &refusal{msg: prompts.AgentCwdNotAbsolute(in.Cwd)}
	}
	if st, err := os.Stat(in.Cwd); err != nil || !st.IsDir() {
		return nil, "", &refusal{msg: prompts.AgentCwdNotDir(in.Cwd)}
	}
	return def, filepath.Clean(in.Cwd), nil
}

// listedTypes are the types a's Agent tool lists, for messages.
func (su toolSetup) listedTypes() []string {
	a := su.a
	if a.spec == nil {
		return nil
	}
	return a.spec.types
}

// admit takes the child through the spawn gate and starts it (see
// lifecycle.go). A foreground child's parent waits for it (the returned
// waiting), giving its own slot back meanwhile (it does no work while its
// Agent call waits), so nested spawns never deadlock the queue; a
// background child's call returns at once with async_launched.
func (a *agent) admit(ctx context.Context, turn tool.Turn, child *agent, in agentInput, bg bool) (*waiting, tool.Output, error) {
	handed := false // the slot goes back in waiting.wait once handed over
	if !bg {
		a.ticket.Suspend()
		defer func() {
			if !handed {
				_ = a.ticket.Resume(ctx)
			}
		}()
	}
	hd, out, err := a.launch(ctx, turn, child, in, bg)
	if hd == nil || err != nil {
		return nil, out, err
	}
	handed = true
	return &waiting{parent: a, child: child, hd: hd}, tool.Output{}, nil
}

// launch is admit after the parent's slot: the gate, the spawn request
// and the executor's Start. It returns the handle of a foreground child
// to wait on, or (nil handle) the call's result.
func (a *agent) launch(ctx context.Context, turn tool.Turn, child *agent, in agentInput, bg bool) (executor.Handle, tool.Output, error) {
	rt := a.run.rt
	// Calls of one batch join the queue in the order they were made
	// (issue 29); Admit never blocks, so the turn passes at once.
	if err := turn.Await(ctx); err != nil {
		mcpOf(child).release()
		return nil, tool.Output{}, err
	}
	req, ref := a.enterGate(child, in, bg)
	if ref != nil {
		turn.Done()
		return nil, errorOutput(ref.msg), nil
	}
	if rt.tel != nil { // telemetry.go: the child's spans join this call's
		req.Trace = executor.TraceContext(rt.tel.Inject(ctx))
	}
	// The child as plain data, started through the executor seam
	// (local.go). A queued child's EventTaskPending goes out in Start,
	// before the turn passes, so the pending events of one batch come out
	// in call order too (lifecycle.go's live waits).
	hd, err := rt.bg.exec.Start(ctx, req)
	turn.Done()
	if err != nil {
		child.ticket.Release()
		budgetsOf(child).close()
		mcpOf(child).release()
		return nil, tool.Output{}, err
	}
	if bg {
		return nil, tool.Output{Text: prompts.AsyncLaunched{AgentID: child.id, AgentType: child.typ, Description: in.Description,
			OutputFile: child.transcriptPath()}.Render()}, nil
	}
	return hd, tool.Output{}, nil
}

// await is what the waiting Agent call gets of the foreground child of
// hd. A local child's is what its run made of its end (execute: the
// framed report, or why it failed; async_launched when it was moved to
// the background); another executor's child is reported from its
// structured result the same way.
func (a *agent) await(ctx context.Context, child *agent, hd executor.Handle) (tool.Output, error) {
	if h, ok := hd.(*childRun); ok {
		return h.wait(ctx)
	}
	res, err := hd.Wait(ctx)
	switch {
	case err != nil:
		return tool.Output{}, err
	case res.Status == task.Completed, res.Status == task.BudgetExhausted:
		return reportOf(child).callResult(a, res, nil), nil
	case res.Status == task.Killed && ctx.Err() != nil:
		return tool.Output{}, ctx.Err()
	case res.Status == task.Killed:
		// Stopped on its own: the parent goes on.
		return errorOutput(prompts.SubagentStopped(child.id, child.typ)), nil
	}
	return reportOf(child).callResult(a, res, errors.New(res.Error)), nil
}

// enterGate takes child through the spawn gate (queued when the running
// cap is reached, refused past the queue's) and describes it as the
// request the executor starts; the local executor is given the child
// itself (prepare). A refused child's MCP lease is released.
func (a *agent) enterGate(child *agent, in agentInput, bg bool) (executor.SpawnRequest, *refusal) {
	rs, rt := a.run, a.run.rt
	if ref := budgetsOf(a).reserve(child, in); ref != nil { // budget.go
		mcpOf(child).release()
		if ref.reason != "" {
			rs.count(func(s *run.SubagentStats) { s.Refused[ref.reason]++ })
		}
		return executor.SpawnRequest{}, ref
	}
	ticket, ref := rt.gate.Admit(a.depth)
	if ref != nil {
		budgetsOf(child).close()
		mcpOf(child).release() // mcp.go: it never ran
		reason := refusalReason(ref.Limit)
		rs.count(func(s *run.SubagentStats) { s.Refused[reason]++ })
		return executor.SpawnRequest{}, &refusal{reason, ref.Message()}
	}
	child.ticket = ticket
	rs.count(func(s *run.SubagentStats) {
		s.Spawned++
		if ticket.Queued() {
			s.Queued++
		}
	})
	if ticket.Queued() {
		child.spawnReceipt.Queued, child.spawnReceipt.QueuePosition = true, ticket.Position()
	}
	rt.bg.local.prepare(a, child, in)
	req := child.request(a, in, bg)
	budgetsOf(child).request(&req) // budget.go
	return req, nil
}

// newChild builds a child agent from def: its ceiling, model, tools,
// prompt and environment. It refuses a child that would have no tools or
// whose definition cannot be applied.
func (a *agent) newChild(def *agentdef.Definition, in agentInput, toolUseID, cwd string, isolation agentdef.Isolation) (*agent, *refusal) {
	return a.newChildID(def, in, toolUseID, cwd, isolation, newAgentID())
}

// newChildID is newChild with the child's id given: a finished agent
// continued with SendMessage keeps its id (resume.go).
func (a *agent) newChildID(def *agentdef.Definition, in agentInput, toolUseID, cwd string, isolation agentdef.Isolation, id string) (*agent, *refusal) {
	rt := a.run.rt
	depth := a.depth + 1
	maxDepth := rt.gate.Limits().MaxDepth
	var limits permission.SessionLimits
	if rt.cfg.Permissions != nil {
		limits = rt.cfg.Permissions.Limits
	}
	c := spawn.ComputeCeiling(spawn.CeilingInput{
		// ceilingPool: the coordinator's workers draw on every tool (coordinator.go).
		ParentTools: setupOf(a).ceilingPool().Names(), ParentTypes: a.types, ParentPerms: a.perms, Limits: limits,
		Def: def, Depth: depth, MaxDepth: maxDepth,
	})
	if len(c.Tools) == 0 && !spawn.NamesMCP(def) {
		// An agent whose tools are only MCP tools is decided once its
		// servers are connected (mcpGlue.onlyReady).
		var why []string
		for _, d := range c.Dropped {
			why = append(why, d.Name+": "+d.Reason)
		}
		return nil, &refusal{run.RefusedNoTools, prompts.NoTools(def.Name, why)}
	}
	receipt := newReceipt(def.Name, depth, false, &c)
	modelID, rule := spawn.ChooseModel(spawn.ModelChoice{
		Forced: rt.cfg.ForceSubagentModel, Call: in.Model, Definition: def.Model,
		Default: rt.cfg.SubagentModel, Parent: a.modelID, Resolve: rt.cfg.ResolveModel,
	})
	receipt.Model, receipt.ModelRule = modelID, run.ModelRule(rule)
	env := childEnv(a.env, id)
	env.Cwd = cwd
	child := &agent{
		run: a.run, id: id, typ: def.Name, toolUseID: toolUseID, depth: depth, def: def,
		modelID: modelID, types: c.Types, perms: c.Perms, env: env, maxTurns: def.MaxTurns,
		effort: cmp.Or(in.Effort, def.Effort), spawnReceipt: receipt, isolation: isolation,
	}
	tools := make([]tool.Tool, 0, len(c.Tools))
	for _, name := range c.Tools {
		if name == AgentToolName {
			child.spec = toolboxOf(rt).agentSpec(c.Perms.Rules, c.Types)
			tools = append(tools, &agentTool{spec: child.spec})
			continue
		}
		t, _ := setupOf(a).ceilingPool().Get(name)
		if entries := c.Narrow[name]; entries != nil {
			nt, err := spawn.Narrow(t, entries, rt.cfg.Home)
			if err != nil {
				return nil, &refusal{run.RefusedDefinition, prompts.BadDefinition(def.Name, err, def.Path)}
			}
			t = nt
		}
		tools = append(tools, t)
	}
	child.pool = tool.NewPool(tools...)
	if readOnlyAgent(def, child.pool, c.Narrow[tool.Bash] != nil) {
		child.perms.ReadOnly = true // issue 9: read-only by construction, not by prompt
	}
	if child.spec == nil && depth >= maxDepth {
		child.unavailable = map[string]string{AgentToolName: prompts.DepthLimit(depth, maxDepth)}
	}
	if isolation != agentdef.IsolationWorktree {
		// An isolated child's prompt is rendered in its tree
		// (treeGlue.enter); a remote child's here, so that its request
		// carries it (remote.go).
		child.systemPrefix, child.system = setupOf(child).renderSystem(cwd)
	}
	return child, nil
}

func (c *agent) warn(msg string) { c.spawnReceipt.Warnings = append(c.spawnReceipt.Warnings, msg) }

// taskInfo describes the child for its task events.
func (c *agent) taskInfo(parent *agent, in agentInput, status task.Status) *run.TaskInfo {
	return &run.TaskInfo{AgentID: c.id, ToolUseID: c.toolUseID, AgentType: c.typ, Description: in.Description, Status: status,
		Background: c.background, Depth: c.depth, Parent: parent.name(), Receipt: c.spawnReceipt,
		Teammate: teammateOf(c).info()} // team.go
}

// name is the agent's id, "main" for the main agent.
func (a *agent) name() string { return cmp.Or(a.id, "main") }

// agentMeta is the .meta.json beside a sub-agent's transcript (S-8.1).
type agentMeta struct {
	AgentID     string      `json:"agent_id"`
	AgentType   string      `json:"agent_type"`
	Description string      `json:"description"`
	ToolUseID   string      `json:"tool_use_id"`
	Depth       int         `json:"depth"`
	Parent      string      `json:"parent"`
	Model       string      `json:"model"`
	Worktree    string      `json:"worktree"`
	Background  bool        `json:"background"`
	StartedAt   time.Time   `json:"started_at"`
	Finished    bool        `json:"finished"`
	Status      task.Status `json:"status,omitempty"`
	FinishedAt  time.Time   `json:"finished_at,omitzero"`
	Receipt     run.Receipt `json:"receipt"`
	// Budget is what the agent spent of its reservation (Receipt.Budget)
	// and what returned to its parent, once it ended (budget.go).
	Budget *run.BudgetSpend `json:"budget,omitempty"`
	// Isolation is remote for an agent that ran on a remote worker
	// (remotelog.go): continuing it runs it there again.
	Isolation agentdef.Isolation `json:"isolation,omitempty"`
}

// writeMeta queues the agent's .meta.json on the session's journal: a plain
// create when the agent starts, a rewrite in place when it ends (the
// record only grows: its status and end are added; transcript.rewriteFile).
//
// The record is one line of compact JSON: MarshalIndent took ~43 µs a
// record against ~5 µs, twice per sub-agent on the spawn path. Marshal
// encodes into its pooled buffer and copies the bytes out once, in a
// slice of their size class (a general-purpose child's record is ~960
// bytes, so the '\n' fits without a copy): less than a buffer of a fixed
// size and an encoder per record.
func writeMeta(j *transcript.Journal, path string, m *agentMeta) error {
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode agent meta: %w", err)
	}
	b = append(b, '\n')
	// The bytes are this call's own: the journal keeps them without a copy.
	if !m.Finished {
		return j.CreateOwned(path, b)
	}
	return j.GrowOwned(path, b)
}

// execute runs the child to the end and turns its outcome into the Agent
// tool's result. Cleanup (shells, transcript, meta, counters) runs on every
// path.
func (c *agent) execute(ctx context.Context, parent *agent, in agentInput) (tool.Output, error) {
	rs, rt := c.run, c.run.rt
	start := rt.cfg.Now()
	shells := builtin.NewShells()
	defer shells.Close()
	c.env.Shells = shells
	// Its worktree: made now (isolation), or its parent's leased; released
	// on every path, and before the report so that the report can say
	// what became of it (worktree.go).
	if msg, ok := worktreeOf(c).enter(ctx, parent); !ok {
		rs.count(func(s *run.SubagentStats) { s.Failed++ })
		return errorOutput(msg), nil
	}
	defer worktreeOf(c).leave(ctx)

	meta := &agentMeta{AgentID: c.id, AgentType: c.typ, Description: in.Description, ToolUseID: c.toolUseID, Depth: c.depth,
		Parent: parent.name(), Model: c.modelID, Background: c.background, StartedAt: start.UTC(), Receipt: c.spawnReceipt, Worktree: c.spawnReceipt.Worktree}
	var tpath, mpath string
	var rec loop.Recorder
	status := task.Failed
	if rs.journal != nil {
		// Issue 9: ids are checked and the path stays in StateDir: New
		// checked the session's (transcript.SessionFile), so an agent id
		// of letters, digits, '-' and '_' keeps the path in the sub-agents'
		// directory (transcript.AgentFile, without computing the project's
		// directory again for every child).
		if err := transcript.ValidateAgentID(c.id); err != nil {
			rs.count(func(s *run.SubagentStats) { s.Failed++ })
			return errorOutput(prompts.SubagentNotStarted(err)), nil
		}
		tpath = c.transcriptPath()
		mpath = strings.TrimSuffix(tpath, ".jsonl") + ".meta.json"
		defer holdFiles(c).Release() // firstrequest.go; held since its start unless it was queued
		jw := rs.journal.Transcript(tpath, rt.session, c.id, rt.cfg.Now)
		// No descriptor is held for it once it ended.
		defer func() { _ = jw.Release() }()
		rec = c.resumeRecorder(jw) // a continued agent's history is in the file already (resume.go)
		if err := writeMeta(rs.journal, mpath, meta); err != nil {
			mpath = ""
			rs.count(func(s *run.SubagentStats) { s.Failed++ })
			return errorOutput(prompts.SubagentNotStarted(err)), nil
		}
	}
	defer mcpOf(c).release() // mcp.go: inline servers stop with the child
	defer func() {
		// Runs on every exit path: the slot is released by the caller;
		// here the record is closed and counted.
		rs.count(func(s *run.SubagentStats) {
			switch status {
			case task.Completed, task.BudgetExhausted:
				s.Completed++
			case task.Killed:
				s.Killed++
			default:
				s.Failed++
			}
		})
		parent.absorb(&c.tally)
		if mpath != "" {
			meta.Finished, meta.Status, meta.FinishedAt = true, status, rt.cfg.Now().UTC()
			if c.final != nil {
				meta.Budget = c.final.Budget
			}
			if err := writeMeta(rs.journal, mpath, meta); err != nil {
				// Queued after the agent's own check: the run's sync or
				// the journal's close reports a failed write; this is
				// the journal refusing it.
				rt.bg.recordFailed("transcripts", err)
			}
		}
	}()

	if err := rs.send(ctx, run.Event{Type: run.EventTaskStarted, AgentID: c.id, ParentToolUseID: c.toolUseID, Task: c.taskInfo(parent, in, task.Running)}); err != nil {
		status = task.Killed
		if c.spawnReceipt.Queued {
			// Its EventTaskPending went out: say it ended.
			rs.sendFinal(run.Event{Type: run.EventTaskCompleted, AgentID: c.id, ParentToolUseID: c.toolUseID,
				Subagent: reportOf(c).structured(task.Killed, nil, err, 0, "")})
		}
		return tool.Output{}, err
	}
	prompt := in.Prompt
	if c.def.InitialPrompt != "" {
		prompt = c.def.InitialPrompt + "\n\n" + prompt
	}
	prompt = teammateOf(c).firstClaim(ctx, prompt)       // teamrest.go: a task with its prompt
	msgs, runErr := forkOf(c).startMessages(prompt, rec) // a fork's inherited conversation (fork.go)
	var res *loop.Result
	if runErr == nil {
		// Hooks (hooks.go): SubagentStart, and the definition's hooks while
		// the child runs, removed on every exit path. A fork's hook context
		// goes after its directive (fork.go).
		hm := hooksOf(c).message(msgs)
		defer hooksOf(c).begin(ctx, parent, tpath, hm)()
		msgs = hooksOf(c).withContext(msgs, hm)
		res, runErr = c.safeRun(ctx, msgs, rec)
	}
	if runErr == nil {
		// Background children of its own end first (lifecycle.go).
		res, runErr = c.settle(ctx, res, rec)
	}
	if runErr == nil {
		runErr = typedOf(c).failure(res) // typed.go: its attempts spent
	}
	if runErr == nil && tpath != "" {
		// Its transcript and metadata are written as it goes; one that
		// could not be (a full disk, no descriptor left) fails the agent
		// rather than leaving it without a record.
		if err := rs.journal.Written(tpath, mpath); err != nil {
			runErr = fmt.Errorf("record the agent: %w", err)
		}
	}
	switch {
	case ctx.Err() != nil:
		status = task.Killed
	case runErr != nil:
		status = task.Failed
	case res != nil && res.BudgetExhausted:
		status = task.BudgetExhausted // budget.go: stopped with a partial report
	default:
		status = task.Completed
	}
	result := reportOf(c).structured(status, res, runErr, rt.cfg.Now().Sub(start), tpath)
	result.Budget = budgetsOf(c).close() // its unspent reservation returns to its parent
	result.Worktree = worktreeOf(c).leave(ctx)
	c.final = result
	if status != task.Killed {
		if err := rs.send(ctx, run.Event{Type: run.EventTaskCompleted, AgentID: c.id, ParentToolUseID: c.toolUseID, Subagent: result}); err != nil {
			status = task.Killed
		}
	}
	if status == task.Killed {
		// A killed agent still reports how it ended, with its numbers,
		// though the run is cancelled (outcome.go).
		result.Status = task.Killed
		rs.sendFinal(run.Event{Type: run.EventTaskCompleted, AgentID: c.id, ParentToolUseID: c.toolUseID, Subagent: result})
		return tool.Output{}, ctx.Err()
	}
	return reportOf(c).callResult(parent, result, runErr), nil
}

// callResult is what the waiting Agent call of parent gets of the child's
// end (completed or failed with failure): the framed report, or why it
// failed, with what became of its worktree.
func (cr childReport) callResult(parent *agent, result *run.SubagentResult, failure error) tool.Output {
	c := cr.a
	if failure != nil {
		msg := prompts.SubagentFailed(c.id, c.typ, failure)
		if w := worktreeReport(result.Worktree); w != nil {
			msg += "\n" + w.Render()
		}
		return errorOutput(msg)
	}
	// Issue 29: how to continue it, rendered with the report (one string).
	_, continuable := parent.pool.Get(tool.SendMessage)
	return tool.Output{Text: cr.reportContinuable(result, continuable && !c.def.OneShot)}
}

// safeRun runs the child's loop, turning a panic anywhere below it (the
// model adapter, the loop) into an error so the parent goes on.
func (c *agent) safeRun(ctx context.Context, msgs []llm.Message, rec loop.Recorder) (res *loop.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, errors.New(prompts.SubagentCrashed(p))
		}
	}()
	return c.runLoop(ctx, msgs, rec)
}

// structured builds the SubagentResult of a finished child.
func (cr childReport) structured(status task.Status, res *loop.Result, runErr error, d time.Duration, tpath string) *run.SubagentResult {
	c := cr.a
	c.mu.Lock()
	defer c.mu.Unlock()
	stats, uses := map[string]int{}, 0
	for k, v := range c.toolStats {
		stats[k] = v
		uses += v
	}
	out := &run.SubagentResult{
		AgentID: c.id, AgentType: c.typ, ToolUseID: c.toolUseID, Status: status, Model: c.modelID, ModelRule: c.spawnReceipt.ModelRule,
		ModelsUsed: slices.Clone(c.models), ToolUses: uses, ToolStats: stats, Usage: c.usage,
		Duration: d, TranscriptPath: tpath, Receipt: c.spawnReceipt,
		Continuable: tpath != "" && !c.fork && (c.def == nil || !c.def.OneShot), // resume.go
	}
	if runErr != nil {
		out.Error = runErr.Error()
	}
	if res != nil {
		out.Turns, out.MaxTurnsHit = res.Turns, res.MaxTurnsHit
		out.Text = lastAssistantText(res.Messages)
		if res.BudgetExhausted {
			out.Text = res.Text // its partial report (budget.go)
		}
	}
	typedOf(c).result(out, res) // typed.go
	return out
}

func lastAssistantText(msgs []llm.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleAssistant {
			if t := strings.TrimSpace(msgs[i].Text()); t != "" {
				return t
			}
		}
	}
	return ""
}

// report is the Agent tool's result text for a finished child (S-3.6).
func (cr childReport) report(res *run.SubagentResult) string {
	return cr.reportContinuable(res, false)
}

// reportContinuable is report, ending with how to continue the agent with
// SendMessage when continuable.
func (cr childReport) reportContinuable(res *run.SubagentResult, continuable bool) string {
	c := cr.a
	r := prompts.Report{AgentID: c.id, AgentType: c.typ, Text: res.Text, OneShot: c.def.OneShot, TranscriptPath: res.TranscriptPath,
		Tokens: res.Usage.Total(), ToolUses: res.ToolUses, Duration: res.Duration, Worktree: worktreeReport(res.Worktree),
		StructuredOutput: prompts.ReportJSON(res.StructuredOutput), Budget: budgetsOf(c).line(res.Budget)}
	if res.MaxTurnsHit {
		r.MaxTurns = c.maxTurns
	}
	if continuable {
		r.Continue = c.id
	}
	return r.Render()
}

// childEnv is the Env of a's child id: a clone of a's, without structured
// tool results, which only the main agent's calls are printed with.
func childEnv(parent *tool.Env, id string) *tool.Env {
	env := parent.Clone(id)
	env.OmitResults = true
	return env
}
