// Package anthropic implements llm.Model over the Anthropic Messages API,
// using the official SDK (github.com/anthropics/anthropic-sdk-go/v2) for the
// HTTP and SSE work. This package only translates between the llm types and
// the SDK's types, places prompt-cache breakpoints, and retries.
//
// # Streaming
//
// Model.Stream sends one streaming Messages request and yields, in order,
// llm.EventTextDelta, llm.EventThinkingDelta and llm.EventToolUseStart events
// as the answer arrives, then exactly one llm.EventDone carrying the whole
// assembled llm.Response. Thinking blocks (text and signature) and redacted
// thinking blocks are kept byte for byte so the next request can send them
// back unchanged. A consumer that stops ranging cancels the HTTP request.
//
// The request body is the SDK's encoding of the parameters, the tools
// array rendered once per tool list (toolsraw.go) and "stream":true, sent
// in parts by an SDK middleware without being joined (body.go): the bytes
// are the ones the SDK would send, without its copy of the whole body.
//
// Tool input the model sends as malformed JSON does not fail the stream: the
// tool_use block gets Input "{}" and InvalidInput holds the raw text, so the
// agent loop can tell the model what went wrong.
//
// # Retries
//
// The SDK's own retries are switched off; this package retries itself so it
// can honour retry-after / retry-after-ms exactly and tell the consumer.
// Retried: HTTP 408, 409, 429, 500, 502, 503, 504, 529, connection errors, an
// SSE "error" event of type overloaded_error, api_error, rate_limit_error or
// timeout_error, and a stream that ends before message_stop. The whole
// attempt is redone after a jittered exponential back-off (at least the
// server's retry-after). Before waiting, Stream yields an llm.EventRetry:
// the consumer MUST discard every delta it received since the start of the
// stream or the previous EventRetry, because the next attempt starts the
// answer from scratch. Any other status ends the stream with *llm.APIError
// (status, error type and the API's message); running out of retries ends it
// with an error naming the last status and cause, wrapping *llm.APIError
// when there was one.
//
// # Bounds
//
// No request hangs: an attempt that gets no response headers within
// HeaderTimeout is retried once; a stream silent for IdleTimeout after its
// headers is cut and retried at most twice; a retry-after longer than
// MaxRetryAfter ends the request at once with a message naming the wait
// the server asked for; the waits between attempts of one request never
// add up to more than RetryBudget; a refused connection is retried twice
// within a second each and a host that does not resolve not at all. The
// bounds apply whatever HTTPClient is given. Each EventRetry names its
// cause (llm.Retry.Cause) and the retries that cause gets (MaxRetries).
//
// # Prompt caching
//
// PlaceBreakpoints decides where cache_control markers go: the last tool,
// the end of the system prompt (sent as a one-block text list so it can
// carry the marker) and the last cacheable block of each of the last two
// messages — never more than four. A Request.SystemPrefix is a system
// block of its own, marked in place of the last tool, so sub-agents of
// different types share the tools and that prefix. Everything else is rendered the same way
// on every turn, so the prefix the API hashed last turn is still there.
//
// # Thinking and effort
//
// Request.Thinking sends thinking {type: enabled, budget_tokens}; when
// Request.MaxTokens is 0 and the budget does not fit under the default, the
// default is raised above the budget. Request.Effort maps to
// output_config.effort (low, medium, high, xhigh, max); other values are an
// error.
package anthropic
