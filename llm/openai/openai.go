package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/internal/retry"
)

// Defaults.
const (
	DefaultBaseURL    = "https://api.openai.com/v1"
	DefaultMaxRetries = retry.DefaultRetries
	DefaultRetryBase  = retry.DefaultBase
	DefaultRetryMax   = retry.DefaultMax
	// DefaultHeaderTimeout is longer than Anthropic's: a local server
	// (Ollama, llama.cpp) may load the model before it answers.
	DefaultHeaderTimeout = 5 * time.Minute
	// placeholderKey is sent when Config.APIKey is empty: local servers
	// ignore it, and some refuse a request with no Authorization at all.
	placeholderKey = "no-key"
)

// Config configures a Model. Nothing is read from the environment: the
// caller resolves keys and URLs.
type Config struct {
	// APIKey is sent as a Bearer token; empty sends a placeholder, which
	// local servers (Ollama, llama.cpp server, vLLM) accept.
	APIKey string
	// BaseURL is the API root including /v1 (e.g.
	// http://localhost:11434/v1); empty means DefaultBaseURL.
	BaseURL string
	// HTTPClient carries the requests; nil means a client with a bound on
	// connecting and no overall timeout (streams are long; the bounds
	// below apply whatever the client).
	HTTPClient *http.Client
	// Headers are extra headers sent with every request (e.g. OpenRouter's
	// HTTP-Referer).
	Headers map[string]string
	// MaxRetries is how many times a failed attempt is retried: 0 means
	// DefaultMaxRetries, a negative value means never.
	MaxRetries int
	// RetryBase and RetryMax bound the exponential back-off (0: defaults).
	RetryBase, RetryMax time.Duration
	// HeaderTimeout, IdleTimeout, MaxRetryAfter and RetryBudget keep a
	// request from hanging (see the package documentation); 0 means the
	// defaults: 5 min for headers (a local server may load the model
	// first), 3 min of stream silence, a retry-after of at most 60 s,
	// 3 min of waiting between attempts.
	HeaderTimeout, IdleTimeout, MaxRetryAfter, RetryBudget time.Duration
	// MaxTokensField is FieldMaxTokens or FieldMaxCompletionTokens; empty
	// picks max_completion_tokens for api.openai.com and max_tokens for
	// every other server.
	MaxTokensField string
	// Sleep waits between attempts; nil means a real timer. Tests pass a
	// recorder here instead of waiting.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Model is a Chat Completions endpoint. It is safe for concurrent use.
type Model struct {
	chat     sdk.ChatCompletionService
	retry    retry.Policy
	maxField string
	// tools keeps the latest tools arrays rendered (toolsraw.go).
	tools retry.ToolsCache
}

var _ llm.Model = (*Model)(nil)

// New returns a Model for cfg.
func New(cfg Config) (*Model, error) {
	policy, err := retry.NewPolicy(cfg.MaxRetries, cfg.RetryBase, cfg.RetryMax, cfg.Sleep)
	if err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	bounds := retry.Bounds{HeaderTimeout: cfg.HeaderTimeout, IdleTimeout: cfg.IdleTimeout, MaxRetryAfter: cfg.MaxRetryAfter, Budget: cfg.RetryBudget}
	if policy.Bounds, err = bounds.WithDefaults(retry.Bounds{HeaderTimeout: DefaultHeaderTimeout}); err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	u, err := retry.CheckBaseURL(cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	switch cfg.MaxTokensField {
	case "":
		cfg.MaxTokensField = FieldMaxTokens
		if strings.EqualFold(u.Hostname(), "api.openai.com") {
			cfg.MaxTokensField = FieldMaxCompletionTokens
		}
	case FieldMaxTokens, FieldMaxCompletionTokens:
	default:
		return nil, fmt.Errorf("openai: MaxTokensField %q is neither %s nor %s", cfg.MaxTokensField, FieldMaxTokens, FieldMaxCompletionTokens)
	}
	if cfg.APIKey == "" {
		cfg.APIKey = placeholderKey
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = retry.HTTPClient()
	}
	base := cfg.BaseURL
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	// The service is built without openai.NewClient so that no OPENAI_*
	// environment variable leaks into the requests.
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithAPIKey(cfg.APIKey),
		option.WithHTTPClient(cfg.HTTPClient),
		option.WithMaxRetries(0),
	}
	for _, k := range retry.SortedKeys(cfg.Headers) {
		opts = append(opts, option.WithHeader(k, cfg.Headers[k]))
	}
	return &Model{
		chat:     sdk.NewChatCompletionService(opts...),
		retry:    policy,
		maxField: cfg.MaxTokensField,
	}, nil
}

// Stream sends req and yields its events; see the package documentation for
// the event order and the retry contract.
func (m *Model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		params, body, err := m.params(req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		retry.Run(ctx, m.retry, "openai", func() (*llm.Response, bool, *retry.Failure) {
			return m.attempt(ctx, params, body, yield)
		}, yield)
	}
}

// params builds req's parameters and its body. The body goes out in parts
// through a middleware (retry.StreamBody): the SDK's NewStreaming would
// otherwise copy the whole encoding to set "stream":true; the tools array
// is the Model's kept rendering (toolsraw.go). The SDK is given the
// parameters with the model alone.
func (m *Model) params(req *llm.Request) (sdk.ChatCompletionNewParams, *retry.StreamBody, error) {
	p, err := buildParamsTools(req, m.maxField, false)
	if err != nil {
		return p, nil, err
	}
	var tools []byte
	if len(req.Tools) > 0 {
		if tools, err = m.tools.Get(req.Tools, -1, renderTools); err != nil {
			return p, nil, err
		}
	}
	enc, err := p.MarshalJSON()
	if err != nil {
		return p, nil, fmt.Errorf("openai: encode the request: %w", err)
	}
	body, err := retry.NewStreamBody(enc, tools)
	if err != nil {
		return p, nil, fmt.Errorf("openai: %w", err)
	}
	return sdk.ChatCompletionNewParams{Model: p.Model}, body, nil
}

// errCut reports a stream that ended before a finish_reason.
var errCut = errors.New("stream ended before a finish_reason")

// attempt runs one streaming request, yielding deltas as they arrive. It
// returns the assembled response, or stopped when the consumer quit, or the
// failure.
func (m *Model) attempt(ctx context.Context, params sdk.ChatCompletionNewParams, body *retry.StreamBody, yield func(llm.Event, error) bool) (*llm.Response, bool, *retry.Failure) {
	actx, watch := retry.Watch(ctx, m.retry.Bounds)
	defer watch.Stop()
	// NewStreaming returns once the response headers are in (or the
	// request failed); the watchdog then bounds each silence.
	stream := m.chat.NewStreaming(actx, params, option.WithMiddleware(body.Middleware))
	defer stream.Close()
	watch.Headers()

	var acc accumulator
	for stream.Next() {
		watch.Event()
		for _, ev := range acc.add(stream.Current()) {
			if !yield(ev, nil) {
				return nil, true, nil
			}
		}
	}
	err := stream.Err()
	switch {
	case err == nil && acc.finished:
		return acc.response(), false, nil
	case err == nil:
		return nil, false, &retry.Failure{Err: errCut, Cause: retry.CauseCut, Retryable: true}
	case retry.Fired(actx) != nil && ctx.Err() == nil:
		return nil, false, retry.Fired(actx)
	case acc.finished && acc.hasUsage && ctx.Err() == nil:
		// The answer and its usage are complete; only the [DONE] or the
		// connection close went wrong.
		return acc.response(), false, nil
	}
	return nil, false, classify(err)
}

// classify turns an SDK error into a failure.
func classify(err error) *retry.Failure {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		status := apiErr.StatusCode
		typ := apiErr.Type
		if typ == "" {
			typ = apiErr.Code
		}
		msg := apiErr.Message
		if msg == "" {
			msg = apiErr.RawJSON()
		}
		if msg == "" {
			msg = http.StatusText(status)
		}
		f := &retry.Failure{
			Err:       &llm.APIError{Status: status, Type: typ, Message: msg},
			Status:    status,
			Retryable: retry.RetryableStatus(status) && apiErr.Code != "insufficient_quota" && typ != "insufficient_quota",
		}
		if apiErr.Response != nil {
			f.After = retry.After(apiErr.Response.Header, time.Now())
		}
		return f
	}
	var streamErr *ssestream.StreamError
	if errors.As(err, &streamErr) {
		// An error object inside a 200 stream.
		typ, msg, status := streamedError(streamErr.Event.Data)
		return &retry.Failure{
			Err:       &llm.APIError{Status: status, Type: typ, Message: msg},
			Status:    status,
			Retryable: retry.RetryableStatus(status),
		}
	}
	return retry.Transport(err)
}

// streamedError reads the error object of an SSE event: its type (or
// string code), message, and the HTTP status it stands for.
func streamedError(data []byte) (typ, msg string, status int) {
	var body struct {
		Error struct {
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
			Message string          `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &body); err != nil {
		return "", strings.TrimSpace(string(data)), http.StatusInternalServerError
	}
	e := body.Error
	typ, msg = e.Type, e.Message
	var code string
	var num int
	if json.Unmarshal(e.Code, &code) == nil && typ == "" {
		typ = code
	} else if json.Unmarshal(e.Code, &num) == nil && num >= 400 && num <= 599 {
		status = num // some servers put the HTTP status here
	}
	if msg == "" {
		msg = strings.TrimSpace(string(data))
	}
	if status == 0 {
		status = statusOfErrorType(typ)
	}
	return typ, msg, status
}

// statusOfErrorType maps the type of an error inside a stream to the HTTP
// status the same error would have had; unknown types count as server
// errors, which are retried.
func statusOfErrorType(t string) int {
	switch t {
	case "invalid_request_error", "invalid_request", "bad_request":
		return http.StatusBadRequest
	case "authentication_error", "invalid_api_key":
		return http.StatusUnauthorized
	case "permission_error":
		return http.StatusForbidden
	case "not_found_error", "model_not_found":
		return http.StatusNotFound
	case "rate_limit_exceeded", "rate_limit_error":
		return http.StatusTooManyRequests
	case "insufficient_quota":
		return http.StatusPaymentRequired
	case "overloaded_error", "overloaded":
		return 529
	}
	return http.StatusInternalServerError
}
