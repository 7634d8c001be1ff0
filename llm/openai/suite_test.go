package openai

import (
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
)

// TestAdapterSuite runs llmtest's suite for every adapter: the bounds
// that keep a request from hanging (a stalled stream, withheld headers, a
// refused connection, an unknown host, a retry-after past the cap, a
// cancelled back-off) and an oversized tool input, over real HTTP.
func TestAdapterSuite(t *testing.T) {
	llmtest.RunAdapterSuite(t, func(t *testing.T, o llmtest.AdapterOptions) llm.Model {
		m, err := New(Config{BaseURL: o.URL + "/v1", APIKey: "test", HTTPClient: o.HTTPClient, Sleep: o.Sleep,
			HeaderTimeout: o.HeaderTimeout, IdleTimeout: o.IdleTimeout, MaxRetryAfter: o.MaxRetryAfter, RetryBudget: o.RetryBudget})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}, llmtest.OpenAI)
}
