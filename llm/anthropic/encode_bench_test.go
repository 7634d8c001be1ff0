package anthropic

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
// turn: 20 tools of ~900 bytes of description and a ~400-byte schema,
// two system parts, a short conversation with a tool call.
func benchRequest() *llm.Request {
	req := &llm.Request{Model: "claude-sonnet-4-5", SystemPrefix: strings.Repeat("shared system part. ", 60), System: strings.Repeat("agent system part. ", 40), SharedTools: 17}
	for i := range 20 {
		schema := fmt.Sprintf(`{"type":"object","properties":{"file_path":{"type":"string","description":"%s"},"limit":{"type":"integer","description":"how many lines"},"offset":{"type":"integer"}},"required":["file_path"],"additionalProperties":false,"$schema":"https://json-schema.org/draft/2020-12/schema","title":"T%d"}`, strings.Repeat("the absolute path ", 8), i)
		req.Tools = append(req.Tools, llm.ToolSpec{Name: fmt.Sprintf("Tool%d", i), Description: strings.Repeat("Does a thing with \"quotes\" and <tags>. ", 22), InputSchema: json.RawMessage(schema)})
	}
	req.Messages = []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock("read the notes and fix the bug")}},
		{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("Reading."), {Type: llm.BlockToolUse, ID: "toolu_1", Name: "Tool1", Input: json.RawMessage(`{"file_path":"/w/notes.txt"}`)}}},
		{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock("toolu_1", strings.Repeat("     1\tsome line of the file\n", 80), false)}},
	}
	return req
}

// BenchmarkEncodeRequest is the request body's encoding through the
// SDK alone (buildParams and its MarshalJSON), tools included: what every
// model call paid before the tools array was kept rendered.
func BenchmarkEncodeRequest(b *testing.B) {
	req := benchRequest()
	b.ReportAllocs()
	var n int
	for b.Loop() {
		p, err := buildParams(req, 0)
		if err != nil {
			b.Fatal(err)
		}
		body, err := json.Marshal(p)
		if err != nil {
			b.Fatal(err)
		}
		n = len(body)
	}
	b.ReportMetric(float64(n), "body-bytes")
}

// BenchmarkStreamRequest is one whole model call of the bench request
// against a local server that answers a short text (the server's reading
// of the body included): compare with the tools array kept rendered
// (now) and through the SDK (before, git stash).
func BenchmarkStreamRequest(b *testing.B) {
	ans := textReply("ok")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		ans(w, r)
	}))
	defer srv.Close()
	hc := retry.HTTPClient() // the client a Model gets when none is given
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

// TestRenderedToolsMatchTheSDK sends requests through a Model (the tools
// array rendered once and set as the body's field) and checks every
// field of each body against the SDK's own encoding of the same request:
// the same bytes, the tools array included, wherever the marker is.
func TestRenderedToolsMatchTheSDK(t *testing.T) {
	reqs := []*llm.Request{benchRequest(), benchRequest(), benchRequest(), benchRequest()}
	reqs[1].SharedTools = 0            // the marker on the last tool
	reqs[2].Tools[3].Description = ""  // a tool without a description
	reqs[2].Tools[4].InputSchema = nil // and one without a schema
	reqs[3].SystemPrefix, reqs[3].SharedTools = "", 0
	var replies []reply
	for range len(reqs) * 2 {
		replies = append(replies, textReply("ok"))
	}
	f := newFake(t, replies...)
	m, _ := newModel(t, f, Config{})
	for _, req := range append(reqs, reqs...) { // the second round hits the kept arrays
		done(t, mustCollect(t, m, req))
	}
	for i, body := range f.rawBodies() {
		p, err := buildParams(append(reqs, reqs...)[i], 0)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var got, exp map[string]json.RawMessage
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(want, &exp); err != nil {
			t.Fatal(err)
		}
		for k, v := range exp {
			if k == "stream" {
				continue
			}
			if !bytes.Equal(got[k], v) {
				j := 0
				for j < len(v) && j < len(got[k]) && v[j] == got[k][j] {
					j++
				}
				t.Errorf("request %d: field %s differs at %d:\n got %.200s\nwant %.200s", i, k, j, got[k][max(j-100, 0):], v[max(j-100, 0):])
			}
		}
		for k := range got {
			if _, ok := exp[k]; !ok && k != "stream" {
				t.Errorf("request %d: field %s not in the SDK's encoding", i, k)
			}
		}
	}
	if n := m.tools.Len(); n != len(reqs) {
		t.Errorf("%d tools arrays kept, want %d", n, len(reqs))
	}
}

// TestKeptToolsArrayAllocatesNothing guards the saving: once rendered, a
// tools array costs a request no allocation (the SDK's encoding of 20
// tools allocated ~190 KB in ~250 allocations).
func TestKeptToolsArrayAllocatesNothing(t *testing.T) {
	req := benchRequest()
	var c retry.ToolsCache
	mark := PlaceBreakpoints(req).Tool
	first, err := c.Get(req.Tools, mark, renderTools)
	if err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(20, func() {
		raw, err := c.Get(req.Tools, mark, renderTools)
		if err != nil || &raw[0] != &first[0] {
			t.Fatal("the kept array was not returned")
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per kept tools array", allocs)
	}
	// A changed tool is rendered again, and more arrays than retry.ToolsKept
	// push the oldest out.
	req.Tools[0].Description += " more"
	if raw, _ := c.Get(req.Tools, mark, renderTools); bytes.Equal(raw, first) {
		t.Fatal("a changed tool got the old bytes")
	}
	for i := range retry.ToolsKept + 2 {
		req.Tools[1].Name = fmt.Sprintf("Renamed%d", i)
		if _, err := c.Get(req.Tools, mark, renderTools); err != nil {
			t.Fatal(err)
		}
	}
	if c.Len() != retry.ToolsKept {
		t.Fatalf("%d arrays kept, want at most %d", c.Len(), retry.ToolsKept)
	}
	req.Tools[2].InputSchema = json.RawMessage(`{"type":`)
	if _, err := c.Get(req.Tools, mark, renderTools); err == nil || !strings.Contains(err.Error(), "Tool2") {
		t.Fatalf("invalid schema: %v", err)
	}
}

func mustCollect(t *testing.T, m llm.Model, req *llm.Request) []llm.Event {
	t.Helper()
	evs, err := collect(t, m, req)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}
