// Package llmtest is a scripted model server for testing agents without a
// real model. It is a real HTTP server on 127.0.0.1 speaking the wire
// formats of the Anthropic Messages API and the OpenAI Chat Completions
// API, so the official SDK clients talk to it unchanged, through their base
// URL:
//
//	s := llmtest.NewServer()
//	defer s.Close()
//	client := anthropic.NewClient(option.WithBaseURL(s.URL()), option.WithAPIKey("test"))
//	oai := openai.NewClient(openaioption.WithBaseURL(s.URL()+"/v1"), openaioption.WithAPIKey("test"))
//
// # Endpoints
//
// POST /v1/messages (streamed as SSE or plain JSON, per the request's
// "stream"), POST /v1/messages/count_tokens, POST /v1/chat/completions
// (streamed or JSON; a final usage chunk when
// stream_options.include_usage is set), GET /v1/models. Streamed text and
// thinking arrive in deltas of at most 16 bytes and tool input in deltas of
// at most 8 bytes, so clients really have to assemble them. Anything else gets
// a JSON 404. Bodies are size-limited and the server stops answering past a
// request cap ([WithMaxBodyBytes], [WithMaxRequests]).
//
// # Scripts
//
// Replies come from turn scripts keyed by which agent is asking:
// [Server.Script] gives a key its turns. A request belongs to the longest
// key that occurs in the text of its first user message (which, for a
// sub-agent, is its prompt), or to the default key "" when none occurs.
// The n-th request of a key is answered by the key's n-th turn, so every
// agent of a tree follows its own script however their requests
// interleave. [Server.ScriptFunc] computes replies from the request
// instead, e.g. to echo a tool result, or to tell apart forks of one
// parent, which share their first message ([Request.LastUserText]). A request finding its script
// exhausted is answered with the text "llmtest: script for key … exhausted"
// and records a violation, so the test fails loudly.
//
// Turns are built with [Text], [ToolUse], [ToolUses], [Thinking] and the
// With… methods (thinking and redacted thinking before the answer, a stop
// reason, usage, a delay). Tool use ids are deterministic: see [ToolUseID]
// and [CallID]. Faults are turns too: [RateLimited] (429 with retry-after
// and retry-after-ms), [ServerError] (5xx), [Overloaded] (529),
// [HTTPError] (any status; [Turn.WithRetryAfter] adds retry headers),
// [Cut] and [Turn.WithCut] (the connection drops
// in the middle of an SSE event), [StreamError] (an error event inside a
// 200 stream) and [MalformedToolUse] (tool input that is not valid JSON).
// A fault turn is used by one request; the retry that follows gets the next
// turn. Error bodies have each provider's shape: Anthropic
// {"type":"error","error":{"type":…,"message":…}}, OpenAI
// {"error":{"message":…,"type":…,"code":…}}.
//
// # Capture and invariants
//
// Every request is captured ([Server.Requests], [Server.RequestsFor]) with
// its raw body and headers, the key and turn it matched, its timing and a
// provider-neutral view in the llm package's types. Every model request is
// also checked, and what is wrong is recorded as a violation
// ([Server.Violations], [Server.Check]): each tool_result (or OpenAI tool
// message) answers a tool use of the immediately preceding assistant
// message and each tool use is answered in the next message; Anthropic
// roles alternate starting with user; no empty text blocks; at most four
// cache_control breakpoints; tool names are unique; tool input in the
// history is a JSON object.
//
// # Prompt cache accounting
//
// Usage is computed honestly enough to test cache-friendly request
// building. A token is 4 bytes: every count is a byte length divided by 4.
// The request is cut into blocks in provider order — tools, system blocks,
// then every content block of every message — and each block is
// canonicalized (re-marshalled with sorted keys and cache_control removed,
// tagged with its role). A prefix is identified by the SHA-256 of the model
// id and its blocks.
//
// Anthropic: a request first reads the longest prefix written by an
// earlier request that ends at one of its breakpoints or at one of the 20
// block boundaries before a breakpoint (the API's lookback window; a
// top-level cache_control puts a breakpoint on the last block); then
// the prefix at each of its breakpoints is written, if it reaches
// [WithMinCacheTokens]. It reports cache_read_input_tokens (the prefix
// read), cache_creation_input_tokens (the tokens up to its last written
// breakpoint, less the read) and input_tokens (the rest), both in
// message_start and in message_delta. OpenAI: caching is automatic, every
// message boundary is a prefix written and read, and the read is reported
// as usage.prompt_tokens_details.cached_tokens. A request's figures are kept
// on its captured [Request.Usage]. Output tokens are the reply's bytes / 4,
// at least 1; [Turn.WithUsage] overrides everything.
//
// Fault turns that answer an HTTP error neither read nor write the cache.
//
// # Adapter suite
//
// [RunAdapterSuite] is the conformance suite of an llm.Model adapter over
// HTTP: the bounds that keep a request from hanging (a stalled stream,
// withheld headers, a refused connection, an unknown host, a retry-after
// past the cap, a cancelled back-off) and an oversized tool input. Both
// of cadre's adapters run it; an adapter of another provider speaking one
// of the two wire protocols can too:
//
//	func TestAdapterSuite(t *testing.T) {
//		llmtest.RunAdapterSuite(t, func(t *testing.T, o llmtest.AdapterOptions) llm.Model {
//			m, err := myadapter.New(myadapter.Config{BaseURL: o.URL, HTTPClient: o.HTTPClient, ...})
//			if err != nil {
//				t.Fatal(err)
//			}
//			return m
//		}, llmtest.OpenAI)
//	}
package llmtest
