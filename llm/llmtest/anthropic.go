package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/cadre-dev/cadre/llm"
)

// Delta chunk sizes, in bytes: small enough that every non-trivial text
// or tool input arrives in several pieces the client must join.
const (
	textChunk  = 16
	inputChunk = 8
)

// sseEvent is one server-sent event.
type sseEvent struct {
	name string // empty for OpenAI's data-only events
	data []byte
}

func (e sseEvent) bytes() []byte {
	var b bytes.Buffer
	if e.name != "" {
		b.WriteString("event: " + e.name + "\n")
	}
	b.WriteString("data: ")
	b.Write(e.data)
	b.WriteString("\n\n")
	return b.Bytes()
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// Only our own well-formed maps reach here.
		return []byte("{}")
	}
	return b
}

// maxPieces bounds how many deltas one block streams as: a long block
// comes in longer pieces, so a megabyte of tool input is not a hundred
// thousand events.
const maxPieces = 512

// chunks splits s into pieces of at most n bytes (more for a string
// longer than maxPieces pieces), on rune boundaries. An empty s gives one
// empty piece.
func chunks(s string, n int) []string {
	if s == "" {
		return []string{""}
	}
	n = max(n, (len(s)+maxPieces-1)/maxPieces)
	var out []string
	for len(s) > 0 {
		end := min(n, len(s))
		for end < len(s) && end > 0 && !isRuneStart(s[end]) {
			end--
		}
		if end == 0 {
			end = min(n, len(s))
			for end < len(s) && !isRuneStart(s[end]) {
				end++
			}
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

func anthropicUsage(u llm.Usage, output int64) map[string]any {
	return map[string]any{
		"input_tokens":                u.InputTokens,
		"cache_creation_input_tokens": u.CacheWriteTokens,
		"cache_read_input_tokens":     u.CacheReadTokens,
		"output_tokens":               output,
	}
}

// anthropicEvents renders the reply as a Messages stream.
func anthropicEvents(rp *reply) []sseEvent {
	ev := func(name string, v any) sseEvent { return sseEvent{name: name, data: mustJSON(v)} }
	out := []sseEvent{ev("message_start", map[string]any{
		"type": "message_start",
		"message": map[string]any{
			"id": rp.id, "type": "message", "role": "assistant", "model": rp.model,
			"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
			"usage": anthropicUsage(rp.usage, 1),
		},
	})}
	if rp.fault != nil && rp.fault.kind == faultStream {
		return append(out, ev("error", map[string]any{"type": "error", "error": map[string]any{"type": rp.fault.errType, "message": rp.fault.message}}))
	}
	out = append(out, ev("ping", map[string]any{"type": "ping"}))
	delta := func(i int, d map[string]any) sseEvent {
		return ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d})
	}
	for i, p := range rp.parts {
		var start map[string]any
		var deltas []sseEvent
		switch p.kind {
		case partText:
			start = map[string]any{"type": "text", "text": ""}
			for _, c := range p.citations {
				deltas = append(deltas, delta(i, map[string]any{"type": "citations_delta", "citation": json.RawMessage(c)}))
			}
			for _, c := range chunks(p.text, textChunk) {
				deltas = append(deltas, delta(i, map[string]any{"type": "text_delta", "text": c}))
			}
		case partThinking:
			start = map[string]any{"type": "thinking", "thinking": "", "signature": ""}
			for _, c := range chunks(p.text, textChunk) {
				deltas = append(deltas, delta(i, map[string]any{"type": "thinking_delta", "thinking": c}))
			}
			deltas = append(deltas, delta(i, map[string]any{"type": "signature_delta", "signature": p.signature}))
		case partRedacted:
			start = map[string]any{"type": "redacted_thinking", "data": p.text}
		case partToolUse, partServerToolUse:
			typ := "tool_use"
			if p.kind == partServerToolUse {
				typ = "server_tool_use"
			}
			start = map[string]any{"type": typ, "id": p.id, "name": p.name, "input": map[string]any{}}
			for _, c := range chunks(p.input, inputChunk) {
				deltas = append(deltas, delta(i, map[string]any{"type": "input_json_delta", "partial_json": c}))
			}
		case partWebSearchResult:
			start = webSearchResultJSON(p)
		}
		out = append(out, ev("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": start}))
		out = append(out, deltas...)
		out = append(out, ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": i}))
	}
	out = append(out,
		ev("message_delta", map[string]any{
			"type":  "message_delta",
			"delta": map[string]any{"stop_reason": rp.stop, "stop_sequence": nil},
			"usage": anthropicUsage(rp.usage, rp.usage.OutputTokens),
		}),
		ev("message_stop", map[string]any{"type": "message_stop"}),
	)
	return out
}

// anthropicBody renders the reply as a non-streamed Messages response.
// Tool input is spliced in verbatim, so a malformed input makes the body
// malformed, as documented on MalformedToolUse.
func anthropicBody(rp *reply) []byte {
	var content bytes.Buffer
	content.WriteByte('[')
	for i, p := range rp.parts {
		if i > 0 {
			content.WriteByte(',')
		}
		switch p.kind {
		case partText:
			if c := citationsJSON(p); c != nil {
				content.Write(mustJSON(map[string]any{"type": "text", "text": p.text, "citations": c}))
				break
			}
			content.Write(mustJSON(map[string]any{"type": "text", "text": p.text}))
		case partServerToolUse:
			fmt.Fprintf(&content, `{"type":"server_tool_use","id":%s,"name":%s,"input":%s}`, mustJSON(p.id), mustJSON(p.name), p.input)
		case partWebSearchResult:
			content.Write(mustJSON(webSearchResultJSON(p)))
		case partThinking:
			content.Write(mustJSON(map[string]any{"type": "thinking", "thinking": p.text, "signature": p.signature}))
		case partRedacted:
			content.Write(mustJSON(map[string]any{"type": "redacted_thinking", "data": p.text}))
		case partToolUse:
			fmt.Fprintf(&content, `{"type":"tool_use","id":%s,"name":%s,"input":%s}`, mustJSON(p.id), mustJSON(p.name), p.input)
		}
	}
	content.WriteByte(']')
	env := mustJSON(map[string]any{
		"id": rp.id, "type": "message", "role": "assistant", "model": rp.model,
		"content": "\x00content", "stop_reason": rp.stop, "stop_sequence": nil,
		"usage": anthropicUsage(rp.usage, rp.usage.OutputTokens),
	})
	return bytes.Replace(env, []byte(`"\u0000content"`), content.Bytes(), 1)
}

// writeAnthropic writes the reply and returns the HTTP status.
func writeAnthropic(w http.ResponseWriter, rp *reply) int {
	f := rp.fault
	if f != nil && (f.kind == faultHTTP || (f.kind == faultStream && !rp.stream)) {
		writeError(w, Anthropic, f, rp.seq)
		return f.status
	}
	w.Header().Set("request-id", fmt.Sprintf("req_llmtest_%d", rp.seq))
	if !rp.stream {
		body := anthropicBody(rp)
		if f != nil && f.kind == faultCut {
			cutBody(w, body)
		}
		writeJSON(w, http.StatusOK, body)
		return http.StatusOK
	}
	writeStream(w, anthropicEvents(rp), f != nil && f.kind == faultCut)
	return http.StatusOK
}

// writeStream writes events as text/event-stream, flushing each; with cut
// it writes the first half, then half of the next event, and drops the
// connection.
func writeStream(w http.ResponseWriter, events []sseEvent, cut bool) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	stopAt := len(events)
	if cut {
		stopAt = max(len(events)/2, 1)
	}
	for i, e := range events {
		b := e.bytes()
		if i == stopAt {
			_, _ = w.Write(b[:len(b)/2])
			if flusher != nil {
				flusher.Flush()
			}
			abort()
		}
		if _, err := w.Write(b); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
}

// cutBody writes half of a JSON body announced at its full length, then
// drops the connection.
func cutBody(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body[:len(body)/2])
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	abort()
}

// abort drops the connection without finishing the response. It panics
// with http.ErrAbortHandler, net/http's documented way to abort a handler:
// the server recovers it silently and closes the connection, so the client
// sees a truncated body.
func abort() { panic(http.ErrAbortHandler) }
