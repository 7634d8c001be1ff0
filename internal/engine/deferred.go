package engine

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/invopop/jsonschema"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/tool"
)

// Deferred tools (issue 24, point 3). Every request carries the
// definitions of the tools it offers, and most of them are rarely called.
// An agent whose pool holds ToolSearch is told the rarely used ones by name
// only (a line of its system prompt); their definitions join its requests,
// after the others, once ToolSearch loaded them or the model called one by
// name. The pool itself is unchanged: the capability ceiling, permission
// checks and the tools a child may inherit still see every tool.
//
// The order of the tools an agent is offered stays the pool's order, and
// the deferred tools are the same names for every agent, so a child that
// has its parent's tools is offered the same bytes as its parent (the
// cache rule of toolorder.go).

// deferredTools are the tools deferred when the agent has ToolSearch, in
// the order they are listed.
var deferredTools = []string{
	tool.BashOutput, tool.KillShell, tool.LS, tool.MultiEdit, tool.NotebookEdit,
	tool.TodoWrite, tool.WebFetch, tool.WebSearch, tool.Skill, tool.MergeWorktree,
	tool.TaskStop, tool.TaskOutput, tool.SendMessage,
}

func isDeferred(name string) bool { return slices.Contains(deferredTools, name) }

// deferredState is what an agent loaded of its deferred tools, and the
// source of the tools that change turn by turn in its requests: the loaded
// deferred tools (in pool order, so the same set always gives the same
// bytes), then inner's (its MCP tools). It lives in the agent (no
// allocation per agent); offered sets it up for each run.
type deferredState struct {
	mu     sync.Mutex
	a      *agent
	inner  loop.ToolSource
	loaded map[string]bool
}

func (d *deferredState) load(names ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.loaded == nil {
		d.loaded = map[string]bool{}
	}
	for _, n := range names {
		d.loaded[n] = true
	}
}

// state returns inner and whether any tool is loaded.
func (d *deferredState) state() (loop.ToolSource, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.inner, len(d.loaded) > 0
}

func (d *deferredState) isLoaded(name string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.loaded[name]
}

// Tools implements loop.ToolSource.
func (d *deferredState) Tools(ctx context.Context) []tool.Tool {
	inner, loaded := d.state()
	var out []tool.Tool
	if loaded {
		for _, t := range d.a.pool.Tools() {
			if n := t.Spec().Name; isDeferred(n) && d.isLoaded(n) {
				out = append(out, t)
			}
		}
	}
	if inner != nil {
		out = append(out, inner.Tools(ctx)...)
	}
	return out
}

// Resolve implements loop.ToolSource: a deferred tool called by name
// before it was loaded runs, and is offered from then on.
func (d *deferredState) Resolve(ctx context.Context, name string) (tool.Tool, string) {
	if isDeferred(name) {
		if t, ok := d.a.pool.Get(name); ok {
			d.load(name)
			return t, ""
		}
	}
	inner, _ := d.state()
	if inner == nil {
		return nil, ""
	}
	return inner.Resolve(ctx, name)
}

// defers reports whether a's requests defer tools: its pool has ToolSearch
// and it is not the coordinator (whose few tools are all it has), nor a
// remote agent (a worker offers the tools it has, and has no ToolSearch).
func (su toolSetup) defers() bool {
	a := su.a
	if a.id == "" && a.run.rt.cfg.Coordinator || a.isolation == agentdef.IsolationRemote {
		return false
	}
	_, ok := a.pool.Get(tool.ToolSearch)
	return ok
}

// deferredNames are the names of a's deferred tools, in list order, the
// main agent's own ones (mainOnlyTools) apart.
func (su toolSetup) deferredNames() (shared, own []string) {
	if !su.defers() {
		return nil, nil
	}
	return deferredSplit(su.a.pool, false)
}

// deferredSplit is deferredNames for an agent with pool (the coordinator,
// which defers nothing, when coordinator).
func deferredSplit(pool *tool.Pool, coordinator bool) (shared, own []string) {
	if _, ok := pool.Get(tool.ToolSearch); !ok || coordinator {
		return nil, nil
	}
	for _, n := range deferredTools {
		if _, ok := pool.Get(n); !ok {
			continue
		}
		if isMainOnly(n) {
			own = append(own, n)
		} else {
			shared = append(shared, n)
		}
	}
	return shared, own
}

// offered returns the static tools a's requests carry (its pool less the
// deferred tools) and the source of the tools that change turn by turn:
// the loaded deferred tools, then its MCP tools (dynamicTools).
func (su toolSetup) offered() (*tool.Pool, loop.ToolSource) {
	a := su.a
	inner := su.dynamicTools()
	if !su.defers() {
		return a.pool, inner
	}
	a.deferred.mu.Lock()
	a.deferred.a, a.deferred.inner = a, inner
	a.deferred.mu.Unlock()
	pool := a.pool.Filter(func(t tool.Tool) bool { return !isDeferred(t.Spec().Name) })
	return pool, &a.deferred
}

// deferredBlock is the system prompt block naming the deferred tools of an
// agent with pool that its sub-agents may share (not the main agent's own
// ones), rendered once per distinct set.
func (sp systemPrompts) deferredBlock(pool *tool.Pool) string {
	var mask uint32
	for i, n := range deferredTools {
		if _, ok := pool.Get(n); ok && !isMainOnly(n) {
			mask |= 1 << i
		}
	}
	if mask == 0 {
		return ""
	}
	r := sp.r
	r.sysMu.Lock()
	defer r.sysMu.Unlock()
	if s, ok := r.deferredBlocks[mask]; ok {
		return s
	}
	var names []string
	for i, n := range deferredTools {
		if mask&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	s := prompts.DeferredTools(names, false)
	if r.deferredBlocks == nil {
		r.deferredBlocks = map[uint32]string{}
	}
	r.deferredBlocks[mask] = s
	return s
}

type toolSearchInput struct {
	Query      string `json:"query"`
	MaxResults int    `json:"max_results,omitempty"`
}

// JSONSchemaExtend puts the descriptions from package prompts on the
// reflected schema.
func (toolSearchInput) JSONSchemaExtend(s *jsonschema.Schema) {
	if p, ok := s.Properties.Get("query"); ok {
		p.Description = prompts.ToolSearchQueryField
	}
	if p, ok := s.Properties.Get("max_results"); ok {
		p.Description = prompts.ToolSearchMaxField
	}
}

// toolSearchTool loads deferred tools for the agent that calls it.
func toolSearchTool() tool.Tool {
	return tool.Func(tool.FuncConfig{Name: tool.ToolSearch, Description: prompts.ToolSearchTool, ReadOnly: true},
		func(_ context.Context, env *tool.Env, in toolSearchInput) (tool.Output, error) {
			a := agentFrom(env)
			if a == nil {
				return errorOutput(prompts.AgentOutsideSession()), nil
			}
			return toolSearch(a, in), nil
		})
}

// toolSearch loads the deferred tools of a that in names or matches.
func toolSearch(a *agent, in toolSearchInput) tool.Output {
	shared, own := setupOf(a).deferredNames()
	names := append(shared, own...)
	q := strings.TrimSpace(in.Query)
	hit, ok := selectTools(names, q)
	if !ok {
		hit = matchTools(a.pool, names, q, orDefault(in.MaxResults, 5))
	}
	if len(hit) == 0 {
		return tool.Output{Text: prompts.ToolSearchNone(q, names), IsError: true}
	}
	a.deferred.load(hit...)
	return tool.Output{Text: prompts.ToolSearchLoaded(hit)}
}

// selectTools parses a "select:A,B" query: the names among names it
// lists (any case, each once, in query order), and whether q is one.
func selectTools(names []string, q string) ([]string, bool) {
	sel, ok := strings.CutPrefix(q, "select:")
	if !ok {
		return nil, false
	}
	var hit []string
	for n := range strings.SplitSeq(sel, ",") {
		n = strings.TrimSpace(n)
		if i := slices.IndexFunc(names, func(m string) bool { return strings.EqualFold(m, n) }); i >= 0 && !slices.Contains(hit, names[i]) {
			hit = append(hit, names[i])
		}
	}
	return hit, true
}

// matchTools ranks names by how many words of q their name and
// description hold (a word in the name counts double) and returns the best
// limit, in list order among equals.
func matchTools(p *tool.Pool, names []string, q string, limit int) []string {
	words := strings.Fields(strings.ToLower(q))
	type scored struct {
		name  string
		score int
	}
	var out []scored
	for _, n := range names {
		t, ok := p.Get(n)
		if !ok {
			continue
		}
		name, desc := strings.ToLower(n), strings.ToLower(t.Spec().Description)
		s := 0
		for _, w := range words {
			if strings.Contains(name, w) {
				s += 2
			} else if strings.Contains(desc, w) {
				s++
			}
		}
		if s > 0 {
			out = append(out, scored{n, s})
		}
	}
	slices.SortStableFunc(out, func(x, y scored) int { return y.score - x.score })
	var hit []string
	for i := 0; i < len(out) && i < limit; i++ {
		hit = append(hit, out[i].name)
	}
	return hit
}

func orDefault(n, def int) int {
	if n > 0 {
		return n
	}
	return def
}
