package openai

import (
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm"
)

// A request for a provider-side tool is refused, not silently stripped:
// Chat Completions has no server tools.
func TestServerToolsRefused(t *testing.T) {
	_, err := buildParams(&llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("x")},
		ServerTools: []llm.ServerTool{{Type: llm.WebSearchServerTool, Name: "web_search"}}}, FieldMaxTokens)
	if err == nil || !strings.Contains(err.Error(), "web_search_20250305 is not supported") {
		t.Fatalf("err = %v", err)
	}
}
