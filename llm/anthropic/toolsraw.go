package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/cadre-dev/cadre/llm"
)

// The tools array is most of a request's encoding cost: through the SDK's
// reflection-based encoder each tool's schema is re-encoded and compacted
// at every level (~190 KB allocated and ~250 allocations for 20 tools, 75
// % of the whole body's encoding), and it is the same bytes on every
// request of an agent and of its siblings. A Model therefore renders a
// tools array once, with the bytes the SDK would send, keeps the few
// latest, and sends them after the SDK's encoding of everything else as
// the body's "tools" field (body.go). Setting the field through
// option.WithJSONSet instead re-validated and compacted the whole array
// (encoding/json on a RawMessage) and copied the body once more on every
// request: ~7 % of the CLI's CPU while sixteen children send their first
// requests.

// toolsKept is how many distinct tools arrays a Model keeps rendered: a
// session has one per agent kind (main, general-purpose children, a few
// agent types), and a miss only costs one rendering.
const toolsKept = 8

// renderedTools is one tools array and its bytes.
type renderedTools struct {
	specs []llm.ToolSpec // schemas cloned: the caller's bytes may be reused
	mark  int            // the index of the tool with the cache marker, -1 for none
	raw   json.RawMessage
}

// toolsCache keeps the latest rendered tools arrays, newest first.
type toolsCache struct {
	mu   sync.Mutex
	kept []*renderedTools
}

// get returns the bytes of the tools array specs with the cache marker on
// tool mark, rendering it on a miss.
func (c *toolsCache) get(specs []llm.ToolSpec, mark int) (json.RawMessage, error) {
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
	raw, err := renderTools(specs, mark)
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
	if len(c.kept) < toolsKept {
		c.kept = append(c.kept, nil)
	}
	copy(c.kept[1:], c.kept)
	c.kept[0] = r
	return raw, nil
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

// wireTool is a tool as the SDK's ToolParam encodes it, in its field order.
type wireTool struct {
	InputSchema  json.RawMessage `json:"input_schema"`
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	CacheControl *wireCache      `json:"cache_control,omitempty"`
}

type wireCache struct {
	Type string `json:"type"`
}

// renderTools encodes specs as the request's tools array.
func renderTools(specs []llm.ToolSpec, mark int) (json.RawMessage, error) {
	out := make([]wireTool, len(specs))
	for i, t := range specs {
		schema := t.InputSchema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		} else if !json.Valid(schema) {
			return nil, fmt.Errorf("anthropic: tool %s: input schema is not valid JSON", t.Name)
		}
		out[i] = wireTool{InputSchema: schema, Name: t.Name, Description: t.Description}
		if i == mark {
			out[i].CacheControl = &wireCache{Type: "ephemeral"}
		}
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("anthropic: encode the tools: %w", err)
	}
	return raw, nil
}
