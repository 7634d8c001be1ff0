package builtin

import (
	"context"
	_ "embed"
	"fmt"
	"net/url"
	"strings"

	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/tool"
)

//go:embed websearch.md
var webSearchDescription string

type webSearchInput struct {
	Query          string   `json:"query" jsonschema_description:"The search query."`
	AllowedDomains []string `json:"allowed_domains,omitempty" jsonschema_description:"Only these domains (and subdomains)."`
	BlockedDomains []string `json:"blocked_domains,omitempty" jsonschema_description:"Never these domains (and subdomains)."`
}

// SearchQuery is one WebSearch call as a backend gets it.
type SearchQuery struct {
	Query string
	// AllowedDomains, when set, keeps only results from these domains or
	// their subdomains; BlockedDomains drops results from those. At most
	// one of them is set.
	AllowedDomains []string
	BlockedDomains []string
}

// SearchHit is one search result.
type SearchHit struct {
	Title   string
	URL     string
	Snippet string
	// Age is how old the page is, as the backend says it ("2 days ago").
	Age string
}

// SearchResults is what a backend found.
type SearchResults struct {
	// Backend names the backend ("Anthropic web search", "SearXNG").
	Backend string
	Hits    []SearchHit
	// Summary is text the backend wrote about the results (the
	// provider's model, for a server-side search); often empty.
	Summary string
}

// Searcher runs web searches for WebSearch. Implementations: Anthropic's
// server-side search (AnthropicSearch), SearXNG and Brave Search.
type Searcher interface {
	Search(ctx context.Context, q SearchQuery) (*SearchResults, error)
}

// maxQueryLength bounds a query.
const maxQueryLength = 1000

// NewWebSearch returns the WebSearch tool, answered by cfg.Web.Search; with
// no backend it says that no search could be run, never a made-up result.
func NewWebSearch(cfg Config) tool.Tool {
	cfg = cfg.withDefaults()
	return tool.Func(tool.FuncConfig{Name: tool.WebSearch, Description: webSearchDescription, ReadOnly: true},
		func(ctx context.Context, env *tool.Env, in webSearchInput) (tool.Output, error) {
			return runWebSearch(ctx, cfg.Web.Search, in)
		})
}

func runWebSearch(ctx context.Context, s Searcher, in webSearchInput) (tool.Output, error) {
	q := strings.TrimSpace(in.Query)
	switch {
	case len(q) < 2:
		return tool.Errorf("query must have at least 2 characters"), nil
	case len(q) > maxQueryLength:
		return tool.Errorf("query is %d characters long, more than the %d allowed", len(q), maxQueryLength), nil
	case len(in.AllowedDomains) > 0 && len(in.BlockedDomains) > 0:
		return tool.Errorf("give allowed_domains or blocked_domains, not both"), nil
	}
	allowed, problem := cleanDomains(in.AllowedDomains, "allowed_domains")
	if problem != "" {
		return tool.Errorf("%s", problem), nil
	}
	blocked, problem := cleanDomains(in.BlockedDomains, "blocked_domains")
	if problem != "" {
		return tool.Errorf("%s", problem), nil
	}
	if s == nil {
		return tool.Output{Text: prompts.WebSearchUnconfigured(), IsError: true}, nil
	}
	res, err := s.Search(ctx, SearchQuery{Query: q, AllowedDomains: allowed, BlockedDomains: blocked})
	if err != nil {
		if ctx.Err() != nil {
			return tool.Output{}, ctx.Err()
		}
		return tool.Errorf("The web search for %q failed: %v", q, err), nil
	}
	hits := filterHits(res.Hits, allowed, blocked)
	ph := make([]prompts.SearchHit, len(hits))
	for i, h := range hits {
		ph[i] = prompts.SearchHit{Title: h.Title, URL: h.URL, Snippet: h.Snippet, Age: h.Age}
	}
	return tool.Output{Text: prompts.WebSearchResults(q, res.Backend, ph, res.Summary)}, nil
}

// cleanDomains validates domain filters: host names only, lower-cased,
// without scheme or path.
func cleanDomains(ds []string, field string) ([]string, string) {
	var out []string
	for _, d := range ds {
		d = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(d)), ".")
		if d == "" || strings.ContainsAny(d, "/:?# ") {
			return nil, fmt.Sprintf("%s entry %q is not a domain name (give a host such as example.com, without scheme or path)", field, d)
		}
		out = append(out, d)
	}
	return out, ""
}

// filterHits applies the domain filters to hits (a backend may not), and
// drops hits without a URL.
func filterHits(hits []SearchHit, allowed, blocked []string) []SearchHit {
	var out []SearchHit
	for _, h := range hits {
		u, err := url.Parse(h.URL)
		if err != nil || u.Hostname() == "" {
			continue
		}
		host := strings.ToLower(u.Hostname())
		if len(allowed) > 0 && !domainIn(host, allowed) || domainIn(host, blocked) {
			continue
		}
		out = append(out, h)
	}
	return out
}

// domainIn reports whether host is one of the domains or below one.
func domainIn(host string, domains []string) bool {
	for _, d := range domains {
		if host == d || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	return false
}
