package llmtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
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
	// RemoteAddr is the client's address as the server saw it: requests
	// that share it came over the same connection (a client that reuses
	// its connections sends many requests from few addresses).
	RemoteAddr string
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
	// ServerTools are the provider-side tools offered (Anthropic web
	// search), apart from Tools.
	ServerTools []llm.ServerTool
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
	c.ServerTools = append([]llm.ServerTool(nil), r.ServerTools...)
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
		b.Raw = bytes.Clone(b.Raw)
		b.Citations = bytes.Clone(b.Citations)
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
	serverTools  []llm.ServerTool
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
