package llmtest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/cadre-dev/cadre/llm"
)

// anthropic wire types.
type aRequest struct {
	Model     string            `json:"model"`
	MaxTokens int64             `json:"max_tokens"`
	System    json.RawMessage   `json:"system"`
	Tools     []json.RawMessage `json:"tools"`
	Messages  []aMessage        `json:"messages"`
	Stream    bool              `json:"stream"`
	// CacheControl at the top level asks for automatic caching: a
	// breakpoint on the last block.
	CacheControl json.RawMessage `json:"cache_control"`
	Thinking     *struct {
		Type string `json:"type"`
	} `json:"thinking"`
}

type aMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type aBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text"`
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Input        json.RawMessage `json:"input"`
	ToolUseID    string          `json:"tool_use_id"`
	Content      json.RawMessage `json:"content"`
	IsError      bool            `json:"is_error"`
	Thinking     string          `json:"thinking"`
	Signature    string          `json:"signature"`
	Data         string          `json:"data"`
	Citations    json.RawMessage `json:"citations"`
	CacheControl json.RawMessage `json:"cache_control"`
	Source       *aSource        `json:"source"`
}

// aSource is an image block's source.
type aSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

type aTool struct {
	Name         string          `json:"name"`
	Type         string          `json:"type"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl json.RawMessage `json:"cache_control"`
}

func present(raw json.RawMessage) bool {
	return len(raw) > 0 && !bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

// decodeAnthropic decodes a Messages API (or count_tokens) body.
func decodeAnthropic(body []byte) (*decoded, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, errEmptyBody
	}
	var r aRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("decode messages request: %w", err)
	}
	d := &decoded{model: r.Model, maxTokens: r.MaxTokens, stream: r.Stream}
	d.thinking = r.Thinking != nil && r.Thinking.Type != "" && r.Thinking.Type != "disabled"

	seen := map[string]bool{}
	for i, raw := range r.Tools {
		var t aTool
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, fmt.Errorf("decode tools[%d]: %w", i, err)
		}
		if seen[t.Name] {
			d.problemf("tool name %q is offered twice", t.Name)
		}
		seen[t.Name] = true
		bp := present(t.CacheControl)
		if bp {
			d.breakpoints++
		}
		if strings.HasPrefix(t.Type, "web_search_") {
			var ws struct {
				MaxUses        int      `json:"max_uses"`
				AllowedDomains []string `json:"allowed_domains"`
				BlockedDomains []string `json:"blocked_domains"`
			}
			_ = json.Unmarshal(raw, &ws) // the fields were decoded once above
			d.serverTools = append(d.serverTools, llm.ServerTool{Type: t.Type, Name: t.Name, MaxUses: ws.MaxUses, AllowedDomains: ws.AllowedDomains, BlockedDomains: ws.BlockedDomains})
			d.blocks = append(d.blocks, cacheBlock{data: canonical("tool", raw), breakpoint: bp})
			continue
		}
		d.tools = append(d.tools, llm.ToolSpec{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
		d.blocks = append(d.blocks, cacheBlock{data: canonical("tool", raw), breakpoint: bp})
	}

	if present(r.System) {
		var s string
		if err := json.Unmarshal(r.System, &s); err == nil {
			d.system = s
			d.blocks = append(d.blocks, cacheBlock{data: canonical("system", textJSON(s))})
		} else {
			var blocks []json.RawMessage
			if err := json.Unmarshal(r.System, &blocks); err != nil {
				return nil, fmt.Errorf("decode system: %w", err)
			}
			var texts []string
			for i, raw := range blocks {
				var b aBlock
				if err := json.Unmarshal(raw, &b); err != nil {
					return nil, fmt.Errorf("decode system[%d]: %w", i, err)
				}
				if strings.TrimSpace(b.Text) == "" {
					d.problemf("system[%d]: empty text block", i)
				}
				bp := present(b.CacheControl)
				if bp {
					d.breakpoints++
				}
				texts = append(texts, b.Text)
				d.blocks = append(d.blocks, cacheBlock{data: canonical("system", raw), breakpoint: bp})
			}
			d.system = strings.Join(texts, "\n\n")
		}
	}

	for i, m := range r.Messages {
		role := llm.Role(m.Role)
		if role != llm.RoleUser && role != llm.RoleAssistant {
			d.problemf("messages[%d]: unknown role %q", i, m.Role)
		}
		msg := llm.Message{Role: role}
		var s string
		if err := json.Unmarshal(m.Content, &s); err == nil {
			if strings.TrimSpace(s) == "" {
				d.problemf("messages[%d]: empty text content", i)
			}
			msg.Content = []llm.Block{llm.TextBlock(s)}
			d.blocks = append(d.blocks, cacheBlock{data: canonical(m.Role, textJSON(s))})
			d.messages = append(d.messages, msg)
			continue
		}
		var blocks []json.RawMessage
		if err := json.Unmarshal(m.Content, &blocks); err != nil {
			return nil, fmt.Errorf("decode messages[%d].content: %w", i, err)
		}
		if len(blocks) == 0 && (role != llm.RoleAssistant || i != len(r.Messages)-1) {
			d.problemf("messages[%d]: empty content", i)
		}
		for j, raw := range blocks {
			var b aBlock
			if err := json.Unmarshal(raw, &b); err != nil {
				return nil, fmt.Errorf("decode messages[%d].content[%d]: %w", i, j, err)
			}
			bp := present(b.CacheControl)
			if bp {
				d.breakpoints++
			}
			blk, nested, err := d.anthropicBlock(b, raw, fmt.Sprintf("messages[%d].content[%d]", i, j))
			if err != nil {
				return nil, err
			}
			d.breakpoints += nested
			msg.Content = append(msg.Content, blk)
			d.blocks = append(d.blocks, cacheBlock{data: canonical(m.Role, raw), breakpoint: bp || nested > 0})
		}
		d.messages = append(d.messages, msg)
	}
	if present(r.CacheControl) && len(d.blocks) > 0 {
		d.breakpoints++
		d.blocks[len(d.blocks)-1].breakpoint = true
	}
	return d, nil
}

// anthropicBlock converts one content block, counting cache_control
// markers nested in a tool_result's content.
func (d *decoded) anthropicBlock(b aBlock, raw json.RawMessage, where string) (llm.Block, int, error) {
	out := llm.Block{Type: llm.BlockType(b.Type)}
	nested := 0
	switch b.Type {
	case "text":
		out.Text = b.Text
		if present(b.Citations) {
			out.Citations = json.RawMessage(bytes.Clone(b.Citations))
		}
		if strings.TrimSpace(b.Text) == "" {
			d.problemf("%s: empty text block", where)
		}
	case "tool_use":
		out.ID, out.Name = b.ID, b.Name
		out.Input = json.RawMessage(bytes.Clone(b.Input))
		if !isJSONObject(b.Input) {
			d.problemf("%s: tool_use %s input is not a JSON object: %.80s", where, b.ID, b.Input)
		}
	case "tool_result":
		out.ToolUseID, out.IsError = b.ToolUseID, b.IsError
		if present(b.Content) {
			var s string
			if err := json.Unmarshal(b.Content, &s); err == nil {
				out.Content = []llm.Block{llm.TextBlock(s)}
				break
			}
			var inner []aBlock
			if err := json.Unmarshal(b.Content, &inner); err != nil {
				return out, 0, fmt.Errorf("decode %s.content: %w", where, err)
			}
			for k, ib := range inner {
				if present(ib.CacheControl) {
					nested++
				}
				if ib.Type == "text" && strings.TrimSpace(ib.Text) == "" {
					d.problemf("%s.content[%d]: empty text block", where, k)
				}
				if ib.Type == "image" {
					out.Content = append(out.Content, d.image(ib.Source, fmt.Sprintf("%s.content[%d]", where, k)))
					continue
				}
				out.Content = append(out.Content, llm.Block{Type: llm.BlockType(ib.Type), Text: ib.Text})
			}
		}
	case "server_tool_use":
		out.ID, out.Name = b.ID, b.Name
		out.Input = json.RawMessage(bytes.Clone(b.Input))
		if !isJSONObject(b.Input) {
			d.problemf("%s: server_tool_use %s input is not a JSON object: %.80s", where, b.ID, b.Input)
		}
	case "web_search_tool_result":
		out.ToolUseID = b.ToolUseID
		out.Raw = json.RawMessage(bytes.Clone(raw))
		if !present(b.Content) {
			d.problemf("%s: web_search_tool_result %s has no content", where, b.ToolUseID)
		}
	case "thinking":
		out.Thinking, out.Signature = b.Thinking, b.Signature
	case "redacted_thinking":
		out.Data = b.Data
	}
	return out, nested, nil
}

// imageTypes are the media types both APIs take for images.
var imageTypes = []string{"image/jpeg", "image/png", "image/gif", "image/webp"}

// image checks an Anthropic image source (base64, a known media type,
// data that decodes) and returns the block.
func (d *decoded) image(src *aSource, where string) llm.Block {
	if src == nil {
		d.problemf("%s: image without a source", where)
		return llm.Block{Type: llm.BlockImage}
	}
	if src.Type != "base64" {
		d.problemf("%s: image source type %q (this server takes base64)", where, src.Type)
	}
	d.checkImage(src.MediaType, src.Data, where)
	return llm.ImageBlock(src.MediaType, src.Data)
}

func (d *decoded) checkImage(mediaType, data, where string) {
	if !slices.Contains(imageTypes, mediaType) {
		d.problemf("%s: image media type %q is not one of %v", where, mediaType, imageTypes)
	}
	if _, err := base64.StdEncoding.DecodeString(data); err != nil || data == "" {
		d.problemf("%s: image data is not base64: %v", where, err)
	}
}
