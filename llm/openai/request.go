package openai

import (
	"encoding/json"
	"fmt"
	"slices"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/cadre-dev/cadre/llm"
)

// The two names the answer bound can travel under.
const (
	FieldMaxTokens           = "max_tokens"
	FieldMaxCompletionTokens = "max_completion_tokens"
)

// errorPrefix marks the text of an error tool result, since Chat
// Completions has no is_error flag.
const errorPrefix = "Error: "

// reasoningEffort maps Request.Effort onto reasoning_effort: cadre's
// levels, and OpenAI's own "none" and "minimal".
func reasoningEffort(s llm.Effort) (shared.ReasoningEffort, bool) {
	switch s {
	case "none", "minimal", llm.EffortLow, llm.EffortMedium, llm.EffortHigh, llm.EffortXHigh, llm.EffortMax:
		return shared.ReasoningEffort(s), true
	}
	return "", false
}

// functionDef is the function of a tool; Parameters keeps the schema bytes.
type functionDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// buildParams translates req into the SDK's request parameters. It is a pure
// function of its inputs, so the same request renders to the same bytes.
func buildParams(req *llm.Request, maxField string) (sdk.ChatCompletionNewParams, error) {
	return buildParamsTools(req, maxField, true)
}

// buildParamsTools is buildParams; without withTools the request's tools
// are left out of the parameters (the caller sends a rendered array,
// toolsraw.go).
func buildParamsTools(req *llm.Request, maxField string, withTools bool) (sdk.ChatCompletionNewParams, error) {
	var p sdk.ChatCompletionNewParams
	if req == nil {
		return p, fmt.Errorf("openai: nil request")
	}
	if req.Model == "" {
		return p, fmt.Errorf("openai: request has no model")
	}
	p.Model = shared.ChatModel(req.Model)
	p.StreamOptions = sdk.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)}
	if req.MaxTokens > 0 {
		if maxField == FieldMaxTokens {
			p.MaxTokens = param.NewOpt(req.MaxTokens)
		} else {
			p.MaxCompletionTokens = param.NewOpt(req.MaxTokens)
		}
	}
	if req.Effort != "" {
		e, ok := reasoningEffort(req.Effort)
		if !ok {
			return p, fmt.Errorf("openai: unknown effort %q", req.Effort)
		}
		p.ReasoningEffort = e
	}

	if len(req.ServerTools) > 0 {
		return p, fmt.Errorf("openai: server tool %s is not supported by Chat Completions providers", req.ServerTools[0].Type)
	}
	tools := req.Tools
	if !withTools {
		tools = nil
	}
	for _, t := range tools {
		def, err := functionJSON(t)
		if err != nil {
			return p, err
		}
		p.Tools = append(p.Tools, sdk.ChatCompletionToolUnionParam{OfFunction: &sdk.ChatCompletionFunctionToolParam{
			Function: param.Override[shared.FunctionDefinitionParam](json.RawMessage(def)),
		}})
	}

	p.Messages = make([]sdk.ChatCompletionMessageParamUnion, 0, len(req.Messages)+1)
	// A shared system prefix is a system message of its own, so the
	// prefix it closes ends on a message boundary (as a cache hint's does,
	// appendUser); servers that cache by tokens are unaffected.
	for _, s := range []string{req.SystemPrefix, req.System} {
		if s != "" {
			p.Messages = append(p.Messages, sdk.SystemMessage(s))
		}
	}
	for i, m := range req.Messages {
		var err error
		switch m.Role {
		case llm.RoleUser:
			p.Messages, err = appendUser(p.Messages, m, hintedBlocks(req.CacheHints, i))
		case llm.RoleAssistant:
			p.Messages, err = appendAssistant(p.Messages, m)
		default:
			err = fmt.Errorf("unknown role %q", m.Role)
		}
		if err != nil {
			return p, fmt.Errorf("openai: message %d: %w", i, err)
		}
	}
	return p, nil
}

// hintedBlocks are the blocks of message i that cache hints point at.
func hintedBlocks(hints []llm.CacheHint, i int) []int {
	var out []int
	for _, h := range hints {
		if h.Message == i {
			out = append(out, h.Block)
		}
	}
	return out
}

// appendUser adds a user message: one tool message per tool_result, in
// order, then the text, if any, as a user message. A text block named in
// split (a cache hint: the end of a prefix sibling requests share) ends
// its user message, and the texts after it go in another, so the shared
// prefix ends on a message boundary. Servers that cache by tokens are
// unaffected; one that caches per message can then reuse the prefix.
func appendUser(out []sdk.ChatCompletionMessageParamUnion, m llm.Message, split []int) ([]sdk.ChatCompletionMessageParamUnion, error) {
	var texts []string
	var images []sdk.ChatCompletionContentPartUnionParam
	for bi, b := range m.Content {
		switch b.Type {
		case llm.BlockToolResult:
			text := b.ResultText()
			if b.IsError {
				text = errorPrefix + text
			}
			// A tool message holds text only: its images follow in a
			// user message that names the call.
			if imgs := toolImages(b); len(imgs) > 0 {
				text += "\n" + fmt.Sprintf(imagesFollow, len(imgs))
				images = append(images, sdk.TextContentPart(fmt.Sprintf(imagesOf, b.ToolUseID)))
				images = append(images, imgs...)
			}
			out = append(out, sdk.ToolMessage(text, b.ToolUseID))
		case llm.BlockText:
			if b.Text != "" {
				texts = append(texts, b.Text)
			}
			if len(texts) > 0 && slices.Contains(split, bi) && bi < len(m.Content)-1 {
				out, texts = appendUserText(out, texts), nil
			}
		case llm.BlockThinking, llm.BlockRedactedThinking:
		default:
			return out, fmt.Errorf("block type %q cannot be sent to this provider", b.Type)
		}
	}
	if len(images) > 0 {
		parts := images
		for _, s := range texts {
			parts = append(parts, sdk.TextContentPart(s))
		}
		return append(out, sdk.UserMessage(parts)), nil
	}
	return appendUserText(out, texts), nil
}

// appendUserText adds texts as one user message: a string for one text,
// content parts for several, nothing for none.
func appendUserText(out []sdk.ChatCompletionMessageParamUnion, texts []string) []sdk.ChatCompletionMessageParamUnion {
	switch len(texts) {
	case 0:
	case 1:
		out = append(out, sdk.UserMessage(texts[0]))
	default:
		parts := make([]sdk.ChatCompletionContentPartUnionParam, len(texts))
		for i, s := range texts {
			parts[i] = sdk.TextContentPart(s)
		}
		out = append(out, sdk.UserMessage(parts))
	}
	return out
}

// The notes that tie a tool result's images to it (Chat Completions has
// no images in tool messages).
const (
	imagesFollow = "[%d image(s) of this result follow in the next user message]"
	imagesOf     = "[images of tool call %s]"
)

// toolImages are a tool result's images as image_url parts (data URLs).
func toolImages(b llm.Block) []sdk.ChatCompletionContentPartUnionParam {
	var out []sdk.ChatCompletionContentPartUnionParam
	for _, c := range b.Content {
		if c.Type == llm.BlockImage {
			out = append(out, sdk.ImageContentPart(sdk.ChatCompletionContentPartImageImageURLParam{URL: "data:" + c.MediaType + ";base64," + c.Data}))
		}
	}
	return out
}

// appendAssistant adds an assistant message: text as content, tool uses as
// tool_calls; thinking is dropped. A message left with nothing is skipped.
func appendAssistant(out []sdk.ChatCompletionMessageParamUnion, m llm.Message) ([]sdk.ChatCompletionMessageParamUnion, error) {
	var texts []string
	var calls []sdk.ChatCompletionMessageToolCallUnionParam
	for _, b := range m.Content {
		switch b.Type {
		case llm.BlockText:
			if b.Text != "" {
				texts = append(texts, b.Text)
			}
		case llm.BlockToolUse:
			args := string(b.Input)
			if args == "" || !json.Valid(b.Input) {
				args = "{}"
			}
			calls = append(calls, sdk.ChatCompletionMessageToolCallUnionParam{OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
				ID:       b.ID,
				Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: b.Name, Arguments: args},
			}})
		case llm.BlockThinking, llm.BlockRedactedThinking:
		default:
			return out, fmt.Errorf("block type %q cannot be sent to this provider", b.Type)
		}
	}
	if len(texts) == 0 && len(calls) == 0 {
		return out, nil
	}
	a := &sdk.ChatCompletionAssistantMessageParam{ToolCalls: calls}
	switch len(texts) {
	case 0:
	case 1:
		a.Content.OfString = param.NewOpt(texts[0])
	default:
		for _, s := range texts {
			a.Content.OfArrayOfContentParts = append(a.Content.OfArrayOfContentParts,
				sdk.ChatCompletionAssistantMessageParamContentArrayOfContentPartUnion{OfText: &sdk.ChatCompletionContentPartTextParam{Text: s}})
		}
	}
	return append(out, sdk.ChatCompletionMessageParamUnion{OfAssistant: a}), nil
}
