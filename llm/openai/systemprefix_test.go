package openai

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
)

// TestSystemPrefixSharedAcrossSystems: a SystemPrefix is a system message
// of its own ahead of System, so a server that caches per message serves
// a request with another System the tools and the prefix (llmtest's
// accounting); the model reads both.
func TestSystemPrefixSharedAcrossSystems(t *testing.T) {
	t.Parallel()
	s, m, _ := newScripted(t, Config{})
	prefix := strings.Repeat("Facts every sub-agent shares. ", 40)
	for _, key := range []string{"task-a", "task-b"} {
		s.Script(key, llmtest.Text("ok"))
		req := &llm.Request{Model: "gpt-test", SystemPrefix: prefix, System: "You are agent " + key + ".", Tools: testTools,
			Messages: []llm.Message{llm.UserText(key + ": go")}}
		if _, err := collect(t, m, req); err != nil {
			t.Fatal(err)
		}
	}
	second := s.Requests()[1]
	var body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(second.Body, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Messages) != 3 || body.Messages[0].Role != "system" || body.Messages[0].Content != prefix ||
		body.Messages[1].Role != "system" || body.Messages[1].Content != "You are agent task-b." {
		t.Fatalf("messages %+v", body.Messages)
	}
	if second.System != prefix+"\n\n"+"You are agent task-b." {
		t.Fatalf("the model reads %q", second.System)
	}
	u := second.Usage
	if u.CacheReadTokens < int64(len(prefix))/4 || u.CacheReadTokens >= u.InputTokens+u.CacheReadTokens {
		t.Fatalf("second request usage %+v", u)
	}
}
