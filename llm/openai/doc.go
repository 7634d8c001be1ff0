// Package openai implements llm.Model over OpenAI-compatible Chat
// Completions (OpenAI, Ollama, vLLM, llama.cpp server, OpenRouter), using
// the official SDK (github.com/openai/openai-go/v3) for the HTTP and SSE
// work. This package only translates between the llm types and the SDK's
// types, and retries.
//
// # Translation
//
// The system prompt becomes a system message. User and assistant text go
// as message content (a string for one text block, text parts for several).
// Assistant tool_use blocks become tool_calls of type function, with the
// input JSON as arguments. Each tool_result block becomes a role "tool"
// message with its tool_call_id, in order; text that shares a user message
// with tool results follows them as a separate user message. Chat
// Completions has no is_error flag, so an error result's text is prefixed
// with "Error: ". Thinking and redacted thinking blocks are dropped: the
// format cannot carry them back. Request.Thinking and Request.NoCache are
// ignored (OpenAI caches prefixes by itself); Request.Effort, when set, is
// sent as reasoning_effort.
//
// Request.MaxTokens goes out as max_completion_tokens to api.openai.com
// (its reasoning models reject max_tokens) and as max_tokens to every other
// server, because that is the field Ollama, llama.cpp server, vLLM and
// OpenRouter all read; Config.MaxTokensField overrides the choice. A zero
// MaxTokens sends neither and lets the server decide.
//
// # Streaming
//
// Model.Stream sends one streaming request with stream_options.include_usage
// and yields llm.EventTextDelta and llm.EventToolUseStart events as the
// answer arrives, then exactly one llm.EventDone with the assembled
// llm.Response: a text block (if any) followed by the tool calls in index
// order. Tool-call deltas are assembled by index (id and name first,
// arguments in pieces, several calls interleaved). Reasoning text some
// servers stream (delta.reasoning_content or delta.reasoning) is yielded as
// llm.EventThinkingDelta but not kept in the message. finish_reason maps
// stop→end_turn, tool_calls→tool_use, length→max_tokens,
// content_filter→refusal. Usage: prompt_tokens minus cached (and cache-write)
// tokens → InputTokens, prompt_tokens_details.cached_tokens →
// CacheReadTokens, cache_write_tokens → CacheWriteTokens, completion_tokens →
// OutputTokens. Malformed argument JSON does not fail the stream: the block
// gets Input "{}" and InvalidInput holds the raw text. A consumer that stops
// ranging cancels the HTTP request.
//
// # Retries
//
// The SDK's retries are off; this package retries 408, 409, 429 (except
// insufficient_quota), 500, 502, 503, 504, 529, connection errors, an error
// object inside the stream (unless it names a client error), and a stream
// that ends before a finish_reason, with jittered exponential back-off that
// waits at least retry-after / retry-after-ms. Before each wait Stream
// yields an llm.EventRetry: the consumer MUST discard every delta received
// since the start or the previous EventRetry, as the next attempt starts
// over. Other statuses end the stream with *llm.APIError; running out of
// retries ends it with an error naming the last status and cause.
//
// # Bounds
//
// As in llm/anthropic: no headers within HeaderTimeout (default 5 min,
// since a local server may load the model first) is retried once; a stream
// silent for IdleTimeout is cut and retried at most twice; a retry-after
// over MaxRetryAfter ends the request at once; RetryBudget bounds the
// waits; a refused connection fails within seconds and an unknown host at
// once.
package openai
