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

// requestSystem returns the raw system blocks of a captured Anthropic
// request body, in order.
func requestSystem(t *testing.T, body []byte) []json.RawMessage {
	t.Helper()
	var v struct {
		System []json.RawMessage `json:"system"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("decode request body: %v", err)
	}
	return v.System
}

// TestChildSharesParentToolPrefix (issue 24, point 2): the main agent in a
// git repository, with background agents possible, and a general-purpose
// child are offered the same tools: the tools only the main agent has
// (TaskStop, TaskOutput, SendMessage) are deferred, named in its own part
// of the system prompt. Their first requests are the same bytes, tool for
// tool and then the first system block (the part every agent shares),
// which the main agent's request closes with a cache marker; the child's
// first request reads all of that from the cache its parent wrote, and
// leaves unread only its own system block and its prompt.
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

	// The same tools, byte for byte, with no marker among them: the
	// shared system block's marker closes them.
	if !slices.Equal(childNames, mainNames) {
		t.Fatalf("child's tools %v, want main's %v", childNames, mainNames)
	}
	for i := range mainTools {
		if !bytes.Equal(mainTools[i], childTools[i]) {
			t.Errorf("tool %d (%s) differs:\nmain  %s\nchild %s", i, mainNames[i], mainTools[i], childTools[i])
		}
		if bytes.Contains(mainTools[i], []byte(`"cache_control"`)) {
			t.Errorf("tool %d (%s) carries a cache marker", i, mainNames[i])
		}
	}
	// The main agent's own tools are deferred, named in its own part.
	mainSys, childSys := requestSystem(t, mainReq.Body), requestSystem(t, childReq.Body)
	if len(mainSys) != 2 || len(childSys) != 2 {
		t.Fatalf("system blocks: main %d, child %d; want 2 each (shared, own)", len(mainSys), len(childSys))
	}
	for _, name := range []string{tool.TaskStop, tool.TaskOutput, tool.SendMessage} {
		if slices.Contains(mainNames, name) || !slices.Contains(listedDeferred(mainReq.System), name) {
			t.Errorf("main: want %s deferred (named, not offered); offered %v", name, mainNames)
		}
		if slices.Contains(listedDeferred(childReq.System), name) {
			t.Errorf("child: %s is named though only the main agent has it", name)
		}
	}
	if bytes.Contains(mainSys[0], []byte("TaskStop")) {
		t.Error("the shared system block names a tool only the main agent has")
	}
	// The shared block: the same bytes, marked in the main agent's request.
	if !bytes.Contains(mainSys[0], []byte(`"cache_control"`)) {
		t.Errorf("main's first system block carries no cache marker: %s", mainSys[0])
	}
	if a, b := withoutMarker(t, mainSys[0]), withoutMarker(t, childSys[0]); !bytes.Equal(a, b) {
		t.Errorf("first system block differs:\nmain  %s\nchild %s", a, b)
	}

	// The child reads the tools and the shared block from the cache: what
	// it does not read is its own system block and its prompt (with
	// their JSON envelopes).
	u := childReq.Usage
	total := u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens
	shared := len(childSys[0])
	for _, raw := range childTools {
		shared += len(raw)
	}
	if u.CacheReadTokens < int64(shared)/4*9/10 {
		t.Errorf("child read %d tokens from the cache, want at least its tools' and shared block's ~%d; usage %+v", u.CacheReadTokens, shared/4, u)
	}
	own := int64(len(childSys[1])+len(childReq.FirstUserText())+512) / 4
	if unread := total - u.CacheReadTokens; unread > own {
		t.Errorf("child: %d of %d tokens not read from the cache, want at most %d (its own system block and prompt); usage %+v", unread, total, own, u)
	}
	t.Logf("child's first request: cached fraction %.3f (%d of %d tokens); tools %d bytes, shared system %d, own %d", float64(u.CacheReadTokens)/float64(total), u.CacheReadTokens, total, shared-len(childSys[0]), len(childSys[0]), len(childSys[1]))
}
