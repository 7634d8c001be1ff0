package builtin

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"

	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/tool"
)

//go:embed webfetch.md
var webFetchDescription string

type webFetchInput struct {
	URL    string `json:"url" jsonschema:"format=uri" jsonschema_description:"The full URL to fetch (http or https)."`
	Prompt string `json:"prompt" jsonschema_description:"What to find out from the page."`
}

// maxURLLength bounds the URL a call may give.
const maxURLLength = 2000

// maxRedirects bounds the same-host redirects one fetch follows.
const maxRedirects = 10

// NewWebFetch returns the WebFetch tool: fetch a URL, convert HTML to
// Markdown, and answer the call's prompt from it with the small model
// (cfg.Web.SmallModel). Pages are cached for a short time. Loopback,
// private and link-local addresses are refused unless the agent's
// permission rules allow the host (tool.Env.AllowPrivateHost).
func NewWebFetch(cfg Config) tool.Tool {
	cfg = cfg.withDefaults()
	f := &webFetcher{cfg: cfg.Web, cache: map[string]cachedPage{}}
	return tool.Func(tool.FuncConfig{Name: tool.WebFetch, Subject: tool.BuiltinSubject(tool.WebFetch), Description: webFetchDescription, ReadOnly: true}, f.run)
}

// webFetcher holds one WebFetch tool's page cache.
type webFetcher struct {
	cfg   WebConfig
	mu    sync.Mutex
	cache map[string]cachedPage
}

// cachedPage is a fetched page, converted.
type cachedPage struct {
	finalURL string
	content  string
	fetched  time.Time
	// private is set when fetching it needed a rule allowing a
	// non-public address; a cache hit then needs that rule too.
	private bool
}

// fetchResult is one fetch's outcome: a page, or a redirect to another
// host the agent must follow itself.
type fetchResult struct {
	page     cachedPage
	redirect string
	status   int
}

func (f *webFetcher) run(ctx context.Context, env *tool.Env, in webFetchInput) (tool.Output, error) {
	u, problem := checkFetchURL(in.URL)
	if problem != "" {
		return tool.Errorf("%s", problem), nil
	}
	if strings.TrimSpace(in.Prompt) == "" {
		return tool.Errorf("prompt is required: say what to find out from the page"), nil
	}
	key := u.String()
	page, ok := f.cached(env, key)
	if !ok {
		res, err := f.fetch(ctx, env, u)
		if err != nil {
			if ctx.Err() != nil {
				return tool.Output{}, ctx.Err()
			}
			return fetchError(u, err), nil
		}
		if res.redirect != "" {
			return tool.Output{Text: prompts.WebFetchRedirect(key, res.redirect, res.status)}, nil
		}
		page = res.page
		f.store(key, page)
	}
	if f.cfg.SmallModel == nil {
		return tool.Output{Text: prompts.WebFetchResult(page.finalURL, page.content, true)}, nil
	}
	answer, err := f.cfg.SmallModel.Complete(ctx, prompts.WebFetchSystem(), prompts.WebFetchRequest(page.finalURL, page.content, in.Prompt))
	if err != nil {
		if ctx.Err() != nil {
			return tool.Output{}, ctx.Err()
		}
		return tool.Errorf("fetched %s, but the model that applies the prompt failed: %v", page.finalURL, err), nil
	}
	return tool.Output{Text: prompts.WebFetchResult(page.finalURL, answer, false)}, nil
}

// checkFetchURL validates the URL and upgrades http to https, except for
// loopback hosts (a local server rarely speaks TLS).
func checkFetchURL(raw string) (*url.URL, string) {
	raw = strings.TrimSpace(raw)
	switch {
	case raw == "":
		return nil, "url is required"
	case len(raw) > maxURLLength:
		return nil, fmt.Sprintf("url is %d characters long, more than the %d allowed", len(raw), maxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Sprintf("url %q is not a valid URL: %v", raw, err)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	case "":
		return nil, fmt.Sprintf("url %q has no scheme: give a full URL such as https://%s", raw, raw)
	default:
		return nil, fmt.Sprintf("url %q uses the %s scheme; WebFetch fetches only http and https URLs", raw, u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, fmt.Sprintf("url %q has no host", raw)
	}
	if u.User != nil {
		return nil, fmt.Sprintf("url %q carries a user name or password; WebFetch does not send credentials", raw)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme == "http" && !isLoopbackHost(u.Hostname()) {
		u.Scheme = "https"
	}
	u.Fragment = ""
	return u, ""
}

func (f *webFetcher) cached(env *tool.Env, key string) (cachedPage, bool) {
	f.mu.Lock()
	p, ok := f.cache[key]
	f.mu.Unlock()
	if !ok || f.cfg.Now().Sub(p.fetched) > f.cfg.CacheTTL {
		return cachedPage{}, false
	}
	if p.private {
		u, err := url.Parse(p.finalURL)
		if err != nil || env == nil || env.AllowPrivateHost == nil || !env.AllowPrivateHost(u.Hostname()) {
			return cachedPage{}, false // fetch again: the dial check decides
		}
	}
	return p, true
}

// store caches a page, dropping expired pages and then the oldest when
// the cache is full.
func (f *webFetcher) store(key string, p cachedPage) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.cfg.Now()
	for k, c := range f.cache {
		if now.Sub(c.fetched) > f.cfg.CacheTTL {
			delete(f.cache, k)
		}
	}
	for len(f.cache) >= f.cfg.CacheEntries {
		oldest := ""
		for k, c := range f.cache {
			if oldest == "" || c.fetched.Before(f.cache[oldest].fetched) {
				oldest = k
			}
		}
		delete(f.cache, oldest)
	}
	f.cache[key] = p
}

// fetch gets u, following redirects that stay on its host.
func (f *webFetcher) fetch(ctx context.Context, env *tool.Env, u *url.URL) (fetchResult, error) {
	var usedPrivate bool
	var mu sync.Mutex
	allow := func(host string) bool {
		if env == nil || env.AllowPrivateHost == nil || !env.AllowPrivateHost(host) {
			return false
		}
		mu.Lock()
		usedPrivate = true
		mu.Unlock()
		return true
	}
	tr := &http.Transport{
		Proxy:                  nil, // a proxy would be dialled instead of the host, and escape the address check
		DialContext:            guardedDialer{timeout: f.cfg.FetchTimeout, allowPrivate: allow}.DialContext,
		TLSHandshakeTimeout:    f.cfg.FetchTimeout,
		ResponseHeaderTimeout:  f.cfg.FetchTimeout,
		MaxResponseHeaderBytes: 1 << 20,
		ForceAttemptHTTP2:      true,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{
		Transport: tr,
		Timeout:   f.cfg.FetchTimeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxRedirects {
				return fmt.Errorf("more than %d redirects", maxRedirects)
			}
			if !sameSite(via[0].URL, req.URL) {
				return http.ErrUseLastResponse
			}
			return nil
		},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fetchResult{}, err
	}
	req.Header.Set("User-Agent", f.cfg.UserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.9,*/*;q=0.5")
	resp, err := client.Do(req)
	if err != nil {
		return fetchResult{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		loc, err := resp.Location()
		if err != nil {
			return fetchResult{}, fmt.Errorf("HTTP %d redirect without a usable Location header", resp.StatusCode)
		}
		return fetchResult{redirect: loc.String(), status: resp.StatusCode}, nil
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fetchResult{}, &statusError{status: resp.Status}
	}
	body, err := readCapped(resp, f.cfg.FetchMaxBytes)
	if err != nil {
		return fetchResult{}, err
	}
	final := resp.Request.URL.String()
	content, err := toMarkdown(ctx, resp.Header.Get("Content-Type"), body, final)
	if err != nil {
		return fetchResult{}, err
	}
	mu.Lock()
	private := usedPrivate
	mu.Unlock()
	return fetchResult{page: cachedPage{finalURL: final, content: capText(content, f.cfg.FetchMaxChars), fetched: f.cfg.Now(), private: private}}, nil
}

// sameSite reports whether a redirect from a to b may be followed: the
// same host (a leading "www." aside) and port, and no downgrade from
// https to http.
func sameSite(a, b *url.URL) bool {
	strip := func(h string) string { return strings.TrimPrefix(strings.ToLower(h), "www.") }
	if strip(a.Hostname()) != strip(b.Hostname()) || a.Port() != b.Port() && !(a.Port() == "" || b.Port() == "") {
		return false
	}
	return !(a.Scheme == "https" && b.Scheme == "http")
}

// statusError is a response that is neither success nor redirect.
type statusError struct{ status string }

func (e *statusError) Error() string { return "the server answered HTTP " + e.status }

// tooLargeError is a body over the size cap.
type tooLargeError struct{ limit, size int64 }

func (e *tooLargeError) Error() string {
	if e.size > 0 {
		return fmt.Sprintf("the response is %d bytes, more than the %d bytes WebFetch reads", e.size, e.limit)
	}
	return fmt.Sprintf("the response is larger than the %d bytes WebFetch reads", e.limit)
}

// readCapped reads the body, refusing more than limit bytes: at once when
// Content-Length says so, else as soon as the limit is passed.
func readCapped(resp *http.Response, limit int64) ([]byte, error) {
	if resp.ContentLength > limit {
		return nil, &tooLargeError{limit: limit, size: resp.ContentLength}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read the response: %w", err)
	}
	if int64(len(body)) > limit {
		return nil, &tooLargeError{limit: limit}
	}
	return body, nil
}

// toMarkdown turns a body into text for the model: HTML converted to
// Markdown, text kinds as they are, anything else refused.
func toMarkdown(ctx context.Context, contentType string, body []byte, pageURL string) (string, error) {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil || mt == "" {
		mt, _, _ = mime.ParseMediaType(http.DetectContentType(body))
	}
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		conv := htmltomarkdown.NewConverter(htmltomarkdown.WithPlugins(base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(), table.NewTablePlugin()))
		md, err := conv.ConvertString(strings.ToValidUTF8(string(body), "\uFFFD"), htmltomarkdown.WithContext(ctx), htmltomarkdown.WithDomain(pageURL))
		if err != nil {
			return "", fmt.Errorf("convert the HTML to Markdown: %w", err)
		}
		if strings.TrimSpace(md) == "" {
			return "(the page has no text content)", nil
		}
		return md, nil
	case textual(mt):
		if !utf8.Valid(body) && looksBinary(body[:min(len(body), 8192)]) {
			return "", fmt.Errorf("the response says %s but holds binary data", mt)
		}
		return strings.ToValidUTF8(string(body), "\uFFFD"), nil
	}
	return "", &contentTypeError{mediaType: mt, size: len(body)}
}

// textual reports media types returned as text.
func textual(mt string) bool {
	if strings.HasPrefix(mt, "text/") {
		return true
	}
	switch mt {
	case "application/json", "application/ld+json", "application/xml", "application/javascript", "application/x-javascript",
		"application/yaml", "application/x-yaml", "application/toml", "application/rss+xml", "application/atom+xml", "application/x-ndjson":
		return true
	}
	return strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml")
}

// contentTypeError is a body WebFetch does not turn into text.
type contentTypeError struct {
	mediaType string
	size      int
}

func (e *contentTypeError) Error() string {
	return fmt.Sprintf("the response is %s (%d bytes), not a web page or text; WebFetch reads HTML and text only", e.mediaType, e.size)
}

// fetchError turns a failed fetch into a result the model can act on.
func fetchError(u *url.URL, err error) tool.Output {
	var pe *privateAddrError
	if errors.As(err, &pe) {
		return tool.Errorf("Refused to fetch %s: %v. WebFetch does not reach into local or private networks unless a permission rule allows the host, such as WebFetch(domain:%s); ask the user if this is intended.", u, pe, u.Hostname())
	}
	return tool.Errorf("Could not fetch %s: %v", u, err)
}
