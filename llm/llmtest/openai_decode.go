package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cadre-dev/cadre/llm"
)

// openai wire types.
type oRequest struct {
	Model               string            `json:"model"`
	Messages            []json.RawMessage `json:"messages"`
	Tools               []oTool           `json:"tools"`
	MaxTokens           int64             `json:"max_tokens"`
	MaxCompletionTokens int64             `json:"max_completion_tokens"`
	Stream              bool              `json:"stream"`
	StreamOptions       *oStreamOpt       `json:"stream_options"`
	ReasoningEffort     string            `json:"reasoning_effort"`
}

type oStreamOpt struct {
	IncludeUsage bool `json:"include_usage"`
}

type oMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []oToolCall     `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
}

type oToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type oTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// openaiText returns the text of an OpenAI message content (a string, an
// array of parts, or null) and whether it was present at all.
func openaiText(raw json.RawMessage) (string, bool, error) {
	if !present(raw) {
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, true, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", false, fmt.Errorf("content is neither a string nor parts: %w", err)
	}
	var sb strings.Builder
	for _, p := range parts {
		sb.WriteString(p.Text)
	}
	return sb.String(), true, nil
}

// decodeOpenAI decodes a Chat Completions body.
func decodeOpenAI(body []byte) (*decoded, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, errEmptyBody
	}
	var r oRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("decode chat completions request: %w", err)
	}
	d := &decoded{model: r.Model, stream: r.Stream, thinking: r.ReasoningEffort != "" && r.ReasoningEffort != "none"}
	d.maxTokens = r.MaxCompletionTokens
	if d.maxTokens == 0 {
		d.maxTokens = r.MaxTokens
	}
	d.includeUsage = r.StreamOptions != nil && r.StreamOptions.IncludeUsage

	seen := map[string]bool{}
	for _, t := range r.Tools {
		if seen[t.Function.Name] {
			d.problemf("tool name %q is offered twice", t.Function.Name)
		}
		seen[t.Function.Name] = true
		d.tools = append(d.tools, llm.ToolSpec{Name: t.Function.Name, Description: t.Function.Description, InputSchema: t.Function.Parameters})
		b, _ := json.Marshal(t)
		d.blocks = append(d.blocks, cacheBlock{data: canonical("tool", b)})
	}

	var system []string
	for i, raw := range r.Messages {
		var m oMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("decode messages[%d]: %w", i, err)
		}
		d.blocks = append(d.blocks, cacheBlock{data: canonical(m.Role, raw)})
		text, hasText, err := openaiText(m.Content)
		if err != nil {
			return nil, fmt.Errorf("decode messages[%d]: %w", i, err)
		}
		switch m.Role {
		case "system", "developer":
			system = append(system, text)
		case "user":
			images := d.openaiImages(m.Content, fmt.Sprintf("messages[%d]", i))
			if strings.TrimSpace(text) == "" && len(images) == 0 {
				d.problemf("messages[%d]: empty user content", i)
			}
			msg := llm.UserText(text)
			if len(images) > 0 {
				msg.Content = images
				if text != "" {
					msg.Content = append([]llm.Block{llm.TextBlock(text)}, images...)
				}
			}
			d.messages = append(d.messages, msg)
		case "assistant":
			msg := llm.Message{Role: llm.RoleAssistant}
			if hasText && text != "" {
				msg.Content = append(msg.Content, llm.TextBlock(text))
			}
			for _, tc := range m.ToolCalls {
				blk := llm.Block{Type: llm.BlockToolUse, ID: tc.ID, Name: tc.Function.Name, Input: json.RawMessage(tc.Function.Arguments)}
				if !isJSONObject([]byte(tc.Function.Arguments)) {
					d.problemf("messages[%d]: tool call %s arguments are not a JSON object: %.80s", i, tc.ID, tc.Function.Arguments)
					blk.Input, blk.InvalidInput = json.RawMessage("{}"), tc.Function.Arguments
				}
				msg.Content = append(msg.Content, blk)
			}
			if len(msg.Content) == 0 {
				d.problemf("messages[%d]: assistant message with neither content nor tool calls", i)
			}
			d.messages = append(d.messages, msg)
		case "tool":
			res := llm.ToolResultBlock(m.ToolCallID, text, false)
			if n := len(d.messages); n > 0 && d.messages[n-1].Role == llm.RoleUser && isToolResults(d.messages[n-1]) {
				d.messages[n-1].Content = append(d.messages[n-1].Content, res)
			} else {
				d.messages = append(d.messages, llm.Message{Role: llm.RoleUser, Content: []llm.Block{res}})
			}
		default:
			d.problemf("messages[%d]: unknown role %q", i, m.Role)
		}
	}
	d.system = strings.Join(system, "\n\n")
	return d, nil
}

func isToolResults(m llm.Message) bool {
	if len(m.Content) == 0 {
		return false
	}
	for _, b := range m.Content {
		if b.Type != llm.BlockToolResult {
			return false
		}
	}
	return true
}

// openaiImages returns the image_url parts of a user message's content as
// image blocks; only base64 data URLs are taken.
func (d *decoded) openaiImages(raw json.RawMessage, where string) []llm.Block {
	var parts []struct {
		Type     string `json:"type"`
		ImageURL *struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return nil
	}
	var out []llm.Block
	for k, p := range parts {
		if p.Type != "image_url" {
			continue
		}
		at := fmt.Sprintf("%s.content[%d]", where, k)
		if p.ImageURL == nil {
			d.problemf("%s: image_url part without image_url", at)
			continue
		}
		meta, data, ok := strings.Cut(strings.TrimPrefix(p.ImageURL.URL, "data:"), ",")
		mediaType, isB64 := strings.CutSuffix(meta, ";base64")
		if !ok || !isB64 || !strings.HasPrefix(p.ImageURL.URL, "data:") {
			d.problemf("%s: image url is not a base64 data URL", at)
			continue
		}
		d.checkImage(mediaType, data, at)
		out = append(out, llm.ImageBlock(mediaType, data))
	}
	return out
}
