package anthropic

import (
	"bytes"
	"encoding/json"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/cadre-dev/cadre/llm"
)

// FuzzAccumulate feeds arbitrary event lines (one JSON event per line, as the
// SDK decodes them from SSE data) to the accumulator: it must never panic,
// and every assembled tool_use must carry valid JSON object input.
func FuzzAccumulate(f *testing.F) {
	f.Add([]byte(`{"type":"message_start","message":{"id":"m","model":"x","usage":{"input_tokens":1}}}
{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"n","input":{}}}
{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}
{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"1}"}}
{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":3}}
{"type":"message_stop"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var acc accumulator
		for _, line := range bytes.Split(data, []byte("\n")) {
			var ev sdk.MessageStreamEventUnion
			if json.Unmarshal(line, &ev) != nil {
				continue
			}
			acc.add(ev)
		}
		resp := acc.response()
		for _, b := range resp.Message.Content {
			if b.Type != llm.BlockToolUse {
				continue
			}
			var m map[string]any
			if err := json.Unmarshal(b.Input, &m); err != nil {
				t.Fatalf("tool input %q is not a JSON object: %v", b.Input, err)
			}
		}
	})
}
