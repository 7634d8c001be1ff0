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
	// Resolve is asked about a tool the model called that this turn did
	// not offer: it returns the tool to run (its server finished
	// connecting since, for example), or why it is withheld (a rule denies
	// it), or neither when the name means nothing to the source.
	Resolve(ctx context.Context, name string) (t tool.Tool, withheld string)
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
	var added []tool.Tool
	var specs []llm.ToolSpec
	for _, t := range dyn {
		if _, static := r.cfg.Tools.Get(t.Spec().Name); !static {
			added = append(added, t)
			specs = append(specs, t.Spec())
		}
	}
	if len(added) == 0 {
		// No dynamic tools (the common case: no MCP server): the static
		// pool serves as it is, and the previous turn's set when it had
		// none either.
		if r.tools == nil || len(r.tools.dyn) > 0 {
			r.tools = &toolSet{pool: r.cfg.Tools, specs: r.cfg.Tools.Specs()}
		}
		return r.tools
	}
	// A new pool every turn: a reconnected server's tools are new values.
	pool := tool.NewPool(append(slices.Clip(r.cfg.Tools.Tools()), added...)...)
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

// resolve finds a tool the turn did not offer: the ToolSource's (see
// ToolSource.Resolve), or the message of a withheld tool.
func (r *runner) resolve(ctx context.Context, name string) (tool.Tool, string, bool) {
	if msg, ok := r.cfg.Unavailable[name]; ok {
		return nil, msg, true
	}
	if r.cfg.Dynamic == nil {
		return nil, "", false
	}
	t, msg := r.cfg.Dynamic.Resolve(ctx, name)
	return t, msg, t != nil || msg != ""
}

func sameSpec(a, b llm.ToolSpec) bool {
	return a.Name == b.Name && a.Description == b.Description && bytes.Equal(a.InputSchema, b.InputSchema)
}

// resultBlock is the tool_result of one call: its text, then its other
// blocks (images). A result of blocks alone has no placeholder text.
func resultBlock(id string, o tool.Output) llm.Block {
	if len(o.Blocks) == 0 {
		return llm.ToolResultBlock(id, resultText(o), o.IsError)
	}
	b := llm.Block{Type: llm.BlockToolResult, ToolUseID: id, IsError: o.IsError}
	if o.Text != "" {
		b.Content = append(b.Content, llm.TextBlock(o.Text))
	}
	b.Content = append(b.Content, o.Blocks...)
	return b
}
