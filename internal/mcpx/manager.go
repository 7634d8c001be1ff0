package mcpx

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/tool"
)

// Manager holds a session's MCP servers. Shared servers (the configured
// ones) connect in the background and are reference-counted: Start holds
// one reference on each for the session, and every Lease holds one on
// each server its agent names, so a server that only agents use runs only
// while one of them does. An agent's inline servers belong to its Lease.
// All methods are safe for concurrent use.
type Manager struct {
	opts Options

	life   context.Context // ends at Close; parent of every connection
	cancel context.CancelFunc

	mu      sync.Mutex
	shared  map[string]*shared
	names   []string // shared server names, sorted
	leases  map[*Lease]struct{}
	started bool // Start holds a reference on every shared server
	closed  bool

	chMu    sync.Mutex // guards changed; never held with mu
	changed chan struct{}
}

type shared struct {
	c    *conn
	refs int
}

// New returns a Manager for the configured servers; nothing connects
// until Start or Acquire. Two servers of one name are an error.
func New(servers []ServerConfig, opts Options) (*Manager, error) {
	o := withDefaults(opts)
	m := &Manager{opts: o, shared: map[string]*shared{}, leases: map[*Lease]struct{}{}, changed: make(chan struct{})}
	m.life, m.cancel = context.WithCancel(context.Background())
	for _, s := range servers {
		if err := ValidateName(s.Name); err != nil {
			return nil, fmt.Errorf("mcp server %q: %w", s.Name, err)
		}
		if _, dup := m.shared[s.Name]; dup {
			return nil, fmt.Errorf("mcp server %q is configured twice", s.Name)
		}
		m.shared[s.Name] = &shared{c: newConn(s, &m.opts, m.notify)}
		m.names = append(m.names, s.Name)
	}
	slices.Sort(m.names)
	return m, nil
}

// notify wakes whoever waits on Changed.
func (m *Manager) notify() {
	m.chMu.Lock()
	close(m.changed)
	m.changed = make(chan struct{})
	m.chMu.Unlock()
}

// Changed returns a channel closed at the next change of any server's
// state or tool list.
func (m *Manager) Changed() <-chan struct{} {
	m.chMu.Lock()
	defer m.chMu.Unlock()
	return m.changed
}

// Start begins connecting every shared server in the background and holds
// them for the session; it returns at once, so the first model request
// never waits for a server. Calling it again does nothing.
func (m *Manager) Start() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started || m.closed {
		return
	}
	m.started = true
	for _, n := range m.names {
		s := m.shared[n]
		s.refs++
		s.c.start(m.life)
	}
}

// Wait blocks until no shared server is connecting (or ctx ends).
func (m *Manager) Wait(ctx context.Context) error {
	return awaitConnected(ctx, func() []*conn {
		m.mu.Lock()
		defer m.mu.Unlock()
		conns := make([]*conn, 0, len(m.names))
		for _, n := range m.names {
			conns = append(conns, m.shared[n].c)
		}
		return conns
	})
}

// awaitConnected blocks until none of the connections list returns is
// connecting (or ctx ends); list is asked again after each wait, since
// servers may be added meanwhile.
func awaitConnected(ctx context.Context, list func() []*conn) error {
	for {
		var pending []chan struct{}
		for _, c := range list() {
			c.mu.Lock()
			if c.state == StatePending {
				pending = append(pending, c.ready)
			}
			c.mu.Unlock()
		}
		if len(pending) == 0 {
			return nil
		}
		for _, ch := range pending {
			select {
			case <-ch:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
}

// Close stops every server, shared and inline, and waits for them.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	leases := make([]*Lease, 0, len(m.leases))
	for l := range m.leases {
		leases = append(leases, l)
	}
	conns := make([]*conn, 0, len(m.shared))
	for _, n := range m.names {
		conns = append(conns, m.shared[n].c)
	}
	m.mu.Unlock()
	m.cancel()
	var wg sync.WaitGroup
	for _, l := range leases {
		conns = append(conns, l.inline...)
	}
	for _, c := range conns {
		wg.Go(c.close)
	}
	wg.Wait()
	return nil
}

// Names lists the configured (shared) servers, sorted.
func (m *Manager) Names() []string { return slices.Clone(m.names) }

func (c *conn) status() ServerStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := ServerStatus{Name: c.cfg.Name, Source: c.cfg.Source, Transport: c.cfg.Transport, State: c.state,
		Tools: []string{}, Resources: c.resources}
	if c.err != nil {
		st.Error = c.err.Error()
	}
	for _, t := range c.tools {
		st.Tools = append(st.Tools, t.Spec().Name)
	}
	return st
}

// Status reports every shared server, sorted by name.
func (m *Manager) Status() []ServerStatus {
	out := make([]ServerStatus, 0, len(m.names))
	for _, n := range m.names {
		out = append(out, m.shared[n].c.status())
	}
	return out
}

// Tools is the main agent's MCP tools for one turn: the tools of the
// shared servers connected now (a server still connecting adds its tools
// at a later turn), then ListMcpResources and ReadMcpResource when a
// connected server offers resources. The loop calls it before every
// request, so a tools/list_changed is seen at the next turn.
func (m *Manager) Tools(ctx context.Context) []tool.Tool {
	m.mu.Lock()
	var conns []*conn
	if m.started {
		for _, n := range m.names {
			conns = append(conns, m.shared[n].c)
		}
	}
	m.mu.Unlock()
	return toolsOf(ctx, conns)
}

func toolsOf(ctx context.Context, conns []*conn) []tool.Tool {
	var out []tool.Tool
	seen := map[string]bool{}
	resources := false
	for _, c := range conns {
		for _, t := range c.snapshot(ctx) {
			if n := t.Spec().Name; !seen[n] {
				seen[n] = true
				out = append(out, t)
			}
		}
		c.mu.Lock()
		resources = resources || (c.state == StateConnected && c.resources)
		c.mu.Unlock()
	}
	if resources {
		out = append(out, resourceTools(conns)...)
	}
	return out
}

// AgentServers are the MCP servers an agent asks for (S-4.6, S-5.5).
type AgentServers struct {
	// Names are configured servers the definition names; each is held for
	// the agent (started if no one else holds it).
	Names []string
	// Inline are servers the definition configures itself: started with
	// the agent (Acquire waits for them, up to the connect timeout) and
	// stopped when its Lease is released.
	Inline []ServerConfig
	// Required must be connected with at least one tool before the agent
	// starts (requiredMcpServers); they may be shared or inline.
	Required []string
}

// RequiredError refuses an agent whose required server is not usable.
type RequiredError struct {
	Server string
	Reason string
}

func (e *RequiredError) Error() string {
	return fmt.Sprintf("required MCP server %q %s", e.Server, e.Reason)
}

// Lease is an agent's hold on its servers. Release it when the agent ends,
// on every path (defer it right after Acquire).
type Lease struct {
	m      *Manager
	shared []*conn // referenced shared servers
	inline []*conn
	// Warnings say what was ignored: unknown names, inline servers that
	// failed to start.
	Warnings []string
	once     sync.Once
}

// Acquire starts what an agent needs: it takes a reference on each named
// shared server, starts the inline servers and waits for them, then awaits
// the required servers (S-4.6): one still connecting is checked every
// RequiredPoll for up to RequiredWait; one that failed or has no tools
// refuses the agent with a *RequiredError naming it. On error nothing
// stays held.
func (m *Manager) Acquire(ctx context.Context, req AgentServers) (*Lease, error) {
	l := &Lease{m: m}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, fmt.Errorf("mcp: manager closed")
	}
	inlineNames := map[string]bool{}
	for _, s := range req.Inline {
		inlineNames[s.Name] = true
	}
	for _, n := range dedupe(append(slices.Clone(req.Names), req.Required...)) {
		if inlineNames[n] {
			continue
		}
		s, ok := m.shared[n]
		if !ok {
			if slices.Contains(req.Names, n) {
				l.Warnings = append(l.Warnings, fmt.Sprintf("mcpServers: no MCP server named %q is configured; ignored", n))
			}
			continue
		}
		s.refs++
		s.c.start(m.life)
		l.shared = append(l.shared, s.c)
	}
	for _, cfg := range req.Inline {
		c := newConn(cfg, &m.opts, m.notify)
		c.start(m.life)
		l.inline = append(l.inline, c)
	}
	m.leases[l] = struct{}{}
	m.mu.Unlock()

	for _, c := range l.inline {
		c.mu.Lock()
		ready := c.ready
		c.mu.Unlock()
		select {
		case <-ready:
		case <-ctx.Done():
			l.Release()
			return nil, ctx.Err()
		}
		if st := c.status(); st.State != StateConnected {
			l.Warnings = append(l.Warnings, fmt.Sprintf("mcpServers: inline server %q did not start: %s", c.cfg.Name, st.Error))
		}
	}
	for _, n := range dedupe(req.Required) {
		if err := l.await(ctx, n); err != nil {
			l.Release()
			return nil, err
		}
	}
	return l, nil
}

// await waits for one required server (S-4.6).
func (l *Lease) await(ctx context.Context, name string) error {
	c := l.find(name)
	if c == nil {
		return &RequiredError{Server: name, Reason: "is not configured"}
	}
	deadline := time.NewTimer(l.m.opts.RequiredWait)
	defer deadline.Stop()
	tick := time.NewTicker(l.m.opts.RequiredPoll)
	defer tick.Stop()
	for {
		st := c.status()
		switch st.State {
		case StateConnected:
			if len(st.Tools) == 0 {
				return &RequiredError{Server: name, Reason: "is connected but offers no tools"}
			}
			return nil
		case StateFailed:
			return &RequiredError{Server: name, Reason: "failed to connect: " + st.Error}
		}
		c.mu.Lock()
		ready := c.ready
		c.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return &RequiredError{Server: name, Reason: fmt.Sprintf("is still connecting after %s", l.m.opts.RequiredWait)}
		case <-tick.C:
		case <-ready: // no need to wait for the next poll
		}
	}
}

func (l *Lease) find(name string) *conn {
	for _, c := range l.inline {
		if c.cfg.Name == name {
			return c
		}
	}
	for _, c := range l.shared {
		if c.cfg.Name == name {
			return c
		}
	}
	return nil
}

// conns are the lease's servers: inline first (they shadow a shared
// server of the same name), then shared, each group by name.
func (l *Lease) conns() []*conn {
	in := slices.Clone(l.inline)
	sh := slices.Clone(l.shared)
	byName := func(a, b *conn) int { return strings.Compare(a.cfg.Name, b.cfg.Name) }
	slices.SortFunc(in, byName)
	slices.SortFunc(sh, byName)
	return append(in, sh...)
}

// Tools are the tools of the lease's servers for one turn (see
// Manager.Tools). Its ListMcpResources and ReadMcpResource cover the
// session's shared servers too, so they replace the parent's tools of
// the same names in the agent's pool.
func (l *Lease) Tools(ctx context.Context) []tool.Tool {
	own := toolsOf(ctx, l.conns())
	var out []tool.Tool
	for _, t := range own {
		if _, ok := t.(Tool); ok {
			out = append(out, t)
		}
	}
	l.m.mu.Lock()
	all := l.conns()
	if l.m.started {
		for _, n := range l.m.names {
			if c := l.m.shared[n].c; !slices.Contains(all, c) && l.find(n) == nil {
				all = append(all, c)
			}
		}
	}
	l.m.mu.Unlock()
	for _, c := range all {
		c.mu.Lock()
		has := c.state == StateConnected && c.resources
		c.mu.Unlock()
		if has {
			return append(out, resourceTools(all)...)
		}
	}
	return out
}

// Status reports the lease's servers (for the spawn receipt).
func (l *Lease) Status() []ServerStatus {
	var out []ServerStatus
	for _, c := range l.conns() {
		out = append(out, c.status())
	}
	return out
}

// Release stops the inline servers (their processes are gone when it
// returns) and drops the references on shared servers, stopping those no
// one holds any more. It is safe to call more than once.
func (l *Lease) Release() {
	l.once.Do(func() {
		m := l.m
		var wg sync.WaitGroup
		for _, c := range l.inline {
			wg.Go(c.close)
		}
		m.mu.Lock()
		delete(m.leases, l)
		// A shared server no one holds stops; under mu, so an Acquire
		// cannot take it while it closes.
		for _, c := range l.shared {
			s := m.shared[c.cfg.Name]
			s.refs--
			if s.refs == 0 && !m.closed {
				wg.Go(c.close)
			}
		}
		wg.Wait()
		m.mu.Unlock()
	})
}

func dedupe(s []string) []string {
	var out []string
	for _, v := range s {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// InitServers maps statuses to the init event's entries. The init event is
// written before servers finish connecting, so most are "pending" there,
// as in Claude Code.
func InitServers(st []ServerStatus) []InitServer {
	out := make([]InitServer, 0, len(st))
	for _, s := range st {
		status := s.State
		if status == StateIdle {
			status = StatePending
		}
		out = append(out, InitServer{Name: s.Name, Status: status, Source: claudeSource[s.Source.Scope]})
	}
	return out
}

var claudeSource = map[Scope]string{
	ScopeUser: "user", ScopeProject: "project", ScopeSettings: "project", ScopeLocal: "local",
	ScopeFlag: "dynamic", ScopeManaged: "managed", ScopeAgent: "agent", ScopeSDK: "sdk",
}

// Wait blocks until none of the lease's servers is connecting (or ctx
// ends): for an agent whose only tools are MCP tools, which can start
// only once its servers are connected.
func (l *Lease) Wait(ctx context.Context) error {
	return awaitConnected(ctx, l.conns)
}
