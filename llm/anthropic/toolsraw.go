package anthropic

import (
	"encoding/json"
	"fmt"

	"github.com/cadre-dev/cadre/llm"
)

// The tools array is most of a request's encoding cost: through the SDK's
// reflection-based encoder each tool's schema is re-encoded and compacted
// at every level (~190 KB allocated and ~250 allocations for 20 tools, 75
// % of the whole body's encoding), and it is the same bytes on every
// request of an agent and of its siblings. A Model therefore renders a
// tools array once (renderTools), with the bytes the SDK would send,
// keeps the few latest (retry.ToolsCache), and sends them after the SDK's
// encoding of everything else as the body's "tools" field (body.go). Setting the field through
// option.WithJSONSet instead re-validated and compacted the whole array
// (encoding/json on a RawMessage) and copied the body once more on every
// request: ~7 % of the CLI's CPU while sixteen children send their first
// requests.

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
func renderTools(specs []llm.ToolSpec, mark int) ([]byte, error) {
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
