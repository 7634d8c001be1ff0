package llmtest

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/cadre-dev/cadre/llm"
)

// created is the fixed creation time of every OpenAI reply, so replies are
// byte-for-byte reproducible.
const created = 1735689600

// finishReason maps a stop reason to OpenAI's finish_reason.
func finishReason(r llm.StopReason) string {
	switch r {
	case llm.StopToolUse:
		return "tool_calls"
	case llm.StopMaxTokens, llm.StopContextLimit:
		return "length"
	case llm.StopRefusal:
		return "content_filter"
	}
	return "stop"
}

func openaiUsage(u llm.Usage) map[string]any {
	prompt := u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens
	return map[string]any{
		"prompt_tokens":             prompt,
		"completion_tokens":         u.OutputTokens,
		"total_tokens":              prompt + u.OutputTokens,
		"prompt_tokens_details":     map[string]any{"cached_tokens": u.CacheReadTokens},
		"completion_tokens_details": map[string]any{"reasoning_tokens": 0},
	}
}

// openaiEvents renders the reply as a Chat Completions stream.
func openaiEvents(rp *reply) []sseEvent {
	chunk := func(delta map[string]any, finish any) sseEvent {
		return sseEvent{data: mustJSON(map[string]any{
			"id": rp.id, "object": "chat.completion.chunk", "created": created, "model": rp.model,
			"system_fingerprint": "fp_llmtest",
			"choices":            []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}},
		})}
	}
	out := []sseEvent{chunk(map[string]any{"role": "assistant", "content": ""}, nil)}
	if rp.fault != nil && rp.fault.kind == faultStream {
		typ, code := openaiErrorType(rp.fault.status)
		return append(out, sseEvent{data: mustJSON(map[string]any{"error": map[string]any{"message": rp.fault.message, "type": typ, "code": code, "param": nil}})})
	}
	call := 0
	for _, p := range rp.parts {
		switch p.kind {
		case partThinking:
			for _, c := range chunks(p.text, textChunk) {
				out = append(out, chunk(map[string]any{"reasoning_content": c}, nil))
			}
		case partText:
			for _, c := range chunks(p.text, textChunk) {
				out = append(out, chunk(map[string]any{"content": c}, nil))
			}
		case partToolUse:
			out = append(out, chunk(map[string]any{"tool_calls": []any{map[string]any{
				"index": call, "id": p.id, "type": "function",
				"function": map[string]any{"name": p.name, "arguments": ""},
			}}}, nil))
			for _, c := range chunks(p.input, inputChunk) {
				out = append(out, chunk(map[string]any{"tool_calls": []any{map[string]any{
					"index": call, "function": map[string]any{"arguments": c},
				}}}, nil))
			}
			call++
		}
	}
	out = append(out, chunk(map[string]any{}, finishReason(rp.stop)))
	if rp.includeUsage {
		out = append(out, sseEvent{data: mustJSON(map[string]any{
			"id": rp.id, "object": "chat.completion.chunk", "created": created, "model": rp.model,
			"system_fingerprint": "fp_llmtest", "choices": []any{}, "usage": openaiUsage(rp.usage),
		})})
	}
	return append(out, sseEvent{data: []byte("[DONE]")})
}

// openaiBody renders the reply as a non-streamed Chat Completions response.
func openaiBody(rp *reply) []byte {
	var text, reasoning strings.Builder
	var calls []any
	for _, p := range rp.parts {
		switch p.kind {
		case partText:
			text.WriteString(p.text)
		case partThinking:
			reasoning.WriteString(p.text)
		case partToolUse:
			calls = append(calls, map[string]any{"id": p.id, "type": "function", "function": map[string]any{"name": p.name, "arguments": p.input}})
		}
	}
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
	if text.Len() > 0 {
		msg["content"] = text.String()
	}
	if reasoning.Len() > 0 {
		msg["reasoning_content"] = reasoning.String()
	}
	if len(calls) > 0 {
		msg["tool_calls"] = calls
	}
	return mustJSON(map[string]any{
		"id": rp.id, "object": "chat.completion", "created": created, "model": rp.model,
		"system_fingerprint": "fp_llmtest",
		"choices":            []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finishReason(rp.stop)}},
		"usage":              openaiUsage(rp.usage),
	})
}

// writeOpenAI writes the reply and returns the HTTP status.
func writeOpenAI(w http.ResponseWriter, rp *reply) int {
	f := rp.fault
	if f != nil && (f.kind == faultHTTP || (f.kind == faultStream && !rp.stream)) {
		writeError(w, OpenAI, f, rp.seq)
		return f.status
	}
	w.Header().Set("x-request-id", fmt.Sprintf("req_llmtest_%d", rp.seq))
	if !rp.stream {
		body := openaiBody(rp)
		if f != nil && f.kind == faultCut {
			cutBody(w, body)
		}
		writeJSON(w, http.StatusOK, body)
		return http.StatusOK
	}
	writeStream(w, openaiEvents(rp), f != nil && f.kind == faultCut)
	return http.StatusOK
}
