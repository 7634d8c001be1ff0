package anthropic

import (
	"fmt"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/cadre-dev/cadre/llm/internal/retry"
)

// A streamed call's body used to be copied whole twice after the SDK's
// encoding of the parameters: once to append the kept tools array, once
// more by the SDK's NewStreaming, whose option.WithJSONSet("stream",
// true) re-parses and re-writes it (~80 KB and ~25 allocations per call
// of a 20-tool request). It is now sent in parts (retry.StreamBody): the
// SDK's encoding of the parameters, the kept tools array, the stream
// flag; the SDK itself is given the parameters without their
// conversation, system prompt and tools.

// newStreamBody returns the body of params with the tools array raw (nil
// for none) and "stream":true.
func newStreamBody(params sdk.MessageNewParams, raw []byte) (*retry.StreamBody, error) {
	enc, err := params.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encode the request: %w", err)
	}
	return retry.NewStreamBody(enc, raw)
}
