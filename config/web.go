package config

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/tool/builtin"
)

// The web tools' settings (S-2): which model applies WebFetch's prompt and
// which backend answers WebSearch.
//
//	{"smallModel": "haiku",
//	 "webSearch": {"backend": "searxng", "url": "http://localhost:8888", "maxResults": 10}}
//
// Backends: "anthropic" (the provider's server-side search; the default
// with the Anthropic provider), "searxng" (a SearXNG instance's JSON API:
// webSearch.url or CADRE_SEARXNG_URL), "brave" (the Brave Search API, key
// in BRAVE_SEARCH_API_KEY; webSearch.url overrides the endpoint) and
// "none". Unset, with another provider, SearXNG is used when
// CADRE_SEARXNG_URL or webSearch.url is set, else Brave when
// BRAVE_SEARCH_API_KEY is, else
// none: WebSearch then answers that no backend is configured. API keys are
// read from the environment only (a settings file's env object counts), so
// they do not end up in a file the repository shares.

// Web search backends.
const (
	SearchAnthropic = "anthropic"
	SearchSearXNG   = "searxng"
	SearchBrave     = "brave"
	SearchNone      = "none"
)

// WebSearchSettings is the merged webSearch object; a higher file
// overrides single keys.
type WebSearchSettings struct {
	// Backend is anthropic, searxng, brave or none.
	Backend Value
	// URL is the SearXNG instance, or Brave's endpoint.
	URL Value
	// MaxResults caps the results of one search (10).
	MaxResults IntValue
}

// webFileData is the JSON shape of the web keys of one settings file.
type webFileData struct {
	SmallModel *string          `json:"smallModel"`
	WebSearch  *json.RawMessage `json:"webSearch"`
}

type webSearchData struct {
	Backend    *string `json:"backend"`
	URL        *string `json:"url"`
	MaxResults *int    `json:"maxResults"`
}

// applyWeb merges a file's smallModel and webSearch keys.
func (s *Settings) applyWeb(data []byte, path string) error {
	var fd webFileData
	if err := json.Unmarshal(data, &fd); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrMalformed, path, err)
	}
	if fd.SmallModel != nil {
		s.SmallModel = Value{Value: strings.TrimSpace(*fd.SmallModel), Source: path}
	}
	if fd.WebSearch == nil || string(*fd.WebSearch) == "null" {
		return nil
	}
	var ws webSearchData
	dec := json.NewDecoder(bytes.NewReader(*fd.WebSearch))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ws); err != nil {
		return fmt.Errorf("%w: %s: webSearch: %v (keys: backend, url, maxResults)", ErrMalformed, path, err)
	}
	if ws.Backend != nil {
		b := strings.ToLower(strings.TrimSpace(*ws.Backend))
		switch b {
		case SearchAnthropic, SearchSearXNG, SearchBrave, SearchNone:
		default:
			return fmt.Errorf("%w: %s: webSearch.backend %q is not anthropic, searxng, brave or none", ErrMalformed, path, *ws.Backend)
		}
		s.WebSearch.Backend = Value{Value: b, Source: path}
	}
	if ws.URL != nil {
		if u, err := url.Parse(*ws.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%w: %s: webSearch.url %q is not an http(s) URL", ErrMalformed, path, *ws.URL)
		}
		s.WebSearch.URL = Value{Value: *ws.URL, Source: path}
	}
	if ws.MaxResults != nil {
		if *ws.MaxResults < 1 {
			return fmt.Errorf("%w: %s: webSearch.maxResults must be 1 or more, not %d", ErrMalformed, path, *ws.MaxResults)
		}
		s.WebSearch.MaxResults = IntValue{Value: *ws.MaxResults, Source: path}
	}
	return nil
}

// configureWeb sets the small model and the WebSearch backend of cfg,
// whose Model and ModelID are set. A backend that lacks what it needs is a
// warning, and WebSearch then says that it is not configured.
func configureWeb(cfg *cadre.Config, s *Settings, getenv func(string) string) ([]Diagnostic, error) {
	cfg.SmallModel = cmp.Or(getenv("CADRE_SMALL_MODEL"), s.SmallModel.Value)
	provider, err := ChooseProvider(s.Provider.Value, getenv)
	if err != nil {
		return nil, err
	}
	ws := s.WebSearch
	searxURL := cmp.Or(getenv("CADRE_SEARXNG_URL"), ws.URL.Value)
	braveKey := getenv("BRAVE_SEARCH_API_KEY")
	backend := ws.Backend.Value
	if backend == "" {
		switch {
		case provider == Anthropic:
			backend = SearchAnthropic
		case searxURL != "":
			backend = SearchSearXNG
		case braveKey != "":
			backend = SearchBrave
		default:
			backend = SearchNone
		}
	}
	warn := func(format string, args ...any) []Diagnostic {
		return []Diagnostic{{File: ws.Backend.Source, Severity: SeverityWarning, Topic: TopicSettings,
			Message: fmt.Sprintf(format, args...) + "; WebSearch will answer that no search backend is configured"}}
	}
	switch backend {
	case SearchAnthropic:
		if provider != Anthropic {
			return warn("webSearch.backend anthropic needs the anthropic provider, not %s", provider), nil
		}
		cfg.WebSearch = &builtin.AnthropicSearch{Model: cfg.Model, ModelID: cfg.ModelID}
	case SearchSearXNG:
		if searxURL == "" {
			return warn("webSearch.backend searxng needs the instance's URL: set webSearch.url or CADRE_SEARXNG_URL"), nil
		}
		if u, err := url.Parse(searxURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return warn("CADRE_SEARXNG_URL %q is not an http(s) URL", searxURL), nil
		}
		cfg.WebSearch = &builtin.SearXNG{BaseURL: searxURL, MaxResults: ws.MaxResults.Value}
	case SearchBrave:
		if braveKey == "" {
			return warn("webSearch.backend brave needs an API key in BRAVE_SEARCH_API_KEY"), nil
		}
		cfg.WebSearch = &builtin.Brave{APIKey: braveKey, BaseURL: ws.URL.Value, MaxResults: ws.MaxResults.Value}
	}
	return nil, nil
}
