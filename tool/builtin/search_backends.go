package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/prompts"
)

// maxSearchBody caps a search backend's answer.
const maxSearchBody = 4 << 20

// SearXNG searches through a SearXNG instance's JSON API
// (GET <BaseURL>/search?q=…&format=json). The instance must have the json
// format enabled in its settings (search.formats). It is a server the
// user chose, so it may be on localhost or a private network.
type SearXNG struct {
	// BaseURL is the instance, such as http://localhost:8888.
	BaseURL string
	// Client is the HTTP client; nil uses one with a 30 s timeout.
	Client *http.Client
	// MaxResults caps the hits returned (10).
	MaxResults int
}

// Search runs q on the instance.
func (s *SearXNG) Search(ctx context.Context, q SearchQuery) (*SearchResults, error) {
	u, err := url.Parse(strings.TrimRight(s.BaseURL, "/") + "/search")
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("SearXNG base URL %q is not a valid URL", s.BaseURL)
	}
	v := url.Values{"q": {siteQuery(q)}, "format": {"json"}}
	u.RawQuery = v.Encode()
	var body struct {
		Results []struct {
			Title         string `json:"title"`
			URL           string `json:"url"`
			Content       string `json:"content"`
			PublishedDate string `json:"publishedDate"`
		} `json:"results"`
		Answers []json.RawMessage `json:"answers"`
	}
	if err := getJSON(ctx, client(s.Client), u.String(), nil, &body); err != nil {
		return nil, fmt.Errorf("SearXNG at %s: %w", s.BaseURL, err)
	}
	res := &SearchResults{Backend: "SearXNG"}
	for _, r := range body.Results {
		res.Hits = append(res.Hits, SearchHit{Title: r.Title, URL: r.URL, Snippet: r.Content, Age: r.PublishedDate})
	}
	res.Hits = capHits(filterHits(res.Hits, q.AllowedDomains, q.BlockedDomains), s.MaxResults)
	return res, nil
}

// Brave searches with the Brave Search API
// (GET https://api.search.brave.com/res/v1/web/search, key in the
// X-Subscription-Token header).
type Brave struct {
	// APIKey is the subscription token.
	APIKey string
	// BaseURL overrides the API endpoint (tests, proxies).
	BaseURL string
	// Client is the HTTP client; nil uses one with a 30 s timeout.
	Client *http.Client
	// MaxResults caps the hits returned (10; the API gives at most 20).
	MaxResults int
}

// Search runs q on Brave Search.
func (b *Brave) Search(ctx context.Context, q SearchQuery) (*SearchResults, error) {
	if b.APIKey == "" {
		return nil, fmt.Errorf("Brave Search has no API key configured")
	}
	endpoint := b.BaseURL
	if endpoint == "" {
		endpoint = "https://api.search.brave.com/res/v1/web/search"
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("Brave Search URL %q is not a valid URL", endpoint)
	}
	n := b.MaxResults
	if n <= 0 {
		n = 10
	}
	u.RawQuery = url.Values{"q": {siteQuery(q)}, "count": {fmt.Sprint(min(n, 20))}}.Encode()
	var body struct {
		Web struct {
			Results []struct {
				Title       string `json:"title"`
				URL         string `json:"url"`
				Description string `json:"description"`
				Age         string `json:"age"`
			} `json:"results"`
		} `json:"web"`
	}
	h := http.Header{"X-Subscription-Token": {b.APIKey}, "Accept": {"application/json"}}
	if err := getJSON(ctx, client(b.Client), u.String(), h, &body); err != nil {
		return nil, fmt.Errorf("Brave Search: %w", err)
	}
	res := &SearchResults{Backend: "Brave Search"}
	for _, r := range body.Web.Results {
		res.Hits = append(res.Hits, SearchHit{Title: r.Title, URL: r.URL, Snippet: stripTags(r.Description), Age: r.Age})
	}
	res.Hits = capHits(filterHits(res.Hits, q.AllowedDomains, q.BlockedDomains), b.MaxResults)
	return res, nil
}

// AnthropicSearch runs the search on Anthropic's side: one request to the
// model with the server-side web search tool, whose results (and the
// model's summary of them) come back as server tool blocks. A paused turn
// (pause_turn) is continued by sending the answer back as it came.
type AnthropicSearch struct {
	// Model is an Anthropic model (llm/anthropic); ModelID the model to
	// ask.
	Model   llm.Model
	ModelID string
	// MaxUses bounds the searches of one call (5).
	MaxUses int
}

// maxSearchContinuations bounds how often a paused search is resumed.
const maxSearchContinuations = 3

// Search asks the model to search for q.
func (a *AnthropicSearch) Search(ctx context.Context, q SearchQuery) (*SearchResults, error) {
	if a.Model == nil || a.ModelID == "" {
		return nil, fmt.Errorf("web search through Anthropic has no model configured")
	}
	maxUses := a.MaxUses
	if maxUses <= 0 {
		maxUses = 5
	}
	req := &llm.Request{
		Model:    a.ModelID,
		Messages: []llm.Message{llm.UserText(prompts.WebSearchQuery(q.Query))},
		ServerTools: []llm.ServerTool{{Type: llm.WebSearchServerTool, Name: "web_search", MaxUses: maxUses,
			AllowedDomains: q.AllowedDomains, BlockedDomains: q.BlockedDomains}},
		MaxTokens: 4096,
	}
	res := &SearchResults{Backend: "Anthropic web search"}
	var summary []string
	for i := 0; ; i++ {
		resp, err := complete(ctx, a.Model, req)
		if err != nil {
			return nil, err
		}
		for _, b := range resp.Message.Content {
			switch b.Type {
			case llm.BlockWebSearchResult:
				hits, err := webSearchHits(b.Raw)
				if err != nil {
					return nil, err
				}
				res.Hits = append(res.Hits, hits...)
			case llm.BlockText:
				summary = append(summary, b.Text)
			}
		}
		if resp.StopReason != llm.StopPauseTurn || i == maxSearchContinuations {
			break
		}
		// The server paused a long search: send its answer back unchanged
		// (server tool blocks byte for byte) and let it go on.
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Content: resp.Message.Content})
	}
	res.Summary = strings.TrimSpace(strings.Join(summary, ""))
	return res, nil
}

// webSearchHits reads the results out of a web_search_tool_result block;
// an error result becomes an error naming its code.
func webSearchHits(raw json.RawMessage) ([]SearchHit, error) {
	var block struct {
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &block); err != nil {
		return nil, fmt.Errorf("web search result block: %w", err)
	}
	var items []struct {
		Type    string `json:"type"`
		Title   string `json:"title"`
		URL     string `json:"url"`
		PageAge string `json:"page_age"`
	}
	if err := json.Unmarshal(block.Content, &items); err != nil {
		var e struct {
			ErrorCode string `json:"error_code"`
		}
		if json.Unmarshal(block.Content, &e) == nil && e.ErrorCode != "" {
			return nil, fmt.Errorf("the provider's web search failed: %s", e.ErrorCode)
		}
		return nil, fmt.Errorf("web search result content: %w", err)
	}
	var out []SearchHit
	for _, it := range items {
		if it.Type == "web_search_result" {
			out = append(out, SearchHit{Title: it.Title, URL: it.URL, Age: it.PageAge})
		}
	}
	return out, nil
}

// siteQuery adds site: operators for one allowed domain, which both
// backends understand; other filters are applied to the results.
func siteQuery(q SearchQuery) string {
	if len(q.AllowedDomains) == 1 {
		return q.Query + " site:" + q.AllowedDomains[0]
	}
	return q.Query
}

func capHits(h []SearchHit, n int) []SearchHit {
	if n <= 0 {
		n = 10
	}
	if len(h) > n {
		h = h[:n]
	}
	return h
}

func client(c *http.Client) *http.Client {
	if c != nil {
		return c
	}
	return &http.Client{Timeout: 30 * time.Second}
}

// getJSON GETs u and decodes a JSON answer into v.
func getJSON(ctx context.Context, c *http.Client, u string, h http.Header, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	for k, vs := range h {
		req.Header[k] = vs
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxSearchBody+1))
	if err != nil {
		return fmt.Errorf("read the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %s: %s", resp.Status, strings.TrimSpace(string(body[:min(len(body), 200)])))
	}
	if len(body) > maxSearchBody {
		return fmt.Errorf("the answer is larger than %d bytes", maxSearchBody)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("the answer is not the expected JSON (is the json format enabled?): %w", err)
	}
	return nil
}

// stripTags removes the <strong> highlighting Brave puts in extracts.
func stripTags(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>' && in:
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}
