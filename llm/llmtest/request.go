package llmtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/llm"
)

// Protocol names the wire format of a captured request.
type Protocol string

// The two protocols the server speaks.
const (
	Anthropic Protocol = "anthropic" // POST /v1/messages, /v1/messages/count_tokens
	OpenAI    Protocol = "openai"    // POST /v1/chat/completions
)

// Request is one captured request: what arrived on the wire, which script
// answered it, a provider-neutral view of its content, and the usage the
// server reported. Requests returned by the server are copies; changing
// them changes nothing on the server.
type Request struct {
	// Seq numbers the requests in arrival order, from 1.
	Seq int
	// Protocol is the wire format; empty for requests that are no model
	// call (GET /v1/models, unknown paths).
	Protocol Protocol
	Method   string
	Path     string
	Header   http.Header
	// Body holds the raw request body.
	Body []byte

	// Key is the script key the request matched ("" is the default).
	Key string
	// Turn is the 1-based number of this request among the key's requests:
	// the n-th request of a key is answered by the key's n-th turn. It is 0
	// for requests that consume no turn (count_tokens, models, errors).
	Turn int
	// Status is the HTTP status the server answered (200 even when a
	// stream was cut or carried an error event).
	Status int
	// Arrived and Finished bracket the handling of the request; Finished is
	// zero while the reply is still being written.
	Arrived  time.Time
	Finished time.Time

	// Model, System, Tools, Messages and MaxTokens are the decoded request.
	// OpenAI system and developer messages are joined into System; OpenAI
	// tool messages become a user message of tool_result blocks, and a
	// tool call whose arguments are not valid JSON gets Input "{}" with
	// the arguments in InvalidInput.
	Model     string
	System    string
	Tools     []llm.ToolSpec
	Messages  []llm.Message
	MaxTokens int64
	// Stream is whether a streamed reply was asked for.
	Stream bool
	// Thinking is whether extended thinking (Anthropic `thinking` enabled
	// or adaptive) or reasoning (OpenAI `reasoning_effort`) was requested.
	Thinking bool
	// Breakpoints counts the cache_control markers in the request.
	Breakpoints int
	// Usage is what the server reported: InputTokens (uncached input),
	// CacheReadTokens, CacheWriteTokens and OutputTokens. On the OpenAI
	// protocol CacheReadTokens is prompt_tokens_details.cached_tokens and
	// InputTokens is prompt_tokens minus it.
	Usage llm.Usage
	// DecodeError is set when the body could not be decoded.
	DecodeError string
}

// clone returns a deep enough copy of r for handing out.
func (r *Request) clone() *Request {
	c := *r
	c.Header = r.Header.Clone()
	c.Body = bytes.Clone(r.Body)
	c.Tools = append([]llm.ToolSpec(nil), r.Tools...)
	for i := range c.Tools {
		c.Tools[i].InputSchema = bytes.Clone(c.Tools[i].InputSchema)
	}
	if r.Messages != nil {
		c.Messages = make([]llm.Message, len(r.Messages))
		for i, m := range r.Messages {
			c.Messages[i] = llm.Message{Role: m.Role, Content: cloneBlocks(m.Content)}
		}
	}
	return &c
}

func cloneBlocks(bs []llm.Block) []llm.Block {
	if bs == nil {
		return nil
	}
	out := make([]llm.Block, len(bs))
	for i, b := range bs {
		b.Input = bytes.Clone(b.Input)
		b.Content = cloneBlocks(b.Content)
		out[i] = b
	}
	return out
}

// FirstUserText is the text of the request's first user message, the text
// script keys are matched against.
func (r *Request) FirstUserText() string {
	for _, m := range r.Messages {
		if m.Role == llm.RoleUser {
			return m.Text()
		}
	}
	return ""
}

// LastUserText is the text of the request's last user message: what a
// [ScriptFunc] looks at to tell apart requests that share their first
// message, such as forks of one parent, which differ only in their last
// block.
func (r *Request) LastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == llm.RoleUser {
			return r.Messages[i].Text()
		}
	}
	return ""
}

// LastToolResults returns the tool_result blocks of the last message when
// it is a user message, in order; handy in a [ScriptFunc].
func (r *Request) LastToolResults() []llm.Block {
	if len(r.Messages) == 0 {
		return nil
	}
	last := r.Messages[len(r.Messages)-1]
	if last.Role != llm.RoleUser {
		return nil
	}
	var out []llm.Block
	for _, b := range last.Content {
		if b.Type == llm.BlockToolResult {
			out = append(out, b)
		}
	}
	return out
}

// ToolNames returns the names of the offered tools, in order.
func (r *Request) ToolNames() []string {
	out := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		out[i] = t.Name
	}
	return out
}

// decoded is a request body decoded from either protocol.
type decoded struct {
	model        string
	system       string
	tools        []llm.ToolSpec
	messages     []llm.Message
	maxTokens    int64
	stream       bool
	includeUsage bool
	thinking     bool
	breakpoints  int
	// blocks are the request cut into cacheable blocks, in provider order.
	blocks []cacheBlock
	// problems are invariant violations only visible on the wire form.
	problems []string
}

// cacheBlock is one canonicalized block of a request.
type cacheBlock struct {
	data       []byte
	breakpoint bool
}

// errEmptyBody is returned for a request without a body.
var errEmptyBody = errors.New("empty body")

func (d *decoded) problemf(format string, args ...any) {
	d.problems = append(d.problems, fmt.Sprintf(format, args...))
}

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
	CacheControl json.RawMessage `json:"cache_control"`
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
			blk, nested, err := d.anthropicBlock(b, fmt.Sprintf("messages[%d].content[%d]", i, j))
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
func (d *decoded) anthropicBlock(b aBlock, where string) (llm.Block, int, error) {
	out := llm.Block{Type: llm.BlockType(b.Type)}
	nested := 0
	switch b.Type {
	case "text":
		out.Text = b.Text
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
				out.Content = append(out.Content, llm.Block{Type: llm.BlockType(ib.Type), Text: ib.Text})
			}
		}
	case "thinking":
		out.Thinking, out.Signature = b.Thinking, b.Signature
	case "redacted_thinking":
		out.Data = b.Data
	}
	return out, nested, nil
}

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
			if strings.TrimSpace(text) == "" {
				d.problemf("messages[%d]: empty user content", i)
			}
			d.messages = append(d.messages, llm.UserText(text))
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

func isJSONObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}

func textJSON(s string) []byte {
	b, _ := json.Marshal(map[string]string{"type": "text", "text": s})
	return b
}

// canonical renders a block for cache hashing: the role or section it
// belongs to, then its JSON re-marshalled with sorted keys and every
// cache_control marker (also those nested in a tool_result's content)
// removed. Bytes that do not decode are used as they are.
func canonical(section string, raw []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	out := []byte(section + ":")
	if err := dec.Decode(&v); err != nil {
		return append(out, raw...)
	}
	if m, ok := v.(map[string]any); ok {
		delete(m, "cache_control")
		if inner, ok := m["content"].([]any); ok {
			for _, x := range inner {
				if im, ok := x.(map[string]any); ok {
					delete(im, "cache_control")
				}
			}
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return append(out, raw...)
	}
	return append(out, b...)
}
