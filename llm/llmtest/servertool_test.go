package llmtest_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// TestWebSearchBlocks: a scripted web search comes back as server_tool_use
// and web_search_tool_result blocks on the Anthropic protocol (streamed and
// not), with cited text; the OpenAI protocol, which has no server tools,
// gets the text alone.
func TestWebSearchBlocks(t *testing.T) {
	s := newServer(t)
	hit := llmtest.SearchHit{URL: "https://go.dev/", Title: "Go", PageAge: "1 day"}
	turn := llmtest.WebSearch("golang", hit).WithCitedText("Go is a language.", hit)
	s.Script("search-stream", turn)
	s.Script("search-plain", turn)
	s.Script("search-oai", turn)
	req := `{"model":"m","max_tokens":100,"stream":%s,"tools":[{"type":"web_search_20250305","name":"web_search","max_uses":3,"allowed_domains":["go.dev"]}],"messages":[{"role":"user","content":"%s"}]}`

	res := post(t, s, "/v1/messages", strings.Replace(strings.Replace(req, "%s", "false", 1), "%s", "search-plain", 1))
	var msg struct {
		Content []json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(res.body, &msg); err != nil || len(msg.Content) != 3 {
		t.Fatalf("body %s: %v", res.body, err)
	}
	want := []string{
		`{"type":"server_tool_use","id":"srvtoolu_llmtest_1_0","name":"web_search","input":{"query":"golang"}}`,
		`{"content":[{"encrypted_content":"bGxtdGVzdDpodHRwczovL2dvLmRldi8=","page_age":"1 day","title":"Go","type":"web_search_result","url":"https://go.dev/"}],"tool_use_id":"srvtoolu_llmtest_1_0","type":"web_search_tool_result"}`,
	}
	for i, w := range want {
		if string(msg.Content[i]) != w {
			t.Errorf("content[%d] = %s\nwant %s", i, msg.Content[i], w)
		}
	}
	if !strings.Contains(string(msg.Content[2]), `"citations":[{"cited_text":"Go is a language."`) {
		t.Errorf("cited text: %s", msg.Content[2])
	}

	res = post(t, s, "/v1/messages", strings.Replace(strings.Replace(req, "%s", "true", 1), "%s", "search-stream", 1))
	events := parseSSE(t, res.body)
	var kinds []string
	for _, e := range events {
		if e.name == "content_block_start" {
			kinds = append(kinds, field(t, e.data, "content_block", "type").(string))
		}
		if e.name == "content_block_delta" && field(t, e.data, "delta", "type") == "citations_delta" {
			kinds = append(kinds, "citation")
		}
	}
	if got := strings.Join(kinds, ","); got != "server_tool_use,web_search_tool_result,text,citation" {
		t.Fatalf("stream blocks: %s", got)
	}
	reqs := s.RequestsFor("search-stream")
	if len(reqs) != 1 || len(reqs[0].ServerTools) != 1 || reqs[0].ServerTools[0].MaxUses != 3 || reqs[0].ServerTools[0].AllowedDomains[0] != "go.dev" || len(reqs[0].Tools) != 0 {
		t.Fatalf("captured server tools: %+v", reqs)
	}

	c := openaiClient(s)
	acc, err := streamOpenAI(t, c, oaiParams("search-oai"))
	if err != nil {
		t.Fatal(err)
	}
	if got := acc.Choices[0].Message.Content; got != "Go is a language." {
		t.Fatalf("openai content %q", got)
	}
	noViolations(t, s)
}
