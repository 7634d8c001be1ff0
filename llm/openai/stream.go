package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/openai/openai-go/v3"

	"github.com/cadre-dev/cadre/llm"
)

// maxCalls bounds the tool calls one answer may hold, so a hostile server
// cannot make the client allocate without limit.
const maxCalls = 1024

// accumulator assembles one streamed answer from its chunks.
type accumulator struct {
	id, model string
	text      strings.Builder
	calls     map[int64]*call // by slot: the server's index, or a fresh one
	alias     map[int64]int64 // server index → slot, when an index was reused
	finish    string
	finished  bool // a finish_reason was seen
	usage     llm.Usage
	hasUsage  bool
}

// call is a tool call being assembled.
type call struct {
	index    int64
	id, name string
	fallback string // the id used when the server sends none
	args     strings.Builder
	// over counts the arguments' bytes once they passed
	// llm.MaxToolInputBytes; args is no longer held then.
	over    int64
	started bool // EventToolUseStart was yielded
}

// callID is the id of a call the server sent none for.
func (c *call) callID() string {
	if c.id != "" {
		return c.id
	}
	return c.fallback
}

// add folds one chunk in and returns the events to yield.
func (a *accumulator) add(ch sdk.ChatCompletionChunk) []llm.Event {
	if a.id == "" {
		a.id = ch.ID
	}
	if a.model == "" {
		a.model = ch.Model
	}
	if ch.JSON.Usage.Valid() {
		a.hasUsage = true
		u := ch.Usage
		cached := u.PromptTokensDetails.CachedTokens
		written := u.PromptTokensDetails.CacheWriteTokens
		a.usage = llm.Usage{
			InputTokens:      max(u.PromptTokens-cached-written, 0),
			OutputTokens:     u.CompletionTokens,
			CacheReadTokens:  cached,
			CacheWriteTokens: written,
		}
	}
	var evs []llm.Event
	for _, choice := range ch.Choices {
		if choice.Index != 0 {
			continue // only one answer is asked for
		}
		d := choice.Delta
		if s := reasoningText(d); s != "" {
			evs = append(evs, llm.Event{Kind: llm.EventThinkingDelta, Text: s})
		}
		for _, s := range []string{d.Content, d.Refusal} {
			if s != "" {
				a.text.WriteString(s)
				evs = append(evs, llm.Event{Kind: llm.EventTextDelta, Text: s})
			}
		}
		for _, tc := range d.ToolCalls {
			c := a.call(tc.Index, tc.ID)
			if c == nil {
				continue
			}
			if c.id == "" {
				c.id = tc.ID
			}
			if c.name == "" {
				c.name = tc.Function.Name
			}
			switch piece := tc.Function.Arguments; {
			case c.over > 0:
				c.over += int64(len(piece))
			case c.args.Len()+len(piece) > llm.MaxToolInputBytes:
				c.over = int64(c.args.Len() + len(piece))
				c.args = strings.Builder{}
			default:
				c.args.WriteString(piece)
			}
			if !c.started && c.name != "" {
				c.started = true
				evs = append(evs, llm.Event{Kind: llm.EventToolUseStart, ToolUse: &llm.Block{Type: llm.BlockToolUse, ID: c.callID(), Name: c.name}})
			}
		}
		if choice.FinishReason != "" {
			a.finish = choice.FinishReason
			a.finished = true
		}
	}
	return evs
}

// reasoningText returns the reasoning some servers stream beside the answer
// (vLLM and DeepSeek: reasoning_content; OpenRouter and Ollama: reasoning).
func reasoningText(d sdk.ChatCompletionChunkChoiceDelta) string {
	for _, k := range []string{"reasoning_content", "reasoning"} {
		f, ok := d.JSON.ExtraFields[k]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// call returns the call the server numbers i, creating it as needed. A
// chunk that reuses an index with a different id starts a new call: some
// servers send every call of an answer whole with index 0. Such a call is
// given the next free slot, so calls stay in arrival order.
func (a *accumulator) call(i int64, id string) *call {
	slot, ok := a.alias[i]
	if !ok {
		slot = i
	}
	c, ok := a.calls[slot]
	if ok && (id == "" || c.id == "" || c.id == id) {
		return c
	}
	if len(a.calls) >= maxCalls {
		return nil
	}
	if a.calls == nil {
		a.calls = make(map[int64]*call)
		a.alias = make(map[int64]int64)
	}
	if ok {
		// A new call reusing index i: move past every slot in use.
		for s := range a.calls {
			slot = max(slot, s+1)
		}
		a.alias[i] = slot
	}
	c = &call{index: slot, fallback: fmt.Sprintf("call_%d", slot)}
	if a.id != "" {
		c.fallback = fmt.Sprintf("call_%s_%d", a.id, slot)
	}
	a.calls[slot] = c
	return c
}

// response returns the assembled answer: text first, then the tool calls in
// index order.
func (a *accumulator) response() *llm.Response {
	msg := llm.Message{Role: llm.RoleAssistant}
	if a.text.Len() > 0 {
		msg.Content = append(msg.Content, llm.TextBlock(a.text.String()))
	}
	idx := make([]int64, 0, len(a.calls))
	for i := range a.calls {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	for _, i := range idx {
		c := a.calls[i]
		if c.over > 0 {
			msg.Content = append(msg.Content, llm.Block{Type: llm.BlockToolUse, ID: c.callID(), Name: c.name, Input: json.RawMessage(`{}`), InputOverLimit: c.over})
			continue
		}
		input, invalid := toolInput(c.args.String())
		msg.Content = append(msg.Content, llm.Block{Type: llm.BlockToolUse, ID: c.callID(), Name: c.name, Input: input, InvalidInput: invalid})
	}
	return &llm.Response{ID: a.id, Model: a.model, Message: msg, StopReason: stopReason(a.finish, len(a.calls) > 0), Usage: a.usage}
}

// stopReason maps a finish_reason. Some servers say "stop" after tool
// calls; an answer with tool calls always stops for tool use.
func stopReason(finish string, hasCalls bool) llm.StopReason {
	switch finish {
	case "length":
		return llm.StopMaxTokens
	case "content_filter":
		return llm.StopRefusal
	case "tool_calls", "function_call":
		return llm.StopToolUse
	}
	if hasCalls {
		return llm.StopToolUse
	}
	return llm.StopEndTurn
}

// toolInput returns the arguments as a valid JSON object; malformed or
// non-object arguments become {} with the raw text returned as invalid.
func toolInput(args string) (json.RawMessage, string) {
	raw := strings.TrimSpace(args)
	if raw == "" || raw == "null" {
		return json.RawMessage(`{}`), ""
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(raw)); err != nil || buf.Len() == 0 || buf.Bytes()[0] != '{' {
		return json.RawMessage(`{}`), args
	}
	return json.RawMessage(buf.Bytes()), ""
}
