package anthropic

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/internal/retry"
)

// Retry defaults.
const (
	DefaultMaxRetries = retry.DefaultRetries
	DefaultRetryBase  = retry.DefaultBase
	DefaultRetryMax   = retry.DefaultMax
)

// Config configures a Model. Nothing is read from the environment: the
// caller resolves keys and URLs.
type Config struct {
	// APIKey is the API key (the SDK sends it as a bearer token).
	APIKey string
	// AuthToken, if set, is sent as a Bearer token (for gateways).
	AuthToken string
	// BaseURL is the API root without /v1; empty means the public API.
	BaseURL string
	// HTTPClient carries the requests; nil means a client with a bound on
	// connecting and no overall timeout (streams are long; the bounds
	// below apply whatever the client).
	HTTPClient *http.Client
	// Headers are extra headers sent with every request.
	Headers map[string]string
	// MaxRetries is how many times a failed attempt is retried: 0 means
	// DefaultMaxRetries, a negative value means never.
	MaxRetries int
	// RetryBase and RetryMax bound the exponential back-off (0: defaults).
	RetryBase, RetryMax time.Duration
	// HeaderTimeout, IdleTimeout, MaxRetryAfter and RetryBudget keep a
	// request from hanging (see the package documentation); 0 means the
	// defaults: 60 s for headers, 3 min of stream silence, a retry-after
	// of at most 60 s, 3 min of waiting between attempts.
	HeaderTimeout, IdleTimeout, MaxRetryAfter, RetryBudget time.Duration
	// DefaultMaxTokens bounds answers of requests with MaxTokens 0; 0 means
	// 32000 (less for Claude 3 models, whose output limit is lower).
	DefaultMaxTokens int64
	// Sleep waits between attempts; nil means a real timer. Tests pass a
	// recorder here instead of waiting.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Model is an Anthropic model endpoint. It is safe for concurrent use.
type Model struct {
	msgs   sdk.MessageService
	retry  retry.Policy
	defMax int64
	// tools keeps the latest tools arrays rendered (toolsraw.go).
	tools retry.ToolsCache
}

var _ llm.Model = (*Model)(nil)

// New returns a Model for cfg.
func New(cfg Config) (*Model, error) {
	policy, err := retry.NewPolicy(cfg.MaxRetries, cfg.RetryBase, cfg.RetryMax, cfg.Sleep)
	if err != nil {
		return nil, fmt.Errorf("anthropic: %w", err)
	}
	bounds := retry.Bounds{HeaderTimeout: cfg.HeaderTimeout, IdleTimeout: cfg.IdleTimeout, MaxRetryAfter: cfg.MaxRetryAfter, Budget: cfg.RetryBudget}
	if policy.Bounds, err = bounds.WithDefaults(retry.Bounds{}); err != nil {
		return nil, fmt.Errorf("anthropic: %w", err)
	}
	if cfg.DefaultMaxTokens < 0 {
		return nil, fmt.Errorf("anthropic: negative DefaultMaxTokens %d", cfg.DefaultMaxTokens)
	}
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithMaxRetries(0),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	if cfg.AuthToken != "" {
		opts = append(opts, option.WithAuthToken(cfg.AuthToken))
	}
	if cfg.BaseURL != "" {
		if _, err := retry.CheckBaseURL(cfg.BaseURL); err != nil {
			return nil, fmt.Errorf("anthropic: %w", err)
		}
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = retry.HTTPClient()
	}
	opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	for _, k := range retry.SortedKeys(cfg.Headers) {
		opts = append(opts, option.WithHeader(k, cfg.Headers[k]))
	}
	client := sdk.NewClient(opts...)
	return &Model{
		msgs:   client.Messages,
		retry:  policy,
		defMax: cfg.DefaultMaxTokens,
	}, nil
}

// Stream sends req and yields its events; see the package documentation for
// the event order and the retry contract.
func (m *Model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		params, opts, err := m.params(req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		retry.Run(ctx, m.retry, "anthropic", func() (*llm.Response, bool, *retry.Failure) {
			return m.attempt(ctx, params, opts, yield)
		}, yield)
	}
}

// params builds req's parameters and the options that go with them. The
// body goes out through a middleware (body.go): the SDK is given the
// parameters without the conversation, the system prompt and the tools,
// which the body holds. A request with tools and no server tools gets its
// tools array from the Model's rendered ones (toolsraw.go).
func (m *Model) params(req *llm.Request) (sdk.MessageNewParams, []option.RequestOption, error) {
	kept := req != nil && len(req.Tools) > 0 && len(req.ServerTools) == 0
	p, err := buildParamsTools(req, m.defMax, !kept)
	if err != nil {
		return p, nil, err
	}
	var raw []byte
	if kept {
		if raw, err = m.tools.Get(req.Tools, PlaceBreakpoints(req).Tool, renderTools); err != nil {
			return p, nil, err
		}
	}
	body, err := newStreamBody(p, raw)
	if err != nil {
		return p, nil, fmt.Errorf("anthropic: %w", err)
	}
	light := p
	light.Messages, light.System, light.Tools = nil, nil, nil
	return light, []option.RequestOption{option.WithMiddleware(body.Middleware)}, nil
}

// drainWait bounds the read of the body's end after message_stop.
const drainWait = 250 * time.Millisecond

// errCut reports a stream that ended before message_stop.
var errCut = errors.New("stream ended before message_stop")

// attempt runs one streaming request, yielding deltas as they arrive. It
// returns the assembled response, or stopped when the consumer quit, or the
// failure.
func (m *Model) attempt(ctx context.Context, params sdk.MessageNewParams, opts []option.RequestOption, yield func(llm.Event, error) bool) (*llm.Response, bool, *retry.Failure) {
	actx, watch := retry.Watch(ctx, m.retry.Bounds)
	defer watch.Stop()
	// NewStreaming returns once the response headers are in (or the
	// request failed); the watchdog then bounds each silence.
	stream := m.msgs.NewStreaming(actx, params, opts...)
	defer stream.Close()
	watch.Headers()

	var acc accumulator
	for stream.Next() {
		watch.Event()
		ev, ok := acc.add(stream.Current())
		if ok && !yield(ev, nil) {
			return nil, true, nil
		}
		if acc.done {
			// Nothing follows message_stop but the end of the body:
			// reading it lets net/http put the connection back in the
			// idle pool (closing the body before its end closes the
			// connection, and the next request opens a new one). A
			// server that keeps the stream open is cut after drainWait.
			watch.Drain(drainWait)
			for stream.Next() {
			}
			return acc.response(), false, nil
		}
	}
	if err := stream.Err(); err != nil {
		if f := retry.Fired(actx); f != nil && ctx.Err() == nil {
			return nil, false, f
		}
		return nil, false, classify(err)
	}
	if !acc.done {
		return nil, false, &retry.Failure{Err: errCut, Cause: retry.CauseCut, Retryable: true}
	}
	return acc.response(), false, nil
}

// classify turns an SDK error into a failure.
func classify(err error) *retry.Failure {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		status := apiErr.StatusCode
		typ := string(apiErr.Type())
		streamed := status >= 200 && status < 300 // an SSE error event
		if streamed {
			status = statusOfErrorType(typ)
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
			Retryable: retry.RetryableStatus(status),
		}
		if apiErr.Response != nil && !streamed {
			f.After = retry.After(apiErr.Response.Header, time.Now())
		}
		return f
	}
	return retry.Transport(err)
}
