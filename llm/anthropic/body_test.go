package anthropic

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/internal/retry"
)

// TestBodyOnTheWireIsTheParts sends requests with and without tools
// through the client a Model gets by default, twice over one connection
// (the second through GetBody, as a redirect resends it): the server
// reads the body of the Content-Length announced, byte for byte the
// parts joined, "stream":true last.
func TestBodyOnTheWireIsTheParts(t *testing.T) {
	var got [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if int64(len(body)) != r.ContentLength {
			t.Errorf("read %d bytes of a body of %d", len(body), r.ContentLength)
		}
		got = append(got, body)
		if r.URL.Query().Get("moved") == "" && len(got)%2 == 1 {
			http.Redirect(w, r, r.URL.Path+"?moved=1", http.StatusPermanentRedirect)
			return
		}
		textReply("ok")(w, r)
	}))
	defer srv.Close()
	hc := retry.HTTPClient()
	defer hc.CloseIdleConnections()
	m, err := New(Config{APIKey: "k", BaseURL: srv.URL, HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	noTools := benchRequest()
	noTools.Tools = nil
	server := benchRequest()
	server.ServerTools = []llm.ServerTool{{Type: llm.WebSearchServerTool}}
	for i, req := range []*llm.Request{benchRequest(), noTools, server} {
		got = nil
		for _, err := range m.Stream(t.Context(), req) {
			if err != nil {
				t.Fatal(err)
			}
		}
		p, opts, err := m.params(req)
		if err != nil || len(opts) != 1 || len(p.Messages) != 0 || len(p.Tools) != 0 {
			t.Fatalf("request %d: the SDK is given %d messages, %d tools, %d options (%v)", i, len(p.Messages), len(p.Tools), len(opts), err)
		}
		if len(got) != 2 || !bytes.Equal(got[0], got[1]) {
			t.Fatalf("request %d: %d bodies, the resent one differs", i, len(got))
		}
		if !bytes.HasSuffix(got[0], []byte(`,"stream":true}`)) || !json.Valid(got[0]) {
			t.Fatalf("request %d: body ends %q", i, got[0][max(len(got[0])-40, 0):])
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(got[0], &fields); err != nil {
			t.Fatal(err)
		}
		if len(fields["messages"]) < 100 || len(fields["system"]) < 100 || (req.Tools != nil) != (fields["tools"] != nil) {
			t.Fatalf("request %d: fields %d messages, %d system, %d tools bytes", i, len(fields["messages"]), len(fields["system"]), len(fields["tools"]))
		}
	}
}
