package loop

import (
	"bytes"
	"context"
	"slices"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// ToolSource offers tools whose set changes during a run (an MCP server
// that finishes connecting, or whose tool list changes). The loop asks it
// before every model request; the request's tool list is rebuilt only when
// the set of names changed, so an unchanged set keeps the request prefix
// byte for byte.
type ToolSource interface {
	// Tools are the tools to offer now, after Config.Tools (a tool whose
	// name Config.Tools already has is ignored).
	Tools(ctx context.Context) []tool.Tool
	// Withheld says why a tool the model called is not offered (a rule
	// denies it), or ok false when the name means nothing to the source.
	Withheld(name string) (msg string, ok bool)
}

// toolSet is the pool and specs of one turn.
type toolSet struct {
	pool  *tool.Pool
	specs []llm.ToolSpec
	dyn   []llm.ToolSpec // the dynamic tools' specs, in order
}

// turnTools returns the tools of the next request: Config.Tools, then the
// ToolSource's tools. The previous turn's set is reused when the dynamic
// names did not change.
func (r *runner) turnTools(ctx context.Context) *toolSet {
	if r.cfg.Dynamic == nil {
		if r.tools == nil {
			r.tools = &toolSet{pool: r.cfg.Tools, specs: r.cfg.Tools.Specs()}
		}
		return r.tools
	}
	dyn := r.cfg.Dynamic.Tools(ctx)
	// A new pool every turn: a reconnected server's tools are new values.
	pool := tool.NewPool(r.cfg.Tools.Tools()...)
	specs := make([]llm.ToolSpec, 0, len(dyn))
	for _, t := range dyn {
		if _, static := r.cfg.Tools.Get(t.Spec().Name); !static {
			pool.Add(t)
			specs = append(specs, t.Spec())
		}
	}
	if r.tools != nil && slices.EqualFunc(r.tools.dyn, specs, sameSpec) {
		// The same tools: the same specs, so the request prefix is unchanged.
		r.tools = &toolSet{pool: pool, specs: r.tools.specs, dyn: specs}
		return r.tools
	}
	r.tools = &toolSet{pool: pool, specs: pool.Specs(), dyn: specs}
	return r.tools
}

// pool is the current turn's tools.
func (r *runner) pool() *tool.Pool {
	if r.tools == nil {
		return r.cfg.Tools
	}
	return r.tools.pool
}

// withheld is the message for a call of a tool the ToolSource withholds.
func (r *runner) withheld(name string) (string, bool) {
	if msg, ok := r.cfg.Unavailable[name]; ok {
		return msg, true
	}
	if r.cfg.Dynamic != nil {
		return r.cfg.Dynamic.Withheld(name)
	}
	return "", false
}

func sameSpec(a, b llm.ToolSpec) bool {
	return a.Name == b.Name && a.Description == b.Description && bytes.Equal(a.InputSchema, b.InputSchema)
}
