package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/internal/retry"
)

// benchRequest is a request shaped like a main agent's at its third
// turn: 20 tools of ~900 bytes of description and a ~400-byte schema, a
// system prompt, a short conversation with a tool call.
func benchRequest() *llm.Request {
	req := &llm.Request{Model: "gpt-test", SystemPrefix: strings.Repeat("shared system part. ", 60), System: strings.Repeat("agent system part. ", 40)}
	for i := range 20 {
		schema := fmt.Sprintf(`{"type":"object","properties":{"file_path":{"type":"string","description":"%s"},"limit":{"type":"integer"}},"required":["file_path"],"title":"T%d"}`, strings.Repeat("the absolute path ", 8), i)
		req.Tools = append(req.Tools, llm.ToolSpec{Name: fmt.Sprintf("Tool%d", i), Description: strings.Repeat("Does a thing with \"quotes\" and <tags>. ", 22), InputSchema: json.RawMessage(schema)})
	}
	req.Messages = []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock("read the notes and fix the bug")}},
		{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("Reading."), {Type: llm.BlockToolUse, ID: "call_1", Name: "Tool1", Input: json.RawMessage(`{"file_path":"/w/notes.txt"}`)}}},
		{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock("call_1", strings.Repeat("     1\tsome line of the file\n", 80), false)}},
	}
	return req
}

// BenchmarkStreamRequest is one whole model call of the bench request
// against a local server that answers a short text, through the client
// a Model gets by default (the server's reading of the body included).
func BenchmarkStreamRequest(b *testing.B) {
	ans := textReply("ok")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		ans(w, r)
	}))
	defer srv.Close()
	hc := retry.HTTPClient()
	defer hc.CloseIdleConnections()
	m, err := New(Config{APIKey: "k", BaseURL: srv.URL, HTTPClient: hc})
	if err != nil {
		b.Fatal(err)
	}
	req := benchRequest()
	b.ReportAllocs()
	for b.Loop() {
		for _, err := range m.Stream(context.Background(), req) {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}
