package llmtest_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

func TestKeyRouting(t *testing.T) {
	s := newServer(t)
	s.Script("", llmtest.Text("default 1"), llmtest.Text("default 2"))
	s.Script("Explore", llmtest.Text("explore 1"), llmtest.Text("explore 2"))
	s.Script("Explore the auth module", llmtest.Text("auth 1"))
	c := anthropicClient(s)
	ask := func(first string, later ...string) string {
		t.Helper()
		params := userParams(first)
		for _, l := range later {
			params.Messages = append(params.Messages,
				anthropic.NewAssistantMessage(anthropic.NewTextBlock("ack")),
				anthropic.NewUserMessage(anthropic.NewTextBlock(l)))
		}
		msg, err := c.Messages.New(context.Background(), params)
		if err != nil {
			t.Fatal(err)
		}
		return msg.Content[0].Text
	}
	got := []string{
		ask("Explore the auth module please"), // longest key wins
		ask("Explore the db"),
		ask("hello"),
		ask("please Explore the cache", "Explore the auth module"), // only the first user message counts
		ask("hi again"),
	}
	want := []string{"auth 1", "explore 1", "default 1", "explore 2", "default 2"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
	if n := len(s.RequestsFor("Explore")); n != 2 {
		t.Errorf("RequestsFor(Explore) = %d", n)
	}
	if r := s.RequestsFor("Explore the auth module")[0]; r.Key != "Explore the auth module" || r.Turn != 1 {
		t.Errorf("key %q turn %d", r.Key, r.Turn)
	}
	noViolations(t, s)
}

func TestExhaustedScript(t *testing.T) {
	s := newServer(t)
	s.Script("worker", llmtest.Text("only"))
	c := anthropicClient(s)
	for range 2 {
		if _, err := c.Messages.New(context.Background(), userParams("worker task")); err != nil {
			t.Fatal(err)
		}
	}
	msg, err := c.Messages.New(context.Background(), userParams("no script here"))
	if err != nil {
		t.Fatal(err)
	}
	if msg.Content[0].Text != `llmtest: script for key "" exhausted` {
		t.Errorf("default answer %q", msg.Content[0].Text)
	}
	wantViolation(t, s, `key "worker"`, "exhausted at turn 2")
	wantViolation(t, s, `key ""`, "exhausted at turn 1")
	if n := len(s.Violations()); n != 2 {
		t.Errorf("%d violations: %q", n, s.Violations())
	}
	// Check reports them through testing.TB.
	rec := &recorder{TB: t}
	s.Check(rec)
	if len(rec.errors) != 2 || !strings.Contains(rec.errors[0], "exhausted") {
		t.Errorf("Check reported %q", rec.errors)
	}
}

// recorder is a testing.TB that records errors instead of failing.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func TestScriptFunc(t *testing.T) {
	s := newServer(t)
	s.Script("echo", llmtest.ToolUse("Bash", map[string]string{"command": "ls"}))
	s.ScriptFunc("echo", func(r *llmtest.Request) llmtest.Turn {
		res := r.LastToolResults()
		if len(res) == 0 {
			return llmtest.Turn{}
		}
		return llmtest.Text("tool said: " + res[0].ResultText())
	})
	c := anthropicClient(s)
	params := userParams("echo agent")
	first, err := c.Messages.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	use := first.Content[0].AsToolUse()
	params.Messages = append(params.Messages, first.ToParam(), anthropic.NewUserMessage(anthropic.NewToolResultBlock(use.ID, "a.go b.go", false)))
	second, err := c.Messages.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if second.Content[0].Text != "tool said: a.go b.go" {
		t.Errorf("got %q", second.Content[0].Text)
	}
	noViolations(t, s)
	// A zero turn from the function is an exhausted script.
	if _, err := c.Messages.New(context.Background(), userParams("echo agent")); err != nil {
		t.Fatal(err)
	}
	wantViolation(t, s, `key "echo"`, "exhausted at turn 3")
}

func TestNotFoundAndLimits(t *testing.T) {
	s := newServer(t, llmtest.WithMaxBodyBytes(1000), llmtest.WithMaxRequests(4))
	s.Script("", llmtest.Text("a"))
	res := do(t, "GET", s.URL()+"/v1/nope", "")
	if res.status != 404 || field(t, string(res.body), "error", "type") != "not_found_error" || field(t, string(res.body), "error", "message") == nil {
		t.Errorf("404: %d %s", res.status, res.body)
	}
	res = do(t, "GET", s.URL()+"/v1/messages", "")
	if res.status != 404 {
		t.Errorf("GET /v1/messages: %d", res.status)
	}
	big := fmt.Sprintf(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":%q}]}`, strings.Repeat("x", 2000))
	res = post(t, s, "/v1/messages", big)
	if res.status != 413 || field(t, string(res.body), "error", "type") != "request_too_large" {
		t.Errorf("big body: %d %s", res.status, res.body)
	}
	res = post(t, s, "/v1/messages", `{"model":`)
	if res.status != 400 {
		t.Errorf("bad json: %d", res.status)
	}
	wantViolation(t, s, "cannot decode body")
	res = post(t, s, "/v1/messages", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`)
	if res.status != 400 || res.header.Get("x-should-retry") != "false" {
		t.Errorf("past the cap: %d %v", res.status, res.header)
	}
	wantViolation(t, s, "request cap of 4")
	if n := len(s.Requests()); n != 4 {
		t.Errorf("%d requests captured", n)
	}
	if s.Remaining("") != 1 {
		t.Error("a refused request consumed a turn")
	}
}

func TestLogger(t *testing.T) {
	var buf safeBuffer
	s := newServer(t, llmtest.WithLogger(&buf))
	s.Script("k", llmtest.Text("hi"))
	post(t, s, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"k"}]}`)
	if got := buf.String(); !strings.Contains(got, `#1 openai POST /v1/chat/completions key="k" turn=1 status=200`) {
		t.Errorf("log %q", got)
	}
}

type safeBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *safeBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *safeBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Fifty agents at once, each with its own script, on both protocols.
func TestConcurrentRequests(t *testing.T) {
	s := newServer(t)
	const n = 50
	for i := range n {
		key := fmt.Sprintf("agent-%03d", i)
		s.Script(key, llmtest.ToolUse("Read", map[string]int{"i": i}), llmtest.Text("done "+key))
	}
	ac := anthropicClient(s)
	oc := openaiClient(s)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			key := fmt.Sprintf("agent-%03d", i)
			if i%2 == 0 {
				params := userParams("you are " + key)
				first, err := streamAnthropic(t, ac, params)
				if err != nil {
					errs <- err
					return
				}
				id := first.Content[0].AsToolUse().ID
				params.Messages = append(params.Messages, first.ToParam(), anthropic.NewUserMessage(anthropic.NewToolResultBlock(id, "ok", false)))
				final, err := ac.Messages.New(context.Background(), params)
				if err != nil {
					errs <- err
					return
				}
				if final.Content[0].Text != "done "+key {
					errs <- fmt.Errorf("%s got %q", key, final.Content[0].Text)
				}
				return
			}
			params := oaiParams("you are " + key)
			acc, err := streamOpenAI(t, oc, params)
			if err != nil {
				errs <- err
				return
			}
			if len(acc.Choices) == 0 || len(acc.Choices[0].Message.ToolCalls) != 1 {
				errs <- fmt.Errorf("%s: no tool call", key)
				return
			}
			if id := acc.Choices[0].Message.ToolCalls[0].ID; id != llmtest.CallID(key, 1) {
				errs <- fmt.Errorf("%s: id %s", key, id)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := len(s.Requests()); got != n+n/2 {
		t.Errorf("%d requests", got)
	}
	noViolations(t, s)
}

func TestScriptFuncPanic(t *testing.T) {
	s := newServer(t)
	s.ScriptFunc("", func(*llmtest.Request) llmtest.Turn { panic("bad script") })
	c := anthropicClient(s)
	msg, err := c.Messages.New(context.Background(), userParams("x"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(msg.Content[0].Text, "panicked") {
		t.Errorf("answer %q", msg.Content[0].Text)
	}
	wantViolation(t, s, "panicked: bad script")
	if n := len(s.Violations()); n != 1 {
		t.Errorf("violations %q", s.Violations())
	}
}

func TestRequestsAreCopies(t *testing.T) {
	s := newServer(t)
	s.Script("", llmtest.Text("a"))
	post(t, s, "/v1/messages", `{"model":"m","max_tokens":5,"tools":[{"name":"R","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":"hi"}]}`)
	r := s.Requests()[0]
	r.Messages[0].Content[0].Text = "changed"
	r.Tools[0].InputSchema[0] = 'X'
	r.Body[0] = 'X'
	r.Header.Set("X-Test", "1")
	again := s.Requests()[0]
	if again.Messages[0].Content[0].Text != "hi" || string(again.Tools[0].InputSchema) != `{"type":"object"}` || again.Body[0] != '{' || again.Header.Get("X-Test") != "" {
		t.Errorf("server state changed through a copy: %+v", again)
	}
}
