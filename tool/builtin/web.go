package builtin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/llm"
)

// WebConfig configures WebFetch and WebSearch. The zero value works:
// WebFetch then returns pages without applying the prompt, and WebSearch
// answers that no backend is configured.
type WebConfig struct {
	// SmallModel applies WebFetch's prompt to a fetched page (the
	// provider's small model, `haiku` on Anthropic). Nil: WebFetch returns
	// the page itself, saying the prompt was not applied.
	SmallModel SmallModel
	// Search runs WebSearch queries (see AnthropicSearch, SearXNG, Brave).
	// Nil: WebSearch answers that no search backend is configured.
	Search Searcher
	// FetchTimeout bounds one fetch, redirects included (30 seconds).
	FetchTimeout time.Duration
	// FetchMaxBytes caps a response body; a larger page is refused
	// (10 MiB).
	FetchMaxBytes int64
	// FetchMaxChars caps the Markdown handed to the small model or
	// returned (100,000 characters).
	FetchMaxChars int
	// CacheTTL is how long a fetched page is reused (15 minutes), and
	// CacheEntries how many pages are kept (64).
	CacheTTL     time.Duration
	CacheEntries int
	// UserAgent is sent with every fetch ("cadre-webfetch/1").
	UserAgent string
	// Now is the cache's clock (time.Now).
	Now func() time.Time
}

func (c WebConfig) withDefaults() WebConfig {
	if c.FetchTimeout <= 0 {
		c.FetchTimeout = 30 * time.Second
	}
	if c.FetchMaxBytes <= 0 {
		c.FetchMaxBytes = 10 << 20
	}
	if c.FetchMaxChars <= 0 {
		c.FetchMaxChars = 100000
	}
	if c.CacheTTL <= 0 {
		c.CacheTTL = 15 * time.Minute
	}
	if c.CacheEntries <= 0 {
		c.CacheEntries = 64
	}
	if c.UserAgent == "" {
		c.UserAgent = "cadre-webfetch/1"
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// SmallModel answers one prompt with no tools. WebFetch uses it to apply
// its prompt to a page.
type SmallModel interface {
	Complete(ctx context.Context, system, prompt string) (string, error)
}

// NewSmallModel adapts an llm.Model and a model id (the provider's small
// model) to SmallModel; answers are bounded to maxTokens (4096 when 0).
func NewSmallModel(m llm.Model, modelID string, maxTokens int64) SmallModel {
	if maxTokens <= 0 {
		maxTokens = 4096
	}
	return &llmSmallModel{model: m, id: modelID, maxTokens: maxTokens}
}

type llmSmallModel struct {
	model     llm.Model
	id        string
	maxTokens int64
}

func (s *llmSmallModel) Complete(ctx context.Context, system, prompt string) (string, error) {
	req := &llm.Request{Model: s.id, System: system, Messages: []llm.Message{llm.UserText(prompt)}, MaxTokens: s.maxTokens}
	resp, err := complete(ctx, s.model, req)
	if err != nil {
		return "", fmt.Errorf("small model %s: %w", s.id, err)
	}
	text := strings.TrimSpace(resp.Message.Text())
	if text == "" {
		return "", fmt.Errorf("small model %s answered with no text (stop reason %s)", s.id, resp.StopReason)
	}
	return text, nil
}

// complete runs one request to the end and returns the whole answer.
func complete(ctx context.Context, m llm.Model, req *llm.Request) (*llm.Response, error) {
	for ev, err := range m.Stream(ctx, req) {
		if err != nil {
			return nil, err
		}
		if ev.Kind == llm.EventDone {
			if ev.Response == nil {
				return nil, errors.New("stream ended without a response")
			}
			return ev.Response, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, errors.New("stream ended before the answer was complete")
}
