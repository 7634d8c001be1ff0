package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/hooks"
	"github.com/cadre-dev/cadre/internal/worktree"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/run"
)

// Hooks returns the session's hook dispatcher: the settings' hooks
// (Config.Hooks) plus whatever is added to it. Every agent of the session
// — main, sub-agents at any depth — fires through it (S-14.3). Add
// registers hooks for every agent from then on, such as an SDK's
// callbacks.
func (r *Runtime) Hooks() *hooks.Dispatcher { return r.hooks }

// initHooks makes the session's dispatcher; its observer turns hook runs
// into events of the run in progress.
func (sg sessionGlue) initHooks() {
	r := sg.r
	r.hooks = hooks.New(r.cfg.Hooks, hooks.Options{ProjectDir: r.cfg.Cwd, Env: r.cfg.HookEnv, Observer: &r.hookSink})
}

// hookSink sends the hook runs of a Run into its stream. Hooks run in
// their own goroutines, so it holds the run it sends to under a lock;
// outside a Run (SessionEnd in Close) runs are not streamed.
type hookSink struct {
	mu  sync.RWMutex
	run *runState
	ctx context.Context
}

// HookStarted sends EventHookStarted to the run in progress.
func (h *hookSink) HookStarted(hr hooks.Run) { h.emit(run.EventHookStarted, hr) }

// HookFinished sends EventHookFinished to the run in progress.
func (h *hookSink) HookFinished(hr hooks.Run) { h.emit(run.EventHookFinished, hr) }

func (h *hookSink) emit(t run.EventType, hr hooks.Run) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.run == nil {
		return
	}
	// Like every event, it waits for the consumer, and gives up when the
	// run is cancelled.
	_ = h.run.send(h.ctx, run.Event{Type: t, AgentID: hr.AgentID, Hook: &hr})
}

// attach streams hook runs into s until the returned detach is called
// (before s's stream is closed).
func (h *hookSink) attach(ctx context.Context, s *runState) (detach func()) {
	h.mu.Lock()
	h.run, h.ctx = s, ctx
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		h.run, h.ctx = nil, nil
		h.mu.Unlock()
	}
}

// bind gives a its binding of the dispatcher: what every input of
// its events carries. tpath is a sub-agent's own transcript.
func (hg hookGlue) bind(tpath string) {
	a := hg.a
	rt := a.run.rt
	mode := a.perms.Mode
	a.hooks = rt.hooks.ForAgent(hooks.Scope{
		SessionID: rt.session, TranscriptPath: rt.tpath, Cwd: a.env.Cwd,
		AgentID: a.id, AgentType: agentTypeOf(a), AgentTranscriptPath: tpath,
		PermissionMode: func() permission.Mode { return mode },
		// What it leaves running when it stops (hooktasks.go).
		BackgroundTasks: hg.liveBackgroundTasks,
	})
}

// agentTypeOf is the agent_type hooks see: "" for the main agent.
func agentTypeOf(a *agent) string {
	if a.id == "" {
		return ""
	}
	return a.typ
}

// firer is what the agent's loop fires hooks through; nil when the
// agent has no binding.
func (hg hookGlue) firer() hooks.Firer {
	a := hg.a
	if a.hooks == nil {
		return nil
	}
	return a.hooks
}

// startSession fires SessionStart before the session's first prompt
// (source "startup", or "resume" when it continues a conversation) and
// puts what its hooks add for the model before that prompt. It registers
// SessionEnd to fire when the session closes.
func (s *runState) startSession(ctx context.Context, main *agent, first *llm.Message) {
	r := s.rt
	r.hookMu.Lock()
	started := r.sessionStarted
	r.sessionStarted = true
	r.hookMu.Unlock()
	if started {
		return
	}
	source := "startup"
	if len(r.cfg.History) > 0 {
		source = "resume"
	}
	o := main.hooks.Fire(ctx, &hooks.Input{HookEventName: hooks.SessionStart, Source: source})
	addContext(first, hooks.SessionStart, o.Context)
	end := main.hooks
	glueOf(r).onClose(func() error {
		// The session's end: Close gives the hooks their own timeouts,
		// not the last run's context.
		o := end.Fire(context.Background(), &hooks.Input{HookEventName: hooks.SessionEnd, Reason: "other"})
		return hookErrors(o)
	})
}

// hookErrors reports hooks that failed to run at the session's end.
func hookErrors(o hooks.Outcome) error {
	for _, r := range o.Errors() {
		if r.Err != nil {
			return fmt.Errorf("SessionEnd hook %q: %w", r.Command, r.Err)
		}
	}
	return nil
}

// addContext puts text the hooks of ev added for the model in a block
// before the message's own content.
func addContext(m *llm.Message, ev hooks.Event, context []string) {
	text := prompts.HookContext(string(ev), context)
	if text == "" {
		return
	}
	content := make([]llm.Block, 0, len(m.Content)+1)
	content = append(content, llm.TextBlock(text))
	m.Content = append(content, m.Content...)
}

// begin is a sub-agent's hook lifecycle, for every kind of child
// (sync, background, fork): it binds the child's hooks, fires
// SubagentStart through its parent (the context the hooks add reaches the
// child before its first turn, in first) and registers the definition's
// frontmatter hooks for as long as the child runs (S-5.5). The returned
// end removes them; the caller defers it so it runs on every exit path
// (S-5.6). SubagentStop is fired by the child's own loop when it stops
// (its binding turns Stop into SubagentStop).
func (hg hookGlue) begin(ctx context.Context, parent *agent, tpath string, first *llm.Message) (end func()) {
	c := hg.a
	hg.bind(tpath)
	// The parent is bound before its loop runs, so before it can spawn.
	if !parent.hooks.Quiet() { // no hook: no input to build
		o := parent.hooks.Fire(ctx, &hooks.Input{HookEventName: hooks.SubagentStart, AgentID: c.id, AgentType: c.typ, Cwd: c.env.Cwd})
		addContext(first, hooks.SubagentStart, o.Context)
	}
	return hg.registerDefinition()
}

// registerDefinition adds the hooks of the child's definition for
// its events only; the returned func removes them. A definition whose
// hooks cannot be used runs without them, with a warning in its receipt.
func (hg hookGlue) registerDefinition() func() {
	c := hg.a
	def := c.def
	if def == nil || len(def.Hooks) == 0 {
		return func() {}
	}
	if def.Source == agentdef.SourcePlugin {
		// agentdef drops them with a warning already; never run them.
		return func() {}
	}
	cfg, diags, err := hooks.ParseAgent(def.Hooks, def.Path)
	for _, d := range diags {
		c.warn("hooks: " + d.String())
	}
	if err != nil {
		c.warn(fmt.Sprintf("hooks: %v; the agent runs without its hooks", err))
		return func() {}
	}
	return c.run.rt.hooks.AddForAgent(c.id, cfg)
}

// prompter puts the hooks in front of the permission prompt: the
// PermissionRequest hooks answer first, and a Notification fires when a
// person is asked. With no one to ask and no PermissionRequest hook, next
// (nil) is kept, so the session knows nobody can answer.
func (hg hookGlue) prompter(next permission.Prompter) permission.Prompter {
	a := hg.a
	if a.hooks == nil || (next == nil && !a.run.rt.hooks.Has(hooks.PermissionRequest)) {
		return next
	}
	if next != nil {
		next = notifyingPrompter{hooks: a.hooks, next: next}
	}
	return hooks.Prompter{Hooks: a.hooks, Next: next}
}

// answerer lets the PermissionRequest hooks decide a background
// agent's calls that would be asked about, before the session denies them
// for want of a prompt (S-7.5): Claude Code runs these hooks for agents
// that cannot show prompts too. Hooks added later (a frontmatter's) are
// seen, since the dispatcher is asked at every call.
func (hg hookGlue) answerer() permission.Answerer {
	a := hg.a
	if a.hooks == nil {
		return nil
	}
	return hooks.Prompter{Hooks: a.hooks}
}

// notifyingPrompter fires Notification while a person is being asked.
type notifyingPrompter struct {
	hooks *hooks.Agent
	next  permission.Prompter
}

// Prompt fires the Notification hooks alongside the prompt (a slow
// notifier does not hold up the question) and returns when both are done.
func (p notifyingPrompter) Prompt(ctx context.Context, pr permission.Prompt) (permission.Reply, error) {
	var wg sync.WaitGroup
	wg.Go(func() {
		p.hooks.Fire(ctx, &hooks.Input{HookEventName: hooks.Notification, NotificationType: "permission_prompt",
			Message: fmt.Sprintf("cadre needs your permission to use %s", pr.Request.Tool)})
	})
	defer wg.Wait()
	return p.next.Prompt(ctx, pr)
}

// hookWorktrees runs the session's WorktreeCreate and WorktreeRemove hooks
// in place of git (S-9.1): it is an internal/worktree Creator and Remover,
// for the runtime's worktree code to use while HandlesWorktrees says a
// WorktreeCreate hook is configured.
type hookWorktrees struct {
	r *Runtime
}

// HandlesWorktrees reports whether a WorktreeCreate hook is configured
// now (settings, or hooks added since); asked at every creation.
func (h hookWorktrees) HandlesWorktrees() bool { return h.r.hooks.Has(hooks.WorktreeCreate) }

func (h hookWorktrees) firer() *hooks.Agent {
	r := h.r
	return r.hooks.ForAgent(hooks.Scope{SessionID: r.session, TranscriptPath: r.tpath, Cwd: r.cfg.Cwd})
}

// CreateWorktree fires WorktreeCreate; the hook makes the directory and
// prints its path. A hook that fails, blocks or prints no path fails the
// creation, with its reason.
func (h hookWorktrees) CreateWorktree(ctx context.Context, req worktree.HookRequest) (string, error) {
	o := h.firer().Fire(ctx, &hooks.Input{HookEventName: hooks.WorktreeCreate, Name: req.Name, Cwd: req.Dir, SessionID: req.SessionID})
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := hookFailure(o); err != nil {
		return "", fmt.Errorf("WorktreeCreate hook: %w", err)
	}
	if o.WorktreePath == "" {
		return "", errors.New("WorktreeCreate hook printed no path")
	}
	return o.WorktreePath, nil
}

// RemoveWorktree fires WorktreeRemove for a tree a WorktreeCreate hook
// made. Without a WorktreeRemove hook, or when it fails, it is an error,
// so the tree counts as kept (cadre cannot tell whether it holds work).
func (h hookWorktrees) RemoveWorktree(ctx context.Context, req worktree.HookRequest) error {
	if !h.r.hooks.Has(hooks.WorktreeRemove) {
		return errors.New("no WorktreeRemove hook is configured")
	}
	o := h.firer().Fire(ctx, &hooks.Input{HookEventName: hooks.WorktreeRemove, WorktreePath: req.Path, Cwd: req.Dir, SessionID: req.SessionID})
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := hookFailure(o); err != nil {
		return fmt.Errorf("WorktreeRemove hook: %w", err)
	}
	return nil
}

// hookFailure is the first reason a hook of o failed or blocked.
func hookFailure(o hooks.Outcome) error {
	if o.Blocked {
		return errors.New(strings.Join(o.Feedback, "; "))
	}
	for _, r := range o.Errors() {
		switch {
		case r.Err != nil:
			return fmt.Errorf("%s: %w", r.Command, r.Err)
		default:
			return fmt.Errorf("%s exited %d: %s", r.Command, r.ExitCode, strings.TrimSpace(r.Stderr))
		}
	}
	return nil
}
