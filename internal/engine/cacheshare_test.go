package engine

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/tool"
)

// requestTools returns the raw tool definitions of a captured Anthropic
// request body, in order.
func requestTools(t *testing.T, body []byte) []json.RawMessage {
	t.Helper()
	var v struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("decode request body: %v", err)
	}
	return v.Tools
}

// withoutMarker returns a tool definition without its cache_control.
func withoutMarker(t *testing.T, raw json.RawMessage) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "cache_control")
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestChildSharesParentToolPrefix (issue 24, point 2): the main agent in a
// git repository, with background agents possible, has tools of its own
// (TaskStop, TaskOutput, SendMessage). They come after the tools its
// children are offered, and a cache marker ends the shared ones: the
// captured first requests of main and of a general-purpose child are the
// same bytes tool for tool up to that marker, and the child's first
// request reads every tool from the cache its parent wrote.
func TestChildSharesParentToolPrefix(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.dir = gitRepo(t)
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("general-purpose", "CHILD-1: look around")), llmtest.Text("done"))
	h.srv.Script("CHILD-1", llmtest.Text("looked"))
	_, res, _ := mustRun(t, h.config(), "MAIN: go")
	if res.Text != "done" || res.Subagents.Completed != 1 {
		t.Fatalf("result %q, subagents %+v", res.Text, res.Subagents)
	}
	mainReq, childReq := h.srv.RequestsFor("MAIN")[0], h.srv.RequestsFor("CHILD-1")[0]
	mainTools, childTools := requestTools(t, mainReq.Body), requestTools(t, childReq.Body)
	mainNames, childNames := mainReq.ToolNames(), childReq.ToolNames()

	// The main agent's only tool marker ends the shared tools.
	k := -1
	for i, raw := range mainTools {
		if bytes.Contains(raw, []byte(`"cache_control"`)) {
			if k >= 0 {
				t.Fatalf("tools %d and %d both carry a cache marker", k, i)
			}
			k = i
		}
	}
	if k < 0 || k == len(mainTools)-1 {
		t.Fatalf("main's tools %v: want a cache marker before its own tools, got it at %d", mainNames, k)
	}
	for _, name := range mainNames[k+1:] {
		if !isMainOnly(name) {
			t.Errorf("tool %s comes after the shared ones but is not the main agent's own", name)
		}
	}
	for _, name := range []string{tool.TaskStop, tool.TaskOutput, tool.SendMessage} {
		if !slices.Contains(mainNames[k+1:], name) {
			t.Errorf("main's own tools %v: want %s among them", mainNames[k+1:], name)
		}
	}
	if !slices.Equal(childNames, mainNames[:k+1]) {
		t.Fatalf("child's tools %v, want main's shared ones %v", childNames, mainNames[:k+1])
	}
	// Byte for byte up to the marker; the marked tool differs only by it.
	for i := range k {
		if !bytes.Equal(mainTools[i], childTools[i]) {
			t.Errorf("tool %d (%s) differs:\nmain  %s\nchild %s", i, mainNames[i], mainTools[i], childTools[i])
		}
	}
	if a, b := withoutMarker(t, mainTools[k]), withoutMarker(t, childTools[k]); !bytes.Equal(a, b) {
		t.Errorf("tool %d (%s) differs beyond its marker:\nmain  %s\nchild %s", k, mainNames[k], a, b)
	}

	// The child reads all its tools from the cache: what it does not read
	// is its system prompt and its prompt (with their JSON envelopes).
	u := childReq.Usage
	total := u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens
	var toolBytes int
	for _, raw := range childTools {
		toolBytes += len(raw)
	}
	if u.CacheReadTokens < int64(toolBytes)/4*9/10 {
		t.Errorf("child read %d tokens from the cache, want at least its tools' ~%d; usage %+v", u.CacheReadTokens, toolBytes/4, u)
	}
	own := int64(len(childReq.System)+len(childReq.FirstUserText())+512) / 4
	if unread := total - u.CacheReadTokens; unread > own {
		t.Errorf("child: %d of %d tokens not read from the cache, want at most %d (its system prompt and prompt); usage %+v", unread, total, own, u)
	}
	t.Logf("child's first request: cached fraction %.3f (%d of %d tokens); tools %d bytes", float64(u.CacheReadTokens)/float64(total), u.CacheReadTokens, total, toolBytes)
}
