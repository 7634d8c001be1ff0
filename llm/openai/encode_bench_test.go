package openai

import (
	"bytes"
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

// TestKeptToolsMatchTheSDK sends requests through a Model (the tools
// array rendered once and kept, the body sent in parts) and checks each
// body byte for byte against the SDK's own encoding of the same request
// with "stream":true set, as its NewStreaming would send it: tools with
// and without descriptions and schemas, escapes, the kept array reused.
func TestKeptToolsMatchTheSDK(t *testing.T) {
	reqs := []*llm.Request{benchRequest(), benchRequest(), benchRequest()}
	reqs[1].Tools[3].Description = ""  // a tool without a description
	reqs[1].Tools[4].InputSchema = nil // and one without a schema
	reqs[2].Tools, reqs[2].MaxTokens, reqs[2].Effort = reqs[2].Tools[:2], 500, "high"
	all := append(append([]*llm.Request{}, reqs...), reqs...) // the second round hits the kept arrays
	var replies []reply
	for range all {
		replies = append(replies, textReply("ok"))
	}
	f := newFake(t, replies...)
	m, _ := newModel(t, f, Config{})
	for _, req := range all {
		if _, err := collect(t, m, req); err != nil {
			t.Fatal(err)
		}
	}
	if len(f.bodies) != len(all) {
		t.Fatalf("%d bodies for %d requests", len(f.bodies), len(all))
	}
	for i, body := range f.bodies {
		p, err := buildParams(all[i], m.maxField)
		if err != nil {
			t.Fatal(err)
		}
		enc, err := p.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		want := append(enc[:len(enc)-1:len(enc)-1], `,"stream":true}`...)
		if !bytes.Equal(body, want) {
			j := 0
			for j < len(body) && j < len(want) && body[j] == want[j] {
				j++
			}
			t.Errorf("request %d differs at byte %d:\n got %.200s\nwant %.200s", i, j, body[max(j-60, 0):], want[max(j-60, 0):])
		}
	}
	if n := m.tools.Len(); n != len(reqs) {
		t.Errorf("%d tools arrays kept, want %d", n, len(reqs))
	}
}
