package engine

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/mcpx"
	"github.com/cadre-dev/cadre/internal/spawn"
	"github.com/cadre-dev/cadre/mcp"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/tool"
	"github.com/cadre-dev/cadre/transcript"
)

// MCP servers (issue 14). The configured servers are shared by the whole
// session: they connect in the background when the first Run starts (or
// at StartMCP), so no model request waits for them, and their tools reach
// each agent at its next turn. An agent definition's mcpServers entries
// are held for that agent (inline ones start with it and stop when it
// ends, on every path).

// mcpRuntime is the session's MCP state: the manager of every server and
// whether the shared ones were started.
type mcpRuntime struct {
	m     *mcpx.Manager
	start sync.Once
}

// initMCP makes the session's MCP manager (nothing connects yet) and
// registers its stop with Close.
func (sg sessionGlue) initMCP() error {
	r := sg.r
	opts := r.cfg.MCPOptions
	if opts.Dir == "" {
		opts.Dir = r.cfg.Cwd
	}
	if opts.LogDir == "" && !r.cfg.NoTranscript {
		// Each server's stderr and the log and progress notifications it
		// sends: <server>.log beside the session's transcripts.
		opts.LogDir = mcpLogDir(r.cfg.StateDir, r.cfg.Cwd, r.session)
	}
	m, err := mcpx.New(r.cfg.MCPServers, opts)
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	r.mcp = &mcpRuntime{m: m}
	sg.onClose(m.Close)
	return nil
}

// mcpLogDir is where a session keeps its MCP servers' logs when
// MCPOptions.LogDir is not set: <server>.log in the session's directory
// of stateDir, beside its sub-agents' transcripts.
func mcpLogDir(stateDir, cwd, sessionID string) string {
	return filepath.Join(filepath.Dir(transcript.AgentPath(stateDir, cwd, sessionID, "x")), "mcp-logs")
}

// StartMCP begins connecting the configured MCP servers in the
// background and returns at once; Run calls it. Calling it again does
// nothing.
func (r *Runtime) StartMCP() {
	r.mcp.start.Do(r.mcp.m.Start)
}

// MCPStatus reports the configured MCP servers, sorted by name: source,
// transport, state and tools. Before StartMCP every server is idle.
func (r *Runtime) MCPStatus() []mcp.ServerStatus { return r.mcp.m.Status() }

// WaitMCP starts the configured servers if needed and waits until none is
// still connecting, or ctx ends.
func (r *Runtime) WaitMCP(ctx context.Context) error {
	r.StartMCP()
	if err := r.mcp.m.Wait(ctx); err != nil {
		return fmt.Errorf("wait for MCP servers: %w", err)
	}
	return nil
}

// mcpInit is the init event's mcp_servers list.
func (sg sessionGlue) mcpInit() []mcp.InitServer {
	r := sg.r
	return mcpx.InitServers(r.MCPStatus())
}

// mainMCP is the main agent's source of MCP tools: the shared servers'
// tools, less those a deny rule forbids outright.
type mainMCP struct {
	r *Runtime
}

func (s mainMCP) rules() []permission.Rule { return glueOf(s.r).rootPerms().Rules }

// Tools implements loop.ToolSource.
func (s mainMCP) Tools(ctx context.Context) []tool.Tool {
	rules := s.rules()
	all := s.r.mcp.m.Tools(ctx)
	bad := misnamedServers(rules, all)
	var out []tool.Tool
	for _, t := range all {
		if _, denied := spawn.WholeToolDenied(rules, t.Spec().Name); !denied && bad[mcpServerOf(t)] == "" {
			out = append(out, t)
		}
	}
	return out
}

// Resolve implements loop.ToolSource: a tool of a server still
// connecting is awaited; one a deny rule forbids is withheld.
func (s mainMCP) Resolve(ctx context.Context, name string) (tool.Tool, string) {
	if !isMCPToolName(name) {
		return nil, ""
	}
	if rule, denied := spawn.WholeToolDenied(s.rules(), name); denied {
		return nil, prompts.MCPToolWithheld(name, "denied by rule "+rule.Label())
	}
	if t := s.r.mcp.m.AwaitTool(ctx, name); t != nil {
		if why := misnamedServers(s.rules(), s.r.mcp.m.Tools(ctx))[mcpServerOf(t)]; why != "" {
			return nil, prompts.MCPToolWithheld(name, why)
		}
		return t, ""
	}
	return nil, ""
}

// mcpServerOf returns the (normalised) server of an MCP server tool, or
// "" for any other tool.
func mcpServerOf(t tool.Tool) string {
	if st, ok := t.(mcpx.Tool); ok {
		return st.Server()
	}
	return ""
}

// ruleServer returns the server among servers that an mcp__ rule names
// (the longest that fits, since a server name may hold "__") and the
// rest of the rule's name after it ("" for a server-level rule).
func ruleServer(name string, servers map[string][]string) (server, rest string, ok bool) {
	for s := range servers {
		p := tool.MCPPrefix + s
		switch {
		case name == p && len(s) > len(server):
			server, rest, ok = s, "", true
		case strings.HasPrefix(name, p+"__") && len(s) > len(server):
			server, rest, ok = s, strings.TrimPrefix(name, p+"__"), true
		}
	}
	return server, rest, ok
}

// misnamedServers checks the deny and ask rules against the tools the
// connected servers really have (issue 9, Build 4: mcp__ names are
// checked once the servers are known). A rule that names a tool its
// server does not have (`mcp__github__delete_repos` where the tool is
// delete_repo) protects nothing while the real tool runs, so that
// server's tools are withheld, failing closed; the result maps each such
// server to why. Rules naming servers not among tools are left alone
// (config reports those when it loads).
func misnamedServers(rules []permission.Rule, tools []tool.Tool) map[string]string {
	if !slices.ContainsFunc(rules, func(r permission.Rule) bool { return r.Behavior != permission.Allow && tool.IsMCP(r.Tool) }) {
		return nil // the usual case, on every request: no mcp__ deny or ask rule to check
	}
	servers := map[string][]string{}
	for _, t := range tools {
		if server := mcpServerOf(t); server != "" {
			servers[server] = append(servers[server], strings.TrimPrefix(t.Spec().Name, tool.MCPPrefix+server+"__"))
		}
	}
	var bad map[string]string
	for _, r := range rules {
		if r.Behavior == permission.Allow || !tool.IsMCP(r.Tool) {
			continue
		}
		server, rest, ok := ruleServer(r.Tool, servers)
		if !ok || rest == "" || rest == "*" || slices.Contains(servers[server], rest) {
			continue
		}
		if bad == nil {
			bad = map[string]string{}
		}
		if bad[server] != "" {
			continue
		}
		why := fmt.Sprintf("%s rule %s: MCP server %q has no tool %q", r.Behavior, r.Label(), server, rest)
		if !strings.Contains(server, "__") { // the checker's own message, with its did-you-mean
			if errs := permission.CheckMCPRuleNames([]permission.Rule{r}, map[string][]string{server: servers[server]}); len(errs) > 0 {
				why = errs[0].Error()
			}
		}
		bad[server] = why + "; the server's tools are withheld until the rule names a tool it has"
	}
	return bad
}

// isMCPToolName reports names the MCP layer offers: server tools and the
// two resource tools.
func isMCPToolName(name string) bool {
	return tool.IsMCP(name) || name == tool.ListMcpResources || name == tool.ReadMcpResource
}

// childMCP is a sub-agent's source of MCP tools: the tools of the servers
// its definition holds (its lease), then its parent's MCP tools that its
// ceiling lets through (spawn.MCPGrant).
type childMCP struct {
	parent loop.ToolSource
	lease  *mcpx.Lease
	c      *agent
}

// grant decides one tool for the child.
func (s *childMCP) grant(t tool.Tool, own bool) (bool, string) {
	return spawn.MCPGrant(s.c.def, s.c.perms.Rules, t.Spec().Name, own)
}

// Tools implements loop.ToolSource.
func (s *childMCP) Tools(ctx context.Context) []tool.Tool {
	var out []tool.Tool
	seen := map[string]bool{}
	add := func(t tool.Tool, own bool) {
		n := t.Spec().Name
		if seen[n] {
			return
		}
		if ok, _ := s.grant(t, own); ok {
			seen[n] = true
			out = append(out, t)
		}
	}
	if s.lease != nil {
		for _, t := range s.lease.Tools(ctx) {
			_, server := t.(mcpx.Tool)
			add(t, server)
		}
	}
	if s.parent != nil {
		for _, t := range s.parent.Tools(ctx) {
			add(t, false)
		}
	}
	bad := misnamedServers(s.c.perms.Rules, s.serverTools(ctx))
	return slices.DeleteFunc(out, func(t tool.Tool) bool { return bad[mcpServerOf(t)] != "" })
}

// serverTools are every tool of the servers the child can reach (its
// lease's and the session's), before any rule or ceiling filters them:
// what misnamedServers checks rule names against.
func (s *childMCP) serverTools(ctx context.Context) []tool.Tool {
	var all []tool.Tool
	if s.lease != nil {
		all = s.lease.Tools(ctx)
	}
	return append(all, s.c.run.rt.mcp.m.Tools(ctx)...)
}

// Resolve implements loop.ToolSource: the lease's servers first, then
// the parent's, each through the child's ceiling.
func (s *childMCP) Resolve(ctx context.Context, name string) (tool.Tool, string) {
	t, why := s.resolve(ctx, name)
	if t != nil {
		if bad := misnamedServers(s.c.perms.Rules, s.serverTools(ctx))[mcpServerOf(t)]; bad != "" {
			return nil, prompts.MCPToolWithheld(name, bad)
		}
	}
	return t, why
}

func (s *childMCP) resolve(ctx context.Context, name string) (tool.Tool, string) {
	if !isMCPToolName(name) {
		return nil, ""
	}
	if s.lease != nil {
		if t := s.lease.AwaitTool(ctx, name); t != nil {
			if ok, why := s.grant(t, true); !ok {
				return nil, prompts.MCPToolWithheld(name, why)
			}
			return t, ""
		}
	}
	if ok, why := spawn.MCPGrant(s.c.def, s.c.perms.Rules, name, false); !ok {
		return nil, prompts.MCPToolWithheld(name, why)
	}
	if s.parent != nil {
		return s.parent.Resolve(ctx, name)
	}
	return nil, ""
}

// acquire holds the servers the child's definition asks for (named and
// inline mcpServers, requiredMcpServers) and gives the child its MCP
// tools; the spawn receipt lists the servers, the MCP tools granted now and
// those dropped with why. A required server that fails refuses the spawn,
// naming it. The lease is released by mcpGlue.release at the child's own end.
func (mg mcpGlue) acquire(ctx context.Context, parent *agent) (*refusal, error) {
	c := mg.a
	rt := c.run.rt
	def := c.def
	src := &childMCP{parent: parent.mcp, c: c}
	if len(def.MCPServers) > 0 || len(def.RequiredMCPServers) > 0 {
		if def.Source == agentdef.SourcePlugin && len(def.MCPServers) > 0 {
			// Plugin agents may not start servers of their own (S-4.4).
			c.warn("mcpServers of a plugin agent are ignored")
		} else {
			req, diags := mcpx.ParseAgentServers(def.Path, def.MCPServers, def.RequiredMCPServers, nil)
			for _, d := range diags {
				c.warn(d.Message)
			}
			began := rt.cfg.Now()
			lease, err := rt.mcp.m.Acquire(ctx, req)
			c.spawnReceipt.MCPStart = rt.cfg.Now().Sub(began)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return &refusal{run.RefusedMCP, prompts.MCPRequired(def.Name, err.Error())}, nil
			}
			c.mcpLease = lease
			src.lease = lease
			for _, w := range lease.Warnings {
				c.warn(w)
			}
			for _, st := range lease.Status() {
				c.spawnReceipt.MCPServers = append(c.spawnReceipt.MCPServers, st.Name)
			}
		}
	}
	c.mcp = src
	configured := append(rt.mcp.m.Names(), c.spawnReceipt.MCPServers...)
	for _, missing := range mcpx.MissingServers(mcpSelectors(def), configured) {
		c.warn(fmt.Sprintf("tools name MCP server %q, which is not configured; its tools are not available", missing))
	}
	// The receipt: what the child gets now (servers still connecting add
	// their tools at a later turn) and what it does not.
	// Servers by their model-facing (normalised) names, for the servers
	// whose tools the child gets through its parent.
	byTool := map[string]string{}
	for _, n := range configured {
		byTool[mcpx.Normalize(n)] = n
	}
	for _, t := range src.Tools(ctx) {
		c.spawnReceipt.Tools = append(c.spawnReceipt.Tools, t.Spec().Name)
		if st, ok := t.(mcpx.Tool); ok {
			n := cmp.Or(byTool[st.Server()], st.Server())
			if !slices.Contains(c.spawnReceipt.MCPServers, n) {
				c.spawnReceipt.MCPServers = append(c.spawnReceipt.MCPServers, n)
			}
		}
	}
	if parent.mcp != nil {
		for _, t := range parent.mcp.Tools(ctx) {
			if ok, why := src.grant(t, false); !ok && !slices.Contains(c.spawnReceipt.Tools, t.Spec().Name) {
				c.spawnReceipt.Dropped = append(c.spawnReceipt.Dropped, run.DroppedTool{Name: t.Spec().Name, Reason: why})
			}
		}
	}
	return nil, nil
}

// onlyReady decides a child with no built-in tools whose definition
// names MCP tools (issue 29): it waits for the servers it can reach to be
// connected, then refuses it only if none of its MCP tools is there.
func (mg mcpGlue) onlyReady(ctx context.Context) (*refusal, error) {
	c := mg.a
	if len(c.pool.Tools()) > 0 || !spawn.NamesMCP(c.def) {
		return nil, nil
	}
	if err := c.run.rt.mcp.m.Wait(ctx); err != nil {
		return nil, fmt.Errorf("wait for MCP servers: %w", err)
	}
	if c.mcpLease != nil {
		if err := c.mcpLease.Wait(ctx); err != nil {
			return nil, fmt.Errorf("wait for MCP servers: %w", err)
		}
	}
	if c.mcp != nil && len(c.mcp.Tools(ctx)) > 0 {
		return nil, nil
	}
	return &refusal{run.RefusedNoTools, prompts.NoTools(c.def.Name, []string{prompts.DroppedNoMCPServer})}, nil
}

// release ends the child's hold on its MCP servers: its inline servers
// stop (their processes are gone when it returns). It is the child's end
// of its MCP lifecycle, safe to call more than once: the foreground path
// calls it when the child's run ends, on every exit path; a child that
// runs in the background must call it when it finishes, not when its Agent
// call returns.
func (mg mcpGlue) release() {
	c := mg.a
	if c.mcpLease != nil {
		c.mcpLease.Release()
	}
}

// mcpSelectors are the MCP entries of the definition's tools list.
func mcpSelectors(def *agentdef.Definition) []string {
	var out []string
	for _, e := range def.Tools {
		if e.IsMCP() {
			out = append(out, e.Name)
		}
	}
	return out
}
