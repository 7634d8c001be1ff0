package llmtest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	oaioption "github.com/openai/openai-go/v3/option"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// newServer starts a server closed at the end of the test.
func newServer(t *testing.T, opts ...llmtest.Option) *llmtest.Server {
	t.Helper()
	s := llmtest.NewServer(opts...)
	t.Cleanup(s.Close)
	return s
}

// anthropicClient returns an SDK client for s that does not retry.
func anthropicClient(s *llmtest.Server, opts ...option.RequestOption) anthropic.Client {
	return anthropic.NewClient(append([]option.RequestOption{option.WithBaseURL(s.URL()), option.WithAPIKey("test"), option.WithMaxRetries(0)}, opts...)...)
}

// openaiClient returns an SDK client for s that does not retry.
func openaiClient(s *llmtest.Server, opts ...oaioption.RequestOption) openai.Client {
	return openai.NewClient(append([]oaioption.RequestOption{oaioption.WithBaseURL(s.URL() + "/v1"), oaioption.WithAPIKey("test"), oaioption.WithMaxRetries(0)}, opts...)...)
}

func userParams(text string) anthropic.MessageNewParams {
	return anthropic.MessageNewParams{
		Model:     "llmtest-model",
		MaxTokens: 512,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(text))},
	}
}

func oaiParams(text string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:    "llmtest-model",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(text)},
	}
}

// streamAnthropic sends params streamed and accumulates the message.
func streamAnthropic(t *testing.T, c anthropic.Client, params anthropic.MessageNewParams) (anthropic.Message, error) {
	t.Helper()
	stream := c.Messages.NewStreaming(context.Background(), params)
	defer stream.Close()
	var msg anthropic.Message
	for stream.Next() {
		if err := msg.Accumulate(stream.Current()); err != nil {
			return msg, err
		}
	}
	return msg, stream.Err()
}

// streamOpenAI sends params streamed and accumulates the completion.
func streamOpenAI(t *testing.T, c openai.Client, params openai.ChatCompletionNewParams) (openai.ChatCompletionAccumulator, error) {
	t.Helper()
	stream := c.Chat.Completions.NewStreaming(context.Background(), params)
	defer stream.Close()
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	return acc, stream.Err()
}

// rawResponse is a response read with plain net/http.
type rawResponse struct {
	status int
	header http.Header
	body   []byte
	err    error // error reading the body
}

// post sends body to path with plain net/http.
func post(t *testing.T, s *llmtest.Server, path, body string) rawResponse {
	t.Helper()
	return do(t, http.MethodPost, s.URL()+path, body)
}

func do(t *testing.T, method, url, body string) rawResponse {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return rawResponse{status: res.StatusCode, header: res.Header, body: b, err: err}
}

// sse is one parsed server-sent event.
type sse struct {
	name string
	data string
}

// parseSSE splits a text/event-stream body into events.
func parseSSE(t *testing.T, body []byte) []sse {
	t.Helper()
	var out []sse
	var cur sse
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.data != "" || cur.name != "" {
				out = append(out, cur)
			}
			cur = sse{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	return out
}

// field decodes one JSON value at a dotted path of an event's data.
func field(t *testing.T, data string, path ...string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(data), &v); err != nil {
		t.Fatalf("decode %q: %v", data, err)
	}
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wantViolation fails unless some violation contains every fragment.
func wantViolation(t *testing.T, s *llmtest.Server, fragments ...string) {
	t.Helper()
	for _, v := range s.Violations() {
		ok := true
		for _, f := range fragments {
			ok = ok && strings.Contains(v, f)
		}
		if ok {
			return
		}
	}
	t.Errorf("no violation containing %q; got %q", fragments, s.Violations())
}

// noViolations fails with every violation recorded.
func noViolations(t *testing.T, s *llmtest.Server) {
	t.Helper()
	s.Check(t)
}
