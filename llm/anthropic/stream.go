package anthropic

import (
	"bytes"
	"encoding/json"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/cadre-dev/cadre/llm"
)

// accumulator assembles one streamed message from its events.
type accumulator struct {
	id     string
	model  string
	stop   llm.StopReason
	usage  llm.Usage
	blocks []*partial
	done   bool // message_stop seen
}

// partial is a content block being assembled.
type partial struct {
	block llm.Block
	text  strings.Builder // text, thinking, or tool input JSON
	sig   strings.Builder
	// input is the tool input that came with content_block_start.
	input string
	// citations are the raw citations of a text block, in order.
	citations []json.RawMessage
	// over counts the tool input's bytes once they passed
	// llm.MaxToolInputBytes; the text is no longer held then.
	over int64
}

// add folds one event in and returns the event to yield, if any.
func (a *accumulator) add(ev sdk.MessageStreamEventUnion) (llm.Event, bool) {
	switch ev.Type {
	case "message_start":
		a.id = ev.Message.ID
		a.model = string(ev.Message.Model)
		u := ev.Message.Usage
		a.usage = llm.Usage{
			InputTokens:      u.InputTokens,
			OutputTokens:     u.OutputTokens,
			CacheReadTokens:  u.CacheReadInputTokens,
			CacheWriteTokens: u.CacheCreationInputTokens,
		}
	case "content_block_start":
		p := a.at(ev.Index)
		if p == nil {
			return llm.Event{}, false
		}
		cb := ev.ContentBlock
		switch cb.Type {
		case "text":
			p.block.Type = llm.BlockText
			p.text.WriteString(cb.Text)
			if cb.Text != "" {
				return llm.Event{Kind: llm.EventTextDelta, Text: cb.Text}, true
			}
		case "thinking":
			p.block.Type = llm.BlockThinking
			p.text.WriteString(cb.Thinking)
			p.sig.WriteString(cb.Signature)
			if cb.Thinking != "" {
				return llm.Event{Kind: llm.EventThinkingDelta, Text: cb.Thinking}, true
			}
		case "redacted_thinking":
			p.block.Type = llm.BlockRedactedThinking
			p.block.Data = cb.Data
		case "tool_use":
			p.block.Type = llm.BlockToolUse
			p.block.ID = cb.ID
			p.block.Name = cb.Name
			p.input = cb.JSON.Input.Raw()
			b := llm.Block{Type: llm.BlockToolUse, ID: cb.ID, Name: cb.Name}
			return llm.Event{Kind: llm.EventToolUseStart, ToolUse: &b}, true
		case "server_tool_use":
			p.block.Type = llm.BlockServerToolUse
			p.block.ID = cb.ID
			p.block.Name = cb.Name
			p.input = cb.JSON.Input.Raw()
		case "web_search_tool_result":
			p.block.Type = llm.BlockWebSearchResult
			p.block.ToolUseID = cb.ToolUseID
			p.block.Raw = json.RawMessage(cb.RawJSON())
		default:
			// Other kinds (server tools this runtime does not offer) are
			// left out of the assembled message.
			p.block.Type = ""
		}
	case "content_block_delta":
		p := a.at(ev.Index)
		if p == nil {
			return llm.Event{}, false
		}
		d := ev.Delta
		switch d.Type {
		case "text_delta":
			p.text.WriteString(d.Text)
			if d.Text != "" {
				return llm.Event{Kind: llm.EventTextDelta, Text: d.Text}, true
			}
		case "thinking_delta":
			p.text.WriteString(d.Thinking)
			if d.Thinking != "" {
				return llm.Event{Kind: llm.EventThinkingDelta, Text: d.Thinking}, true
			}
		case "signature_delta":
			p.sig.WriteString(d.Signature)
		case "input_json_delta":
			switch {
			case p.over > 0:
				p.over += int64(len(d.PartialJSON))
			case p.text.Len()+len(d.PartialJSON) > llm.MaxToolInputBytes:
				p.over = int64(p.text.Len() + len(d.PartialJSON))
				p.text = strings.Builder{}
			default:
				p.text.WriteString(d.PartialJSON)
			}
		case "citations_delta":
			if c := d.JSON.Citation.Raw(); c != "" {
				p.citations = append(p.citations, json.RawMessage(c))
			}
		}
	case "message_delta":
		if ev.Delta.StopReason != "" {
			a.stop = llm.StopReason(ev.Delta.StopReason)
		}
		u := ev.Usage
		if u.OutputTokens > 0 {
			a.usage.OutputTokens = u.OutputTokens
		}
		if u.InputTokens > 0 {
			a.usage.InputTokens = u.InputTokens
		}
		if u.CacheReadInputTokens > 0 {
			a.usage.CacheReadTokens = u.CacheReadInputTokens
		}
		if u.CacheCreationInputTokens > 0 {
			a.usage.CacheWriteTokens = u.CacheCreationInputTokens
		}
	case "message_stop":
		a.done = true
	}
	return llm.Event{}, false
}

// maxBlocks bounds the block index a stream may use, so a hostile server
// cannot make the client allocate without limit.
const maxBlocks = 4096

// at returns the block at index i, growing the list as needed.
func (a *accumulator) at(i int64) *partial {
	if i < 0 || i >= maxBlocks {
		return nil
	}
	for int64(len(a.blocks)) <= i {
		a.blocks = append(a.blocks, &partial{})
	}
	return a.blocks[i]
}

// response returns the assembled message.
func (a *accumulator) response() *llm.Response {
	msg := llm.Message{Role: llm.RoleAssistant, Content: make([]llm.Block, 0, len(a.blocks))}
	for _, p := range a.blocks {
		b := p.block
		switch b.Type {
		case "":
			continue
		case llm.BlockText:
			b.Text = p.text.String()
			if len(p.citations) > 0 {
				b.Citations, _ = json.Marshal(p.citations) // raw messages of valid JSON
			}
		case llm.BlockServerToolUse:
			b.Input, _ = toolInput(p.text.String(), p.input)
		case llm.BlockThinking:
			b.Thinking = p.text.String()
			b.Signature = p.sig.String()
		case llm.BlockToolUse:
			if p.over > 0 {
				b.Input, b.InputOverLimit = json.RawMessage(`{}`), p.over
				break
			}
			b.Input, b.InvalidInput = toolInput(p.text.String(), p.input)
		}
		msg.Content = append(msg.Content, b)
	}
	return &llm.Response{ID: a.id, Model: a.model, Message: msg, StopReason: a.stop, Usage: a.usage}
}

// toolInput returns the tool input as valid JSON: the streamed text when
// there was some, else the input that came with the block start, else {}.
// Malformed input becomes {} with the raw text returned as invalid.
func toolInput(streamed, initial string) (json.RawMessage, string) {
	raw := strings.TrimSpace(streamed)
	if raw == "" {
		raw = strings.TrimSpace(initial)
	}
	if raw == "" || raw == "null" {
		return json.RawMessage(`{}`), ""
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(raw)); err != nil || !isObject(buf.Bytes()) {
		if strings.TrimSpace(streamed) == "" {
			return json.RawMessage(`{}`), initial
		}
		return json.RawMessage(`{}`), streamed
	}
	return json.RawMessage(buf.Bytes()), ""
}

// isObject reports whether compact JSON is an object.
func isObject(b []byte) bool { return len(b) > 0 && b[0] == '{' }
