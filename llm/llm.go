// Package llm holds the provider-neutral vocabulary every agent speaks:
// messages made of content blocks, tool specifications, the streamed events
// of one model response, and token usage. Provider adapters (llm/anthropic,
// llm/openai) translate between these types and a wire format; the agent loop
// and the tools only ever see these types.
package llm

import (
	"context"
	"encoding/json"
	"iter"
	"strconv"
	"time"
)

// Role is who authored a message.
type Role string

// The two roles of a conversation. System text travels in Request.System.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// BlockType names the kind of a content block.
type BlockType string

// Content block kinds.
const (
	BlockText             BlockType = "text"
	BlockToolUse          BlockType = "tool_use"
	BlockToolResult       BlockType = "tool_result"
	BlockThinking         BlockType = "thinking"
	BlockRedactedThinking BlockType = "redacted_thinking"
	// BlockImage is an image (MediaType, base64 Data); it appears in a
	// tool_result's Content (an MCP tool's picture, for example).
	BlockImage BlockType = "image"
	// BlockServerToolUse is a call of a tool the provider runs itself
	// (Anthropic's web search): ID, Name and Input, like tool_use, but the
	// loop never runs it and no tool_result answers it.
	BlockServerToolUse BlockType = "server_tool_use"
	// BlockWebSearchResult is the provider's answer to a web search server
	// tool use. Raw holds the block exactly as the provider sent it.
	BlockWebSearchResult BlockType = "web_search_tool_result"
)

// Block is one piece of message content. Which fields are set depends on
// Type; the JSON form is the one transcripts store. Thinking blocks are kept
// exactly as the provider sent them (text and signature, or redacted data) so
// they can be sent back unchanged on the next turn.
type Block struct {
	Type BlockType `json:"type"`

	// Text is the text of a text block.
	Text string `json:"text,omitempty"`

	// ID, Name and Input describe a tool_use block. Input is always valid
	// JSON; when the model produced malformed input, Input is "{}" and
	// InvalidInput holds what the model sent, so the loop can tell the model.
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	InvalidInput string          `json:"invalid_input,omitempty"`
	// InputOverLimit is set when the streamed input passed
	// MaxToolInputBytes: the adapter stopped holding it (Input is "{}")
	// and counts here how many bytes came, so the loop can tell the model.
	InputOverLimit int64 `json:"input_over_limit,omitempty"`

	// ToolUseID, Content and IsError describe a tool_result block. Content
	// holds text and image blocks.
	ToolUseID string  `json:"tool_use_id,omitempty"`
	Content   []Block `json:"content,omitempty"`
	IsError   bool    `json:"is_error,omitempty"`

	// Thinking and Signature describe a thinking block; Data a redacted one.
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	Data      string `json:"data,omitempty"`
	// MediaType ("image/png") and Data (base64) describe an image block.
	MediaType string `json:"media_type,omitempty"`

	// Raw is the provider's own JSON of a block this runtime passes
	// through without interpreting (web_search_tool_result). Adapters send
	// it back byte for byte, so the provider sees its own history.
	Raw json.RawMessage `json:"raw,omitempty"`
	// Citations of a text block, as the provider sent them (a JSON array),
	// kept so the block goes back unchanged.
	Citations json.RawMessage `json:"citations,omitempty"`
}

// ImageBlock returns an image block of base64 data.
func ImageBlock(mediaType, base64Data string) Block {
	return Block{Type: BlockImage, MediaType: mediaType, Data: base64Data}
}

// TextBlock returns a text block.
func TextBlock(s string) Block { return Block{Type: BlockText, Text: s} }

// ToolResultBlock returns a tool_result block answering the tool use id.
func ToolResultBlock(toolUseID, text string, isError bool) Block {
	return Block{Type: BlockToolResult, ToolUseID: toolUseID, Content: []Block{TextBlock(text)}, IsError: isError}
}

// ResultText joins the text of a tool_result block's content.
func (b Block) ResultText() string {
	var s string
	for _, c := range b.Content {
		s += c.Text
	}
	return s
}

// Message is one turn of the conversation.
type Message struct {
	Role    Role    `json:"role"`
	Content []Block `json:"content"`
}

// MaxToolInputBytes bounds the input of one tool call as it streams in:
// past it, adapters stop holding the input and mark the block with
// InputOverLimit instead.
const MaxToolInputBytes = 1 << 20

// UserText returns a user message holding one text block.
func UserText(s string) Message { return Message{Role: RoleUser, Content: []Block{TextBlock(s)}} }

// Text joins the text blocks of the message.
func (m Message) Text() string {
	var s string
	for _, b := range m.Content {
		if b.Type == BlockText {
			s += b.Text
		}
	}
	return s
}

// ToolUses returns the tool_use blocks of the message, in order.
func (m Message) ToolUses() []Block {
	var out []Block
	for _, b := range m.Content {
		if b.Type == BlockToolUse {
			out = append(out, b)
		}
	}
	return out
}

// ServerTool is a tool the provider runs on its side during one request;
// its calls and results come back as server_tool_use and result blocks in
// the answer. Adapters of providers without such a tool refuse a request
// that asks for it.
type ServerTool struct {
	// Type is the provider's versioned tool type ("web_search_20250305").
	Type string
	// Name is the name the model calls it by ("web_search").
	Name string
	// MaxUses bounds the calls in one request; 0 leaves it to the provider.
	MaxUses int
	// AllowedDomains and BlockedDomains restrict a web search's results.
	AllowedDomains []string
	BlockedDomains []string
}

// WebSearchServerTool is the type of Anthropic's server-side web search.
const WebSearchServerTool = "web_search_20250305"

// ToolSpec describes a tool to the model. InputSchema is a JSON Schema
// object, rendered once and reused so request bytes stay stable.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// Thinking configures extended thinking. A zero BudgetTokens disables it.
type Thinking struct {
	BudgetTokens int64 `json:"budget_tokens"`
}

// Request is one call to a model.
type Request struct {
	// Model is the provider's model id.
	Model string
	// System is the system prompt, sent verbatim.
	System string
	// SystemPrefix, when set, is a leading part of the system prompt that
	// requests of other agents share (sibling sub-agents of different
	// types): the model reads SystemPrefix, a blank line, then System.
	// Adapters send it as a part of its own — a system block ending a
	// cached prefix (Anthropic), a system message of its own (OpenAI) — so
	// the prefix it closes is one cache entry whatever follows it.
	SystemPrefix string
	// Tools are offered in this order.
	Tools []ToolSpec
	// SharedTools, when above 0 and below len(Tools), is how many leading
	// Tools requests of other agents send with the same bytes (a
	// sub-agent is offered its parent's tools in the parent's order; the
	// main agent's own tools come after the shared ones). Adapters that
	// place cache markers close that prefix with a marker of its own, so
	// a child's first request reads it from the cache the parent wrote.
	SharedTools int
	// ServerTools are run by the provider itself, after Tools.
	ServerTools []ServerTool
	// Messages is the conversation so far; earlier messages are never
	// rewritten, so cached prefixes stay valid.
	Messages []Message
	// MaxTokens bounds the answer; 0 lets the adapter choose.
	MaxTokens int64
	// Thinking enables extended thinking where the provider supports it.
	Thinking *Thinking
	// Effort is an optional reasoning-effort hint (low, medium, high,
	// xhigh, max); empty leaves the provider's default.
	Effort Effort
	// NoCache disables prompt-cache breakpoints (providers that cache
	// automatically ignore it).
	NoCache bool
	// CacheHints mark blocks that end a prefix shared with other requests
	// (see CacheHint). Adapters that place cache markers put one on each
	// ahead of their own choices; providers that cache automatically
	// ignore them.
	CacheHints []CacheHint
}

// StopReason says why the model stopped.
type StopReason string

// Stop reasons, with Anthropic's names; adapters map others onto them.
const (
	StopEndTurn      StopReason = "end_turn"
	StopToolUse      StopReason = "tool_use"
	StopMaxTokens    StopReason = "max_tokens"
	StopSequence     StopReason = "stop_sequence"
	StopRefusal      StopReason = "refusal"
	StopPauseTurn    StopReason = "pause_turn"
	StopContextLimit StopReason = "model_context_window_exceeded"
)

// Usage counts tokens. InputTokens excludes cached tokens.
type Usage struct {
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	CacheReadTokens  int64 `json:"cache_read_input_tokens"`
	CacheWriteTokens int64 `json:"cache_creation_input_tokens"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:      u.InputTokens + v.InputTokens,
		OutputTokens:     u.OutputTokens + v.OutputTokens,
		CacheReadTokens:  u.CacheReadTokens + v.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens,
	}
}

// Total is every input and output token counted.
func (u Usage) Total() int64 {
	return u.InputTokens + u.OutputTokens + u.CacheReadTokens + u.CacheWriteTokens
}

// EventKind names a stream event.
type EventKind int

// Stream event kinds.
const (
	// EventTextDelta carries Text, a piece of answer text.
	EventTextDelta EventKind = iota + 1
	// EventThinkingDelta carries Text, a piece of thinking.
	EventThinkingDelta
	// EventToolUseStart carries ToolUse with ID and Name (input follows).
	EventToolUseStart
	// EventRetry carries Retry: the request failed and will be tried again.
	EventRetry
	// EventDone carries Response, the whole assembled answer. It is last.
	EventDone
)

// Event is one item of a model's stream.
type Event struct {
	Kind     EventKind
	Text     string
	ToolUse  *Block
	Retry    *Retry
	Response *Response
}

// Retry describes a failed attempt that will be retried.
type Retry struct {
	Attempt int
	// MaxRetries is how many retries a failure of this cause gets at most.
	MaxRetries int
	Status     int           // HTTP status, 0 for a cut stream or a connection error
	Wait       time.Duration // the delay before the next attempt
	// Cause names why the attempt failed.
	Cause RetryCause
	Err   string
}

// Effort is a reasoning-effort level (Request.Effort).
type Effort string

// Effort levels, lowest first.
const (
	EffortLow    Effort = "low"
	EffortMedium Effort = "medium"
	EffortHigh   Effort = "high"
	EffortXHigh  Effort = "xhigh"
	EffortMax    Effort = "max"
)

// Efforts lists every effort level, lowest first.
func Efforts() []Effort {
	return []Effort{EffortLow, EffortMedium, EffortHigh, EffortXHigh, EffortMax}
}

// Valid reports whether e is one of the effort levels (empty is not).
func (e Effort) Valid() bool {
	switch e {
	case EffortLow, EffortMedium, EffortHigh, EffortXHigh, EffortMax:
		return true
	}
	return false
}

// RetryCause names why a model request's attempt failed (Retry.Cause).
type RetryCause string

// Retry causes.
const (
	// RetryStatus: an HTTP error status or an error event in the stream.
	RetryStatus RetryCause = "status"
	// RetryCut: the stream ended before the answer was complete.
	RetryCut RetryCause = "cut"
	// RetryStalled: the stream went silent past the idle timeout.
	RetryStalled RetryCause = "stalled"
	// RetryNoHeaders: the server sent no headers within the header timeout.
	RetryNoHeaders RetryCause = "no_headers"
	// RetryRefused: the connection was refused (nothing listens there).
	RetryRefused RetryCause = "connection_refused"
	// RetryDNS: the host name does not resolve.
	RetryDNS RetryCause = "dns"
	// RetryNetwork: any other transport error (reset, EOF, TLS).
	RetryNetwork RetryCause = "network"
	// RetryFallback: the model was overloaded and the request goes to the
	// fallback model (llm.WithFallback).
	RetryFallback RetryCause = "fallback"
)

// Response is a complete model answer.
type Response struct {
	ID         string
	Model      string
	Message    Message
	StopReason StopReason
	Usage      Usage
}

// Model is a language model behind some provider. Stream sends the request
// and yields events as they arrive, ending with EventDone; an error ends the
// stream. A consumer that stops ranging cancels the request.
type Model interface {
	Stream(ctx context.Context, req *Request) iter.Seq2[Event, error]
}

// APIError is a provider error that will not be retried.
type APIError struct {
	Status  int
	Type    string
	Message string
}

// Error names the status, the error type and the API's message.
func (e *APIError) Error() string {
	if e.Type != "" {
		return "model API error " + itoa(e.Status) + " " + e.Type + ": " + e.Message
	}
	return "model API error " + itoa(e.Status) + ": " + e.Message
}

func itoa(n int) string { return strconv.Itoa(n) }
