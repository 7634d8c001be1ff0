package openai

import (
	"bytes"
	"encoding/json"
	"testing"

	sdk "github.com/openai/openai-go/v3"

	"github.com/cadre-dev/cadre/llm"
)

// FuzzAccumulate feeds arbitrary chunk lines (one JSON chunk per line, as the
// SDK decodes them from SSE data) to the accumulator and the stream error
// reader: neither may panic, and every assembled tool_use must carry valid
// JSON object input.
func FuzzAccumulate(f *testing.F) {
	f.Add([]byte(`{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"hi"}}]}
{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"n","arguments":"{\"x\":"}}]}}]}
{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]},"finish_reason":"tool_calls"}]}
{"id":"c","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":4}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var acc accumulator
		for _, line := range bytes.Split(data, []byte("\n")) {
			streamedError(line)
			var ch sdk.ChatCompletionChunk
			if json.Unmarshal(line, &ch) != nil {
				continue
			}
			acc.add(ch)
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
		if resp.Usage.InputTokens < 0 {
			t.Fatalf("negative input tokens %d", resp.Usage.InputTokens)
		}
	})
}
