package hooks

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Observer sees every hook run: when it starts and when it ends (with exit
// code, duration and decision). The CLI shows them in --verbose and
// stream-json output. Methods are called from the goroutines that run the
// hooks, concurrently; they must not block.
type Observer interface {
	HookStarted(r Run)
	HookFinished(r Run)
}

// Options configure a Dispatcher.
type Options struct {
	// ProjectDir is the project root, given to hooks as CLAUDE_PROJECT_DIR
	// and CADRE_PROJECT_DIR, and their working directory when an input
	// has no cwd.
	ProjectDir string
	// Env is the hooks' environment; nil means the process's own.
	Env []string
	// DefaultTimeout bounds hooks without a timeout; 0 means 60 s.
	DefaultTimeout time.Duration
	// MaxOutput caps the bytes kept of each hook's stdout and of its
	// stderr; 0 means 64 KiB. Output past it is read and dropped.
	MaxOutput int
	// WaitDelay bounds the wait for output pipes held open by processes a
	// hook left behind outside its process group; 0 means 2 s.
	WaitDelay time.Duration
	// Shell runs commands as Shell -c COMMAND; "" means /bin/sh, like
	// Claude Code.
	Shell string
	// Observer, when set, sees every hook run.
	Observer Observer
}

// Dispatcher fires hooks: the settings' hooks, hooks added later (an SDK's
// callbacks) and hooks registered for one agent's lifetime (agent
// frontmatter). There is one per Runtime and every agent kind — main,
// sync, background, fork, teammate — goes through it (S-14.3). Safe for
// concurrent use.
type Dispatcher struct {
	opts Options
	env  []string
	base *Config

	mu     sync.RWMutex
	extra  map[uint64]registration
	nextID uint64
	// count is the number of handlers in base and extra, read without
	// the lock so the common case (no hooks) costs nothing.
	count atomic.Int64
	runs  atomic.Uint64
}

// registration is a Config added to the dispatcher, for every agent
// (agentID == "" and global) or for one agent only.
type registration struct {
	cfg     *Config
	agentID string
	global  bool
}

// New returns a Dispatcher for the settings' hooks (nil for none).
func New(settings *Config, opts Options) *Dispatcher {
	if opts.DefaultTimeout <= 0 {
		opts.DefaultTimeout = DefaultTimeout
	}
	if opts.MaxOutput <= 0 {
		opts.MaxOutput = 64 << 10
	}
	if opts.WaitDelay <= 0 {
		opts.WaitDelay = 2 * time.Second
	}
	if opts.Shell == "" {
		opts.Shell = "/bin/sh"
	}
	env := opts.Env
	if env == nil {
		env = os.Environ()
	}
	env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		return strings.HasPrefix(kv, "CLAUDE_PROJECT_DIR=") || strings.HasPrefix(kv, "CADRE_PROJECT_DIR=")
	})
	if opts.ProjectDir != "" {
		env = append(env, "CLAUDE_PROJECT_DIR="+opts.ProjectDir, "CADRE_PROJECT_DIR="+opts.ProjectDir)
	}
	if settings == nil {
		settings = &Config{}
	}
	d := &Dispatcher{opts: opts, env: env, base: settings, extra: map[uint64]registration{}}
	d.count.Store(int64(settings.Len()))
	return d
}

// Settings returns the settings' hooks the dispatcher was made with.
func (d *Dispatcher) Settings() *Config { return d.base }

// Add registers hooks for every agent, such as an SDK's callback hooks;
// remove takes them away again.
func (d *Dispatcher) Add(cfg *Config) (remove func()) {
	return d.register(registration{cfg: cfg, global: true})
}

// AddForAgent registers hooks that fire only for events of the agent
// agentID — an agent's frontmatter hooks (S-5.5) — until remove is called.
// The caller calls remove on every exit path of the agent (S-5.6), by
// defer; calling it twice is harmless.
func (d *Dispatcher) AddForAgent(agentID string, cfg *Config) (remove func()) {
	return d.register(registration{cfg: cfg, agentID: agentID})
}

func (d *Dispatcher) register(r registration) func() {
	if r.cfg.Len() == 0 {
		return func() {}
	}
	d.mu.Lock()
	d.nextID++
	id := d.nextID
	d.extra[id] = r
	d.count.Add(int64(r.cfg.Len()))
	d.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			d.mu.Lock()
			delete(d.extra, id)
			d.count.Add(-int64(r.cfg.Len()))
			d.mu.Unlock()
		})
	}
}

// Has reports whether any hook is configured for ev, for any agent: the
// worktree code asks it to choose between WorktreeCreate hooks and git.
func (d *Dispatcher) Has(ev Event) bool {
	if d == nil || d.count.Load() == 0 {
		return false
	}
	has := func(c *Config) bool {
		return slices.ContainsFunc(c.groups, func(g Group) bool { return g.Event == ev })
	}
	if has(d.base) {
		return true
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	for _, r := range d.extra {
		if has(r.cfg) {
			return true
		}
	}
	return false
}

// Registered returns the hooks registered for agentID alone (frontmatter
// hooks of a running agent), for listings and tests.
func (d *Dispatcher) Registered(agentID string) *Config {
	d.mu.RLock()
	defer d.mu.RUnlock()
	c := &Config{}
	for _, id := range d.sortedIDs() {
		if r := d.extra[id]; !r.global && r.agentID == agentID {
			c.groups = append(c.groups, r.cfg.groups...)
		}
	}
	return c
}

func (d *Dispatcher) sortedIDs() []uint64 {
	ids := make([]uint64, 0, len(d.extra))
	for id := range d.extra {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// planned is one hook chosen to run.
type planned struct {
	group   *Group
	handler Handler
}

// plan returns the hooks that match in, settings first, then additions in
// the order they were made; identical commands run once.
func (d *Dispatcher) plan(in *Input) []planned {
	ev := in.HookEventName
	value := ev.matchValue(in)
	var out []planned
	add := func(c *Config) {
		for i := range c.groups {
			g := &c.groups[i]
			if g.Event != ev || (ev.matchField() != "" && !g.match.matches(value)) {
				continue
			}
			for _, h := range g.Handlers {
				if h.Command != "" && slices.ContainsFunc(out, func(p planned) bool { return p.handler.Command == h.Command }) {
					continue
				}
				out = append(out, planned{group: g, handler: h})
			}
		}
	}
	add(d.base)
	d.mu.RLock()
	if len(d.extra) > 0 {
		for _, id := range d.sortedIDs() {
			r := d.extra[id]
			if r.global || r.agentID == in.AgentID {
				add(r.cfg)
			}
		}
	}
	d.mu.RUnlock()
	return out
}

// Fire runs the hooks that match in — all of them at once, each bounded by
// its timeout — and returns what they decided together. It returns when
// every hook has ended; when ctx ends, running hooks are killed. An event
// with no hooks costs no allocation beyond the input.
func (d *Dispatcher) Fire(ctx context.Context, in *Input) Outcome {
	if d == nil || d.count.Load() == 0 {
		return Outcome{}
	}
	hooks := d.plan(in)
	if len(hooks) == 0 {
		return Outcome{}
	}
	// Commands read the input as JSON; callbacks take it as it is.
	var payload []byte
	var err error
	if slices.ContainsFunc(hooks, func(p planned) bool { return p.handler.Command != "" }) {
		// The input is built by cadre; a failure here is a bug, reported
		// on every command's run rather than a panic.
		payload, err = in.MarshalJSON()
	}
	dir := in.Cwd
	if dir == "" {
		dir = d.opts.ProjectDir
	}
	results := make([]result, len(hooks))
	runOne := func(i int) {
		p := hooks[i]
		run := Run{
			ID: "hook-" + strconv.FormatUint(d.runs.Add(1), 10), Event: in.HookEventName, Matcher: p.group.Matcher,
			Command: p.handler.label(), Source: p.group.Source, AgentID: in.AgentID, AgentType: in.AgentType, ToolName: in.ToolName,
			Match: in.HookEventName.matchValue(in),
		}
		if d.opts.Observer != nil {
			d.opts.Observer.HookStarted(run)
		}
		switch {
		case p.handler.Command != "" && err != nil:
			run.Err = fmt.Errorf("build hook input: %w", err)
			results[i] = result{exit: -1}
		case p.handler.Command != "":
			results[i] = d.runCommand(ctx, p.handler, dir, payload, &run)
		default:
			results[i] = d.runCallback(ctx, p.handler, in, &run)
		}
		results[i].run = run
	}
	if len(hooks) == 1 {
		runOne(0)
	} else {
		var wg sync.WaitGroup
		for i := range hooks {
			wg.Go(func() { runOne(i) })
		}
		wg.Wait()
	}
	o := combine(in.HookEventName, results)
	if d.opts.Observer != nil {
		for _, r := range o.Runs {
			d.opts.Observer.HookFinished(r)
		}
	}
	return o
}

// runCallback runs an in-process hook under its timeout.
func (d *Dispatcher) runCallback(ctx context.Context, h Handler, in *Input, run *Run) result {
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = d.opts.DefaultTimeout
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cp := *in
	start := time.Now()
	out, err := h.Callback(tctx, &cp)
	run.Duration = time.Since(start)
	switch {
	case err != nil && ctx.Err() != nil:
		run.Canceled, run.ExitCode = true, -1
		run.Err = fmt.Errorf("canceled: %w", ctx.Err())
		return result{exit: -1}
	case err != nil && tctx.Err() != nil:
		run.TimedOut, run.ExitCode = true, -1
		run.Err = fmt.Errorf("timed out after %s", timeout)
		return result{exit: -1}
	case err != nil:
		run.ExitCode = 1
		run.Err = fmt.Errorf("hook callback: %w", err)
		run.Stderr = err.Error()
		return result{exit: 1}
	}
	run.Stdout = string(out)
	return result{exit: 0, stdout: out}
}
