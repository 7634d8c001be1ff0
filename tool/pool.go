package tool

import "github.com/cadre-dev/cadre/llm"

// Pool is an ordered set of tools with unique names. The order is the order
// shown to the model, so it must be deterministic.
type Pool struct {
	tools []Tool
	// index maps names to positions once the pool is larger than
	// smallPool; a smaller pool is searched in order, which costs no map
	// per pool (a pool is made for every agent).
	index map[string]int
}

// smallPool is the size up to which a pool has no index.
const smallPool = 32

// NewPool returns a pool of the tools in order; a later tool with a name
// already present replaces the earlier one in place.
func NewPool(tools ...Tool) *Pool {
	p := &Pool{tools: make([]Tool, 0, len(tools))}
	for _, t := range tools {
		p.Add(t)
	}
	return p
}

// Add appends t, or replaces the tool of the same name in place.
func (p *Pool) Add(t Tool) {
	name := t.Spec().Name
	if i, ok := p.find(name); ok {
		p.tools[i] = t
		return
	}
	if p.index != nil {
		p.index[name] = len(p.tools)
	}
	p.tools = append(p.tools, t)
	if p.index == nil && len(p.tools) > smallPool {
		p.index = make(map[string]int, 2*len(p.tools))
		for i, t := range p.tools {
			p.index[t.Spec().Name] = i
		}
	}
}

// find returns the position of the tool called name.
func (p *Pool) find(name string) (int, bool) {
	if p.index != nil {
		i, ok := p.index[name]
		return i, ok
	}
	for i, t := range p.tools {
		if t.Spec().Name == name {
			return i, true
		}
	}
	return 0, false
}

// Get returns the tool called name.
func (p *Pool) Get(name string) (Tool, bool) {
	if p == nil {
		return nil, false
	}
	i, ok := p.find(name)
	if !ok {
		return nil, false
	}
	return p.tools[i], true
}

// Tools returns the tools in order. The slice must not be modified.
func (p *Pool) Tools() []Tool {
	if p == nil {
		return nil
	}
	return p.tools
}

// Names returns the tool names in order.
func (p *Pool) Names() []string {
	if p == nil {
		return nil
	}
	out := make([]string, len(p.tools))
	for i, t := range p.tools {
		out[i] = t.Spec().Name
	}
	return out
}

// Filter returns a new pool with the tools for which keep returns true, in
// the same order.
func (p *Pool) Filter(keep func(Tool) bool) *Pool {
	q := &Pool{tools: make([]Tool, 0, p.Len())}
	for _, t := range p.Tools() {
		if keep(t) {
			q.Add(t)
		}
	}
	return q
}

// Specs returns the model-facing specs in order.
func (p *Pool) Specs() []llm.ToolSpec {
	out := make([]llm.ToolSpec, 0, len(p.Tools()))
	for _, t := range p.Tools() {
		out = append(out, t.Spec())
	}
	return out
}

// Len is the number of tools.
func (p *Pool) Len() int { return len(p.Tools()) }
