package anthropic

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm"
)

// TestServerToolBlocksPassThrough: a web_search_tool_result goes back with
// exactly the bytes it came with (key order, unknown fields and all), and
// cited text keeps its citations.
func TestServerToolBlocksPassThrough(t *testing.T) {
	raw := `{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"url":"https://a.example/","type":"web_search_result","title":"A","encrypted_content":"Zm9v","future_field":{"x":[1,2]}}]}`
	cites := `[{"type":"web_search_result_location","url":"https://a.example/","title":"A","encrypted_index":"YmFy","cited_text":"a"}]`
	req := &llm.Request{
		Model:       "claude-test",
		ServerTools: []llm.ServerTool{{Type: llm.WebSearchServerTool, Name: "web_search", MaxUses: 2, AllowedDomains: []string{"a.example"}}},
		Messages: []llm.Message{
			llm.UserText("search"),
			{Role: llm.RoleAssistant, Content: []llm.Block{
				{Type: llm.BlockServerToolUse, ID: "srvtoolu_1", Name: "web_search", Input: json.RawMessage(`{"query":"a"}`)},
				{Type: llm.BlockWebSearchResult, ToolUseID: "srvtoolu_1", Raw: json.RawMessage(raw)},
				{Type: llm.BlockText, Text: "A says a.", Citations: json.RawMessage(cites)},
			}},
			llm.UserText("thanks"),
		},
	}
	p, err := buildParams(req, 0)
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		raw,
		`"citations":` + cites,
		`{"id":"srvtoolu_1","input":{"query":"a"},"name":"web_search","type":"server_tool_use"}`,
		`"allowed_domains":["a.example"]`,
		`"type":"web_search_20250305"`,
		`"max_uses":2`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("request lacks %s\nbody: %s", want, body)
		}
	}
	// A cache marker on a raw block is added without touching the rest.
	b, err := passThrough(json.RawMessage(raw), true)
	if err != nil || string(b) != raw[:len(raw)-1]+`,"cache_control":{"type":"ephemeral"}}` {
		t.Fatalf("marked raw block = %s, %v", b, err)
	}
	if _, err := buildParams(&llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockWebSearchResult}}}}}, 0); err == nil {
		t.Fatal("a result block without raw JSON was accepted")
	}
	if _, err := buildParams(&llm.Request{Model: "m", ServerTools: []llm.ServerTool{{Type: "code_execution_20250522"}}, Messages: []llm.Message{llm.UserText("x")}}, 0); err == nil {
		t.Fatal("an unsupported server tool was accepted")
	}
}
