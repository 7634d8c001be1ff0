package llmtest_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// BenchmarkAnthropicStream measures one streamed Messages round trip with
// a tool use, through plain net/http.
func BenchmarkAnthropicStream(b *testing.B) {
	s := llmtest.NewServer(llmtest.WithMaxRequests(1 << 30))
	defer s.Close()
	s.ScriptFunc("", func(*llmtest.Request) llmtest.Turn {
		return llmtest.Text(strings.Repeat("word ", 50)).WithToolUse("Read", map[string]string{"path": "/tmp/x.go"})
	})
	body := `{"model":"m","max_tokens":100,"stream":true,"system":[{"type":"text","text":"` + strings.Repeat("sys ", 500) +
		`","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"go"}]}`
	client := &http.Client{}
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, s.URL()+"/v1/messages", strings.NewReader(body))
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		if res.StatusCode != http.StatusOK {
			b.Fatalf("status %d", res.StatusCode)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	client.CloseIdleConnections()
}
