package llmtest

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/cadre-dev/cadre/llm"
)

// Turn is one scripted model reply: content blocks to stream back, or a
// fault to inject instead. Build turns with [Text], [ToolUse], [ToolUses],
// [Thinking], the fault constructors ([RateLimited], [ServerError],
// [Overloaded], [HTTPError], [Cut], [StreamError]) and the With… methods,
// which return modified copies:
//
//	llmtest.Text("done").WithThinking("let me see", "sig-1").WithStop(llm.StopMaxTokens)
//
// A zero Turn is not a reply; a [ScriptFunc] returning one counts as an
// exhausted script.
type Turn struct {
	parts []part
	stop  llm.StopReason
	usage *llm.Usage
	delay time.Duration
	fault *fault
}

// partKind names what a part of a reply is.
type partKind int

const (
	partText partKind = iota + 1
	partToolUse
	partThinking
	partRedacted
	partServerToolUse
	partWebSearchResult
)

// part is one content block of a reply before ids are assigned.
type part struct {
	kind      partKind
	text      string // text, thinking text, or redacted data
	signature string
	name      string
	id        string // tool use id; assigned by the server when empty
	input     string // tool input JSON text (possibly malformed on purpose)
	// citations are the raw JSON citations of a text part.
	citations []string
}

// faultKind names an injected failure.
type faultKind int

const (
	faultHTTP   faultKind = iota + 1 // an HTTP error status with a JSON error body
	faultCut                         // the connection drops in the middle of an event
	faultStream                      // a 200 stream that carries an error event
)

// fault is an injected failure of one request.
type fault struct {
	kind       faultKind
	status     int
	errType    string
	message    string
	retryAfter time.Duration
	hasRetry   bool
}

// Call is one tool call of a [ToolUses] turn. ID is optional; the server
// assigns a deterministic one when it is empty.
type Call struct {
	ID    string
	Name  string
	Input any
}

// Text returns a turn answering with one text block.
func Text(s string) Turn { return Turn{}.WithText(s) }

// ToolUse returns a turn that calls one tool. Input is marshalled to JSON
// (a json.RawMessage or []byte is used verbatim, a string must hold JSON);
// an input that cannot be marshalled becomes {}. The tool use id is
// assigned by the server: "toolu_<key hash>_<n>" on the Anthropic protocol,
// "call_<key hash>_<n>" on the OpenAI one, where n counts the tool uses the
// key has been given, from 1 (see [ToolUseID]).
func ToolUse(name string, input any) Turn { return Turn{}.WithToolUse(name, input) }

// ToolUses returns a turn that calls several tools at once (parallel tool
// use), in the given order.
func ToolUses(calls ...Call) Turn {
	var t Turn
	for _, c := range calls {
		t.parts = append(t.parts, part{kind: partToolUse, name: c.Name, id: c.ID, input: marshalInput(c.Input)})
	}
	return t
}

// MalformedToolUse returns a turn that calls a tool with raw, typically
// invalid, input JSON such as `{"path": "a.go"`. Streamed, the pieces of
// input_json_delta (Anthropic) or of function.arguments (OpenAI) join to
// exactly raw. In a non-streamed Anthropic reply the raw text is spliced
// in as the input value, so the body itself is malformed JSON; in a
// non-streamed OpenAI reply it is the arguments string.
func MalformedToolUse(name, raw string) Turn {
	return Turn{parts: []part{{kind: partToolUse, name: name, input: raw}}}
}

// Thinking returns a turn holding one thinking block with its signature.
// Add the answer with WithText or WithToolUse.
func Thinking(text, signature string) Turn { return Turn{}.WithThinking(text, signature) }

// WithText returns t with a text block appended.
func (t Turn) WithText(s string) Turn {
	t.parts = append(clone(t.parts), part{kind: partText, text: s})
	return t
}

// WithToolUse returns t with a tool use appended (see [ToolUse]).
func (t Turn) WithToolUse(name string, input any) Turn {
	t.parts = append(clone(t.parts), part{kind: partToolUse, name: name, input: marshalInput(input)})
	return t
}

// WithThinking returns t with a thinking block (text and signature) placed
// after any thinking blocks already there and before the other content.
// On the OpenAI protocol thinking travels as delta.reasoning_content (the
// form vLLM, DeepSeek and OpenRouter use) and the signature is dropped.
func (t Turn) WithThinking(text, signature string) Turn {
	return t.insertThinking(part{kind: partThinking, text: text, signature: signature})
}

// WithRedactedThinking returns t with a redacted_thinking block holding
// data, placed like WithThinking. The OpenAI protocol omits it.
func (t Turn) WithRedactedThinking(data string) Turn {
	return t.insertThinking(part{kind: partRedacted, text: data})
}

func (t Turn) insertThinking(p part) Turn {
	i := 0
	for i < len(t.parts) && (t.parts[i].kind == partThinking || t.parts[i].kind == partRedacted) {
		i++
	}
	parts := make([]part, 0, len(t.parts)+1)
	parts = append(parts, t.parts[:i]...)
	parts = append(parts, p)
	t.parts = append(parts, t.parts[i:]...)
	return t
}

// WithStop returns t with its stop reason overridden. By default a turn
// with a tool use stops with tool_use and any other with end_turn. On the
// OpenAI protocol the reason maps to a finish_reason (tool_use→tool_calls,
// max_tokens→length, refusal→content_filter, others→stop).
func (t Turn) WithStop(r llm.StopReason) Turn {
	t.stop = r
	return t
}

// WithUsage returns t reporting exactly u instead of the computed usage
// (see the package doc for how usage is computed).
func (t Turn) WithUsage(u llm.Usage) Turn {
	t.usage = &u
	return t
}

// WithDelay returns t answering only after d (on top of [WithLatency]).
// The wait ends early when the client goes away or the server closes.
func (t Turn) WithDelay(d time.Duration) Turn {
	t.delay = d
	return t
}

// WithCut returns t streaming normally up to the middle of its content,
// then dropping the connection in the middle of an SSE event. The request
// fails on the client with an unexpected EOF. See also [Cut].
func (t Turn) WithCut() Turn {
	t.fault = &fault{kind: faultCut}
	return t
}

// WithRetryAfter returns t, an HTTP error fault, sending retry-after and
// retry-after-ms headers set from d; it does nothing to other turns.
func (t Turn) WithRetryAfter(d time.Duration) Turn {
	if t.fault == nil || t.fault.kind != faultHTTP {
		return t
	}
	f := *t.fault
	f.retryAfter, f.hasRetry = d, true
	t.fault = &f
	return t
}

// RateLimited returns a fault turn answering HTTP 429 with retry-after
// (whole seconds, rounded up) and retry-after-ms headers set from after.
func RateLimited(after time.Duration) Turn {
	return Turn{fault: &fault{kind: faultHTTP, status: 429, message: "llmtest: rate limited", retryAfter: after, hasRetry: true}}
}

// ServerError returns a fault turn answering status (500, 502, 503, 504,
// or any other 5xx) with an error body in the protocol's shape.
func ServerError(status int, message string) Turn {
	return Turn{fault: &fault{kind: faultHTTP, status: status, message: message}}
}

// Overloaded returns a fault turn answering HTTP 529 with an
// overloaded_error body.
func Overloaded() Turn {
	return Turn{fault: &fault{kind: faultHTTP, status: 529, message: "Overloaded"}}
}

// HTTPError returns a fault turn answering any status, e.g. 400, 401, 403
// or 404, with message in the protocol's error body. The error type is the
// provider's usual one for the status.
func HTTPError(status int, message string) Turn {
	return Turn{fault: &fault{kind: faultHTTP, status: status, message: message}}
}

// Cut returns a fault turn whose reply starts ("partial answer" text) and
// then drops the connection in the middle of an SSE event (or of the JSON
// body, for a non-streaming request).
func Cut() Turn { return Text("partial answer that never finishes").WithCut() }

// StreamError returns a fault turn that answers 200, starts the stream and
// then sends an error event (Anthropic `event: error`, OpenAI a data chunk
// with an "error" object) of the given type, e.g. "overloaded_error". A
// non-streaming request gets the matching HTTP error status instead.
func StreamError(errType, message string) Turn {
	return Turn{fault: &fault{kind: faultStream, errType: errType, message: message, status: statusForType(errType)}}
}

// IsFault reports whether t injects a failure instead of a normal reply.
func (t Turn) IsFault() bool { return t.fault != nil }

func (t Turn) isZero() bool { return len(t.parts) == 0 && t.fault == nil }

// stopReason is the stop reason the turn reports.
func (t Turn) stopReason() llm.StopReason {
	if t.stop != "" {
		return t.stop
	}
	for _, p := range t.parts {
		if p.kind == partToolUse {
			return llm.StopToolUse
		}
	}
	return llm.StopEndTurn
}

// outputTokens estimates the tokens of the reply: its bytes / 4, at least 1.
func (t Turn) outputTokens() int64 {
	n := 0
	for _, p := range t.parts {
		n += len(p.text) + len(p.signature) + len(p.name) + len(p.input)
	}
	return max(int64(n/4), 1)
}

func clone(ps []part) []part { return append([]part(nil), ps...) }

// marshalInput renders a tool input as JSON text.
func marshalInput(v any) string {
	switch x := v.(type) {
	case nil:
		return "{}"
	case json.RawMessage:
		return string(x)
	case []byte:
		return string(x)
	case string:
		return x
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "{}"
	}
	return string(b)
}

// statusForType maps an Anthropic error type to its HTTP status.
func statusForType(errType string) int {
	switch errType {
	case "invalid_request_error":
		return 400
	case "authentication_error":
		return 401
	case "permission_error":
		return 403
	case "not_found_error":
		return 404
	case "request_too_large":
		return 413
	case "rate_limit_error":
		return 429
	case "overloaded_error":
		return 529
	case "timeout_error":
		return 504
	}
	return 500
}

// anthropicErrorType maps an HTTP status to Anthropic's error type.
func anthropicErrorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 402:
		return "billing_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 504:
		return "timeout_error"
	case 529:
		return "overloaded_error"
	}
	if status >= 400 && status < 500 {
		return "invalid_request_error"
	}
	return "api_error"
}

// openaiErrorType maps an HTTP status to the OpenAI error type and code.
func openaiErrorType(status int) (typ, code string) {
	switch status {
	case 400:
		return "invalid_request_error", "invalid_request"
	case 401:
		return "invalid_request_error", "invalid_api_key"
	case 403:
		return "permission_error", "unsupported_country_region_territory"
	case 404:
		return "invalid_request_error", "model_not_found"
	case 413:
		return "invalid_request_error", "request_too_large"
	case 429:
		return "requests", "rate_limit_exceeded"
	case 529:
		return "server_error", "overloaded"
	}
	if status >= 400 && status < 500 {
		return "invalid_request_error", fmt.Sprintf("http_%d", status)
	}
	return "server_error", "server_error"
}

// ToolUseID returns the id the server gives the n-th (from 1) tool use
// answered to key on the Anthropic protocol; [CallID] is the OpenAI form.
func ToolUseID(key string, n int) string { return fmt.Sprintf("toolu_%s_%d", keyHash(key), n) }

// CallID returns the id the server gives the n-th (from 1) tool call
// answered to key on the OpenAI protocol.
func CallID(key string, n int) string { return fmt.Sprintf("call_%s_%d", keyHash(key), n) }
