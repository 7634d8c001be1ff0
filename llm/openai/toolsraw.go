package openai

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/cadre-dev/cadre/llm"
)

// A request's tools array goes out rendered once per tool list and kept
// (retry.ToolsCache), not through the SDK's encoder on every request:
// renderTools writes the bytes the SDK writes for the tools buildParams
// gives it, and "tools" is the last field of the SDK's encoding of the
// parameters this package sets (TestKeptToolsMatchTheSDK).

// toolOpen and toolClose wrap a function definition as the SDK encodes a
// ChatCompletionFunctionToolParam.
var (
	toolOpen  = []byte(`{"function":`)
	toolClose = []byte(`,"type":"function"}`)
)

// renderTools encodes specs as the request's tools array; Chat
// Completions has no cache marker, mark is ignored.
func renderTools(specs []llm.ToolSpec, _ int) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, t := range specs {
		def, err := functionJSON(t)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(toolOpen)
		buf.Write(def)
		buf.Write(toolClose)
	}
	buf.WriteByte(']')
	return buf.Bytes(), nil
}

// functionJSON encodes a tool's function definition; the schema bytes go
// out as given (compacted).
func functionJSON(t llm.ToolSpec) ([]byte, error) {
	schema := t.InputSchema
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object","properties":{}}`)
	} else if !json.Valid(schema) {
		return nil, fmt.Errorf("openai: tool %s: input schema is not valid JSON", t.Name)
	}
	def, err := json.Marshal(functionDef{Name: t.Name, Description: t.Description, Parameters: schema})
	if err != nil {
		return nil, fmt.Errorf("openai: tool %s: %w", t.Name, err)
	}
	return def, nil
}
