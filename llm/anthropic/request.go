package anthropic

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/cadre-dev/cadre/llm"
)

// defaultMaxTokens is the answer bound used when neither the request nor the
// Config sets one: 32000, or the output limit of Claude 3 models, which is
// lower (a larger max_tokens is refused).
func defaultMaxTokens(model string) int64 {
	switch {
	case strings.Contains(model, "claude-3-5-"):
		return 8192
	case strings.Contains(model, "claude-3-7-"):
		return 32000
	case strings.Contains(model, "claude-3-"):
		return 4096
	}
	return 32000
}

// effort maps Request.Effort onto the API's output_config.effort.
func effort(s llm.Effort) (sdk.OutputConfigEffort, bool) {
	switch s {
	case llm.EffortLow:
		return sdk.OutputConfigEffortLow, true
	case llm.EffortMedium:
		return sdk.OutputConfigEffortMedium, true
	case llm.EffortHigh:
		return sdk.OutputConfigEffortHigh, true
	case llm.EffortXHigh:
		return sdk.OutputConfigEffortXhigh, true
	case llm.EffortMax:
		return sdk.OutputConfigEffortMax, true
	}
	return "", false
}

// buildParams translates req into the SDK's request parameters. It is a
// pure function of req and the default answer bound, so the same request
// always renders to the same bytes.
func buildParams(req *llm.Request, defMax int64) (sdk.MessageNewParams, error) {
	return buildParamsTools(req, defMax, true)
}

// buildParamsTools is buildParams; without withTools the request's own
// tools are left out of the parameters (the caller sets the body's tools
// field from a rendered array, toolsraw.go), its server tools stay.
func buildParamsTools(req *llm.Request, defMax int64, withTools bool) (sdk.MessageNewParams, error) {
	var p sdk.MessageNewParams
	if req == nil {
		return p, fmt.Errorf("anthropic: nil request")
	}
	if req.Model == "" {
		return p, fmt.Errorf("anthropic: request has no model")
	}
	p.Model = sdk.Model(req.Model)

	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = defMax
		if maxTokens <= 0 {
			maxTokens = defaultMaxTokens(req.Model)
		}
		if req.Thinking != nil && req.Thinking.BudgetTokens >= maxTokens {
			maxTokens += req.Thinking.BudgetTokens
		}
	}
	p.MaxTokens = maxTokens

	if req.Thinking != nil && req.Thinking.BudgetTokens > 0 {
		p.Thinking = sdk.ThinkingConfigParamUnion{OfEnabled: &sdk.ThinkingConfigEnabledParam{BudgetTokens: req.Thinking.BudgetTokens}}
	}
	if req.Effort != "" {
		e, ok := effort(req.Effort)
		if !ok {
			return p, fmt.Errorf("anthropic: unknown effort %q (want low, medium, high, xhigh or max)", req.Effort)
		}
		p.OutputConfig = sdk.OutputConfigParam{Effort: e}
	}

	bp := PlaceBreakpoints(req)

	if len(req.Tools) > 0 && withTools {
		p.Tools = make([]sdk.ToolUnionParam, len(req.Tools))
		for i, t := range req.Tools {
			tp, err := toolParam(t)
			if err != nil {
				return p, err
			}
			if i == bp.Tool {
				tp.CacheControl = sdk.NewCacheControlEphemeralParam()
			}
			p.Tools[i] = sdk.ToolUnionParam{OfTool: tp}
		}
	}
	for _, st := range req.ServerTools {
		tp, err := serverToolParam(st)
		if err != nil {
			return p, err
		}
		p.Tools = append(p.Tools, tp)
	}
	if req.SystemPrefix != "" {
		sys := sdk.TextBlockParam{Text: req.SystemPrefix}
		if bp.SystemPrefix {
			sys.CacheControl = sdk.NewCacheControlEphemeralParam()
		}
		p.System = append(p.System, sys)
	}
	if req.System != "" {
		sys := sdk.TextBlockParam{Text: req.System}
		if bp.System {
			sys.CacheControl = sdk.NewCacheControlEphemeralParam()
		}
		p.System = append(p.System, sys)
	}

	p.Messages = make([]sdk.MessageParam, 0, len(req.Messages))
	for mi, m := range req.Messages {
		content := make([]sdk.ContentBlockParamUnion, 0, len(m.Content))
		for bi, b := range m.Content {
			if b.Type == llm.BlockText && b.Text == "" {
				continue // the API refuses empty text blocks
			}
			cb, err := blockParam(b, bp.marks(mi, bi))
			if err != nil {
				return p, fmt.Errorf("anthropic: message %d block %d: %w", mi, bi, err)
			}
			content = append(content, cb)
		}
		switch m.Role {
		case llm.RoleUser:
			p.Messages = append(p.Messages, sdk.MessageParam{OfUser: &sdk.UserMessageParam{Content: content}})
		case llm.RoleAssistant:
			p.Messages = append(p.Messages, sdk.MessageParam{OfAssistant: &sdk.AssistantMessageParam{Content: content}})
		default:
			return p, fmt.Errorf("anthropic: message %d: unknown role %q", mi, m.Role)
		}
	}
	return p, nil
}

// toolParam renders one tool; the schema bytes go out exactly as given.
func toolParam(t llm.ToolSpec) (*sdk.ToolParam, error) {
	schema := t.InputSchema
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object"}`)
	} else if !json.Valid(schema) {
		return nil, fmt.Errorf("anthropic: tool %s: input schema is not valid JSON", t.Name)
	}
	tp := &sdk.ToolParam{
		Name:        t.Name,
		InputSchema: param.Override[sdk.ToolInputSchemaParam](schema),
	}
	if t.Description != "" {
		tp.Description = param.NewOpt(t.Description)
	}
	return tp, nil
}

// blockParam renders one content block, with a cache marker when mark is set.
func blockParam(b llm.Block, mark bool) (sdk.ContentBlockParamUnion, error) {
	var cc sdk.CacheControlEphemeralParam
	if mark {
		cc = sdk.NewCacheControlEphemeralParam()
	}
	switch b.Type {
	case llm.BlockText:
		if len(b.Citations) > 0 && string(b.Citations) != "null" {
			return citedTextParam(b, mark)
		}
		return sdk.ContentBlockParamUnion{OfText: &sdk.TextBlockParam{Text: b.Text, CacheControl: cc}}, nil
	case llm.BlockServerToolUse:
		input := b.Input
		if len(input) == 0 || !json.Valid(input) {
			input = json.RawMessage(`{}`)
		}
		return sdk.ContentBlockParamUnion{OfServerToolUse: &sdk.ServerToolUseBlockParam{ID: b.ID, Name: sdk.ServerToolUseBlockParamName(b.Name), Input: input, CacheControl: cc}}, nil
	case llm.BlockWebSearchResult:
		raw, err := passThrough(b.Raw, mark)
		if err != nil {
			return sdk.ContentBlockParamUnion{}, err
		}
		wr := param.Override[sdk.WebSearchToolResultBlockParam](raw)
		return sdk.ContentBlockParamUnion{OfWebSearchToolResult: &wr}, nil
	case llm.BlockToolUse:
		input := b.Input
		if len(input) == 0 || !json.Valid(input) {
			input = json.RawMessage(`{}`)
		}
		return sdk.ContentBlockParamUnion{OfToolUse: &sdk.ToolUseBlockParam{ID: b.ID, Name: b.Name, Input: input, CacheControl: cc}}, nil
	case llm.BlockToolResult:
		tr := &sdk.ToolResultBlockParam{ToolUseID: b.ToolUseID, CacheControl: cc}
		if b.IsError {
			tr.IsError = param.NewOpt(true)
		}
		for _, c := range b.Content {
			switch {
			case c.Type == llm.BlockText && c.Text != "":
				tr.Content = append(tr.Content, sdk.ToolResultBlockParamContentUnion{OfText: &sdk.TextBlockParam{Text: c.Text}})
			case c.Type == llm.BlockImage:
				tr.Content = append(tr.Content, sdk.ToolResultBlockParamContentUnion{OfImage: &sdk.ImageBlockParam{
					Source: sdk.ImageBlockParamSourceUnion{OfBase64: &sdk.Base64ImageSourceParam{Data: c.Data, MediaType: sdk.Base64ImageSourceMediaType(c.MediaType)}}}})
			}
		}
		return sdk.ContentBlockParamUnion{OfToolResult: tr}, nil
	case llm.BlockThinking:
		return sdk.ContentBlockParamUnion{OfThinking: &sdk.ThinkingBlockParam{Thinking: b.Thinking, Signature: b.Signature}}, nil
	case llm.BlockRedactedThinking:
		return sdk.ContentBlockParamUnion{OfRedactedThinking: &sdk.RedactedThinkingBlockParam{Data: b.Data}}, nil
	}
	return sdk.ContentBlockParamUnion{}, fmt.Errorf("unknown block type %q", b.Type)
}

// serverToolParam renders a provider-side tool; only web search exists.
func serverToolParam(st llm.ServerTool) (sdk.ToolUnionParam, error) {
	if st.Type != llm.WebSearchServerTool {
		return sdk.ToolUnionParam{}, fmt.Errorf("anthropic: server tool type %q is not supported (only %s)", st.Type, llm.WebSearchServerTool)
	}
	if st.Name != "" && st.Name != "web_search" {
		return sdk.ToolUnionParam{}, fmt.Errorf("anthropic: server tool %s must be named web_search, not %q", st.Type, st.Name)
	}
	ws := &sdk.WebSearchTool20250305Param{AllowedDomains: st.AllowedDomains, BlockedDomains: st.BlockedDomains}
	if st.MaxUses > 0 {
		ws.MaxUses = param.NewOpt(int64(st.MaxUses))
	}
	return sdk.ToolUnionParam{OfWebSearchTool20250305: ws}, nil
}

// passThrough returns a block's raw JSON to send back as it came; with
// mark, a cache_control marker is added at its end (the rest of the bytes
// stay as they were).
func passThrough(raw json.RawMessage, mark bool) (json.RawMessage, error) {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	if len(raw) < 2 || raw[0] != '{' || !json.Valid(raw) {
		return nil, fmt.Errorf("server tool result block has no valid raw JSON object")
	}
	if !mark {
		return raw, nil
	}
	out := append([]byte(nil), raw[:len(raw)-1]...)
	if strings.TrimSpace(string(raw[1:len(raw)-1])) != "" {
		out = append(out, ',')
	}
	out = append(out, `"cache_control":{"type":"ephemeral"}}`...)
	return out, nil
}

// citedTextParam renders a text block with the citations the provider
// attached to it, the citations sent back as they came.
func citedTextParam(b llm.Block, mark bool) (sdk.ContentBlockParamUnion, error) {
	if !json.Valid(b.Citations) {
		return sdk.ContentBlockParamUnion{}, fmt.Errorf("text block citations are not valid JSON")
	}
	text, err := json.Marshal(b.Text)
	if err != nil {
		return sdk.ContentBlockParamUnion{}, err
	}
	raw := []byte(`{"type":"text","text":` + string(text) + `,"citations":` + string(b.Citations))
	if mark {
		raw = append(raw, `,"cache_control":{"type":"ephemeral"}`...)
	}
	raw = append(raw, '}')
	tp := param.Override[sdk.TextBlockParam](json.RawMessage(raw))
	return sdk.ContentBlockParamUnion{OfText: &tp}, nil
}
