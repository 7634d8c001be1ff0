package anthropic

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
)

// TestSystemPrefixSharedAcrossSystems: two requests with the same tools and
// SystemPrefix but different System (sibling sub-agents of two types) —
// the prefix goes out as a system block of its own with a cache marker, so
// llmtest's cache accounting serves the second request the tools and the
// prefix written by the first.
func TestSystemPrefixSharedAcrossSystems(t *testing.T) {
	t.Parallel()
	s, m, _ := newScripted(t, Config{})
	prefix := strings.Repeat("Facts every sub-agent shares. ", 40)
	for _, key := range []string{"task-a", "task-b"} {
		s.Script(key, llmtest.Text("ok"))
		req := &llm.Request{Model: "claude-sonnet-4-5", SystemPrefix: prefix, System: "You are agent " + key + ".", Tools: testTools,
			Messages: []llm.Message{llm.UserText(key + ": go")}}
		if _, err := collect(t, m, req); err != nil {
			t.Fatal(err)
		}
	}
	first, second := s.Requests()[0], s.Requests()[1]
	var body struct {
		System []struct {
			Text         string          `json:"text"`
			CacheControl json.RawMessage `json:"cache_control"`
		} `json:"system"`
		Tools []struct {
			CacheControl json.RawMessage `json:"cache_control"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(second.Body, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.System) != 2 || body.System[0].Text != prefix || body.System[1].Text != "You are agent task-b." ||
		body.System[0].CacheControl == nil || body.System[1].CacheControl == nil {
		t.Fatalf("system blocks %+v", body.System)
	}
	for i, tl := range body.Tools {
		if tl.CacheControl != nil {
			t.Fatalf("tool %d carries a marker; the prefix's marker closes the tools", i)
		}
	}
	if second.System != prefix+"\n\n"+"You are agent task-b." {
		t.Fatalf("the model reads %q", second.System)
	}
	// The first wrote everything; the second read all but its own system
	// block and message.
	if first.Usage.CacheReadTokens != 0 {
		t.Fatalf("first request read %d", first.Usage.CacheReadTokens)
	}
	u := second.Usage
	if u.CacheReadTokens < int64(len(prefix))/4 || u.CacheReadTokens >= first.Usage.CacheWriteTokens {
		t.Fatalf("second request usage %+v; the first wrote %d", u, first.Usage.CacheWriteTokens)
	}
}
