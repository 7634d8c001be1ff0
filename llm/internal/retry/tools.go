package retry

import (
	"bytes"
	"sync"

	"github.com/cadre-dev/cadre/llm"
)

// The tools array is most of a request's encoding cost through an SDK's
// reflection-based encoder (each schema re-encoded and compacted at every
// level, ~190 KB and ~250 allocations for 20 tools), and it is the same
// bytes on every request of an agent and of its siblings. A provider
// therefore renders a tools array once, with the bytes its SDK would
// send, keeps the few latest in a ToolsCache and sends them as the
// body's "tools" field (StreamBody).

// ToolsKept is how many distinct tools arrays a ToolsCache keeps: a
// session has one per agent kind (main, general-purpose children, a few
// agent types), and a miss only costs one rendering.
const ToolsKept = 8

// ToolsRenderer encodes a tools array, with the cache marker on tool mark
// (-1 for none; providers without markers ignore it).
type ToolsRenderer func(specs []llm.ToolSpec, mark int) ([]byte, error)

// renderedTools is one tools array and its bytes.
type renderedTools struct {
	specs []llm.ToolSpec // schemas cloned: the caller's bytes may be reused
	mark  int
	raw   []byte
}

// ToolsCache keeps the latest rendered tools arrays, newest first. The
// zero value is ready; it is safe for concurrent use.
type ToolsCache struct {
	mu   sync.Mutex
	kept []*renderedTools
}

// Get returns the bytes of the tools array specs with the marker on tool
// mark, rendering it with render on a miss. The bytes are shared: the
// caller must not change them.
func (c *ToolsCache) Get(specs []llm.ToolSpec, mark int, render ToolsRenderer) ([]byte, error) {
	c.mu.Lock()
	for i, r := range c.kept {
		if r.mark == mark && sameSpecs(r.specs, specs) {
			if i > 0 {
				copy(c.kept[1:i+1], c.kept[:i])
				c.kept[0] = r
			}
			c.mu.Unlock()
			return r.raw, nil
		}
	}
	c.mu.Unlock()
	raw, err := render(specs, mark)
	if err != nil {
		return nil, err
	}
	r := &renderedTools{specs: make([]llm.ToolSpec, len(specs)), mark: mark, raw: raw}
	for i, s := range specs {
		s.InputSchema = bytes.Clone(s.InputSchema)
		r.specs[i] = s
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.kept) < ToolsKept {
		c.kept = append(c.kept, nil)
	}
	copy(c.kept[1:], c.kept)
	c.kept[0] = r
	return raw, nil
}

// Len returns how many tools arrays are kept.
func (c *ToolsCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.kept)
}

// sameSpecs reports whether a and b are the same tools, byte for byte.
func sameSpecs(a, b []llm.ToolSpec) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Description != b[i].Description || !bytes.Equal(a[i].InputSchema, b[i].InputSchema) {
			return false
		}
	}
	return true
}
