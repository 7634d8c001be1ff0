package loop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeModel answers each request with the next scripted response.
type fakeModel struct {
	mu    sync.Mutex
	turns []func(req *llm.Request) (*llm.Response, error)
	reqs  []*llm.Request
}

func (f *fakeModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		f.mu.Lock()
		cp := *req
		cp.Messages = append([]llm.Message(nil), req.Messages...)
		f.reqs = append(f.reqs, &cp)
		n := len(f.reqs) - 1
		f.mu.Unlock()
		if n >= len(f.turns) {
			yield(llm.Event{}, fmt.Errorf("fake model: no turn %d", n))
			return
		}
		resp, err := f.turns[n](req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		if t := resp.Message.Text(); t != "" {
			if !yield(llm.Event{Kind: llm.EventTextDelta, Text: t}, nil) {
				return
			}
		}
		yield(llm.Event{Kind: llm.EventDone, Response: resp}, nil)
	}
}

func answer(blocks ...llm.Block) func(*llm.Request) (*llm.Response, error) {
	return func(*llm.Request) (*llm.Response, error) {
		stop := llm.StopEndTurn
		for _, b := range blocks {
			if b.Type == llm.BlockToolUse {
				stop = llm.StopToolUse
			}
		}
		return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: blocks}, StopReason: stop,
			Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}}, nil
	}
}

func use(id, name, input string) llm.Block {
	return llm.Block{Type: llm.BlockToolUse, ID: id, Name: name, Input: json.RawMessage(input)}
}

type echoIn struct {
	Text string `json:"text"`
}

// recTool records the order calls start and optionally waits on a gate.
type recTool struct {
	name     string
	readOnly bool
	run      func(ctx context.Context, in echoIn) (tool.Output, error)
}

func (r recTool) build() tool.Tool {
	return tool.Func(tool.FuncConfig{Name: r.name, Description: r.name, ReadOnly: r.readOnly},
		func(ctx context.Context, _ *tool.Env, in echoIn) (tool.Output, error) { return r.run(ctx, in) })
}

func echo(name string, readOnly bool) tool.Tool {
	return recTool{name: name, readOnly: readOnly, run: func(_ context.Context, in echoIn) (tool.Output, error) {
		return tool.Output{Text: name + ":" + in.Text}, nil
	}}.build()
}

type memRecorder struct {
	mu   sync.Mutex
	msgs []llm.Message
}

func (m *memRecorder) AppendMessage(msg llm.Message, _ string, _ *llm.Usage) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.msgs = append(m.msgs, msg)
	return nil
}

func run(t *testing.T, ctx context.Context, cfg Config, prompt string) (*Result, []Event, error) {
	t.Helper()
	var evs []Event
	for ev, err := range Run(ctx, cfg, []llm.Message{llm.UserText(prompt)}) {
		if err != nil {
			return nil, evs, err
		}
		evs = append(evs, ev)
		if ev.Kind == Done {
			return ev.Result, evs, nil
		}
	}
	t.Fatal("stream ended without Done or error")
	return nil, nil, nil
}

func TestPlainAnswer(t *testing.T) {
	t.Parallel()
	m := &fakeModel{turns: []func(*llm.Request) (*llm.Response, error){answer(llm.TextBlock("hello"))}}
	rec := &memRecorder{}
	res, evs, err := run(t, context.Background(), Config{Model: m, ModelID: "m", System: "sys", Tools: tool.NewPool(), Recorder: rec}, "hi")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "hello" || res.Turns != 1 || res.Usage.InputTokens != 10 {
		t.Fatalf("result = %+v", res)
	}
	if evs[0].Kind != TextDelta || evs[0].Text != "hello" {
		t.Fatalf("first event = %+v", evs[0])
	}
	if len(rec.msgs) != 2 || rec.msgs[0].Text() != "hi" || rec.msgs[1].Text() != "hello" {
		t.Fatalf("recorded %+v", rec.msgs)
	}
	if m.reqs[0].System != "sys" || m.reqs[0].Model != "m" {
		t.Fatalf("request = %+v", m.reqs[0])
	}
}

func TestToolResultsInCallOrder(t *testing.T) {
	t.Parallel()
	m := &fakeModel{turns: []func(*llm.Request) (*llm.Response, error){
		answer(use("1", "R", `{"text":"a"}`), use("2", "W", `{"text":"b"}`), use("3", "R", `{"text":"c"}`), use("4", "R", `{"text":"d"}`)),
		answer(llm.TextBlock("done")),
	}}
	pool := tool.NewPool(echo("R", true), echo("W", false))
	res, _, err := run(t, context.Background(), Config{Model: m, Tools: pool}, "go")
	if err != nil {
		t.Fatal(err)
	}
	got := res.Messages[2]
	var texts []string
	for _, b := range got.Content {
		texts = append(texts, b.ToolUseID+"="+b.ResultText())
	}
	want := []string{"1=R:a", "2=W:b", "3=R:c", "4=R:d"}
	if diff := cmp.Diff(want, texts); diff != "" {
		t.Fatalf("results (-want +got):\n%s", diff)
	}
	if res.ToolUses != 4 || res.Turns != 2 {
		t.Fatalf("counts %+v", res)
	}
}

func TestReadOnlyCallsRunConcurrently(t *testing.T) {
	t.Parallel()
	// Three read-only calls each wait until all three have started: this
	// only finishes if they run at the same time.
	var started sync.WaitGroup
	started.Add(3)
	all := make(chan struct{})
	go func() { started.Wait(); close(all) }()
	slow := recTool{name: "S", readOnly: true, run: func(ctx context.Context, in echoIn) (tool.Output, error) {
		started.Done()
		select {
		case <-all:
			return tool.Output{Text: in.Text}, nil
		case <-time.After(10 * time.Second):
			return tool.Output{}, errors.New("calls did not run concurrently")
		}
	}}.build()
	m := &fakeModel{turns: []func(*llm.Request) (*llm.Response, error){
		answer(use("1", "S", `{"text":"a"}`), use("2", "S", `{"text":"b"}`), use("3", "S", `{"text":"c"}`)),
		answer(llm.TextBlock("ok")),
	}}
	res, _, err := run(t, context.Background(), Config{Model: m, Tools: tool.NewPool(slow)}, "go")
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Messages[2].Content[2].ResultText(); got != "c" {
		t.Fatalf("third result %q", got)
	}
}

// TestWritesRunInOrderAlone: writing calls run one after another, in call
// order. Each call holds for a while; in a synctest bubble that wait is
// fake time, so calls that overlapped would all be inside it together,
// deterministically, however fast the machine.
func TestWritesRunInOrderAlone(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var running, maxRunning atomic.Int32
		var order []string
		var mu sync.Mutex
		w := recTool{name: "W", run: func(ctx context.Context, in echoIn) (tool.Output, error) {
			n := running.Add(1)
			if n > maxRunning.Load() {
				maxRunning.Store(n)
			}
			time.Sleep(time.Second) // fake time inside the bubble
			mu.Lock()
			order = append(order, in.Text)
			mu.Unlock()
			running.Add(-1)
			return tool.Output{Text: "ok"}, nil
		}}.build()
		m := &fakeModel{turns: []func(*llm.Request) (*llm.Response, error){
			answer(use("1", "W", `{"text":"a"}`), use("2", "W", `{"text":"b"}`), use("3", "W", `{"text":"c"}`)),
			answer(llm.TextBlock("ok")),
		}}
		if _, _, err := run(t, context.Background(), Config{Model: m, Tools: tool.NewPool(w)}, "go"); err != nil {
			t.Fatal(err)
		}
		if maxRunning.Load() != 1 || strings.Join(order, "") != "abc" {
			t.Fatalf("max concurrent %d, order %v", maxRunning.Load(), order)
		}
	})
}

func TestRecoverableToolProblems(t *testing.T) {
	t.Parallel()
	boom := recTool{name: "Boom", run: func(context.Context, echoIn) (tool.Output, error) { panic("kaput") }}.build()
	cases := []struct {
		name string
		call llm.Block
		want string
	}{
		{"unknown tool", use("1", "Nope", `{}`), "No such tool: Nope"},
		{"malformed input", llm.Block{Type: llm.BlockToolUse, ID: "1", Name: "R", Input: json.RawMessage(`{}`), InvalidInput: `{"text":`}, "not valid JSON"},
		{"input not fitting the schema", use("1", "R", `{"text":5}`), "invalid input for R"},
		{"panic", use("1", "Boom", `{"text":""}`), "crashed: kaput"},
		// Issue 29: a required field missing is an input error, before
		// any permission check.
		{"required field missing", use("1", "R", `{}`), "InputValidationError: invalid input for R, so the call was not run: text is required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := &fakeModel{turns: []func(*llm.Request) (*llm.Response, error){answer(c.call), answer(llm.TextBlock("recovered"))}}
			res, _, err := run(t, context.Background(), Config{Model: m, Tools: tool.NewPool(echo("R", true), boom)}, "go")
			if err != nil {
				t.Fatal(err)
			}
			r := res.Messages[2].Content[0]
			if !r.IsError || !strings.Contains(r.ResultText(), c.want) {
				t.Fatalf("result %+v, want error containing %q", r, c.want)
			}
			if res.Text != "recovered" {
				t.Fatalf("loop did not go on: %q", res.Text)
			}
		})
	}
}

func TestMaxTurns(t *testing.T) {
	t.Parallel()
	m := &fakeModel{turns: []func(*llm.Request) (*llm.Response, error){
		answer(use("1", "R", `{"text":"a"}`)), answer(use("2", "R", `{"text":"b"}`)), answer(llm.TextBlock("never")),
	}}
	rec := &memRecorder{}
	res, _, err := run(t, context.Background(), Config{Model: m, Tools: tool.NewPool(echo("R", true)), MaxTurns: 2, Recorder: rec}, "go")
	if err != nil {
		t.Fatal(err)
	}
	if !res.MaxTurnsHit || res.Turns != 2 || !strings.Contains(res.Text, "limit of 2 turns") {
		t.Fatalf("result %+v", res)
	}
	if len(rec.msgs) != 5 || rec.msgs[4].Role != llm.RoleUser {
		t.Fatalf("the last tool results must be recorded; got %d messages", len(rec.msgs))
	}
}

type denyAll struct{ calls atomic.Int32 }

func (d *denyAll) Authorize(_ context.Context, req permission.Request) (permission.Outcome, error) {
	d.calls.Add(1)
	if req.Tool == "W" {
		return permission.Outcome{Allowed: false, Message: "W is denied by rule W"}, nil
	}
	return permission.Outcome{Allowed: true}, nil
}

func TestAuthorizerDenies(t *testing.T) {
	t.Parallel()
	ran := false
	w := recTool{name: "W", run: func(context.Context, echoIn) (tool.Output, error) { ran = true; return tool.Output{}, nil }}.build()
	m := &fakeModel{turns: []func(*llm.Request) (*llm.Response, error){
		answer(use("1", "W", `{"text":"a"}`), use("2", "R", `{"text":"b"}`)), answer(llm.TextBlock("ok")),
	}}
	auth := &denyAll{}
	res, evs, err := run(t, context.Background(), Config{Model: m, Tools: tool.NewPool(w, echo("R", true)), Authorizer: auth}, "go")
	if err != nil {
		t.Fatal(err)
	}
	if ran || auth.calls.Load() != 2 {
		t.Fatalf("ran=%v calls=%d", ran, auth.calls.Load())
	}
	if r := res.Messages[2].Content[0]; !r.IsError || r.ResultText() != "W is denied by rule W" {
		t.Fatalf("denied result %+v", r)
	}
	var denied int
	for _, ev := range evs {
		if ev.Kind == ToolEnd && ev.ToolResult.Denied {
			denied++
		}
	}
	if denied != 1 {
		t.Fatalf("denied events %d", denied)
	}
}

func TestCancelDuringToolKeepsHistoryValid(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	block := recTool{name: "Block", run: func(ctx context.Context, _ echoIn) (tool.Output, error) {
		cancel()
		<-ctx.Done()
		return tool.Output{}, ctx.Err()
	}}.build()
	m := &fakeModel{turns: []func(*llm.Request) (*llm.Response, error){answer(use("1", "Block", `{"text":""}`), use("2", "Block", `{"text":""}`))}}
	rec := &memRecorder{}
	_, _, err := run(t, ctx, Config{Model: m, Tools: tool.NewPool(block), Recorder: rec}, "go")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	last := rec.msgs[len(rec.msgs)-1]
	if last.Role != llm.RoleUser || len(last.Content) != 2 || !strings.Contains(last.Content[1].ResultText(), "interrupted") {
		t.Fatalf("last recorded message %+v", last)
	}
}

func TestConsumerBreakStops(t *testing.T) {
	t.Parallel()
	m := &fakeModel{turns: []func(*llm.Request) (*llm.Response, error){answer(llm.TextBlock("hello")), answer(llm.TextBlock("x"))}}
	for ev, err := range Run(context.Background(), Config{Model: m, Tools: tool.NewPool()}, []llm.Message{llm.UserText("hi")}) {
		if err != nil || ev.Kind != TextDelta {
			t.Fatalf("got %+v %v", ev, err)
		}
		break
	}
}

func TestModelErrorEndsRun(t *testing.T) {
	t.Parallel()
	m := &fakeModel{turns: []func(*llm.Request) (*llm.Response, error){func(*llm.Request) (*llm.Response, error) {
		return nil, &llm.APIError{Status: 401, Type: "authentication_error", Message: "invalid x-api-key"}
	}}}
	_, _, err := run(t, context.Background(), Config{Model: m, Tools: tool.NewPool()}, "hi")
	var apiErr *llm.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 401 {
		t.Fatalf("err = %v", err)
	}
}

func TestConversationMustEndWithUser(t *testing.T) {
	t.Parallel()
	for _, err := range Run(context.Background(), Config{Model: &fakeModel{}}, nil) {
		if err == nil || !strings.Contains(err.Error(), "must end with a user message") {
			t.Fatalf("err = %v", err)
		}
	}
}

// instantModel answers every request at once with the same response.
type instantModel struct{ resp *llm.Response }

func (m instantModel) Stream(context.Context, *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) { yield(llm.Event{Kind: llm.EventDone, Response: m.resp}, nil) }
}

// BenchmarkTurn measures the loop's own cost of one turn — one model
// answer carrying one read-only tool call and the result going back — with
// a model that answers instantly and no HTTP.
func BenchmarkTurn(b *testing.B) {
	resp := &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{use("1", "R", `{"text":"a"}`)}}, StopReason: llm.StopToolUse}
	cfg := Config{Model: instantModel{resp}, Tools: tool.NewPool(echo("R", true)), MaxTurns: b.N}
	b.ReportAllocs()
	b.ResetTimer()
	for ev, err := range Run(context.Background(), cfg, []llm.Message{llm.UserText("go")}) {
		if err != nil {
			b.Fatal(err)
		}
		if ev.Kind == Done && ev.Result.Turns != b.N {
			b.Fatalf("turns %d", ev.Result.Turns)
		}
	}
}

func TestConsumerBreakDuringParallelTools(t *testing.T) {
	t.Parallel()
	m := &fakeModel{turns: []func(*llm.Request) (*llm.Response, error){
		answer(use("1", "R", `{"text":"a"}`), use("2", "R", `{"text":"b"}`), use("3", "R", `{"text":"c"}`)),
	}}
	ends := 0
	for ev, err := range Run(context.Background(), Config{Model: m, Tools: tool.NewPool(echo("R", true))}, []llm.Message{llm.UserText("go")}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == ToolEnd {
			ends++
			break // the other calls' ends must not be yielded after this
		}
	}
	if ends != 1 {
		t.Fatalf("ends %d", ends)
	}
}

func TestEmptyTextBlocksAreDropped(t *testing.T) {
	t.Parallel()
	m := &fakeModel{turns: []func(*llm.Request) (*llm.Response, error){answer(llm.TextBlock(""))}}
	res, _, err := run(t, context.Background(), Config{Model: m, Tools: tool.NewPool()}, "hi")
	if err != nil {
		t.Fatal(err)
	}
	last := res.Messages[len(res.Messages)-1]
	if len(last.Content) != 1 || last.Content[0].Text != "(no content)" {
		t.Fatalf("assistant message %+v", last)
	}
}

func TestPromptAfterToolResultsJoinsThem(t *testing.T) {
	t.Parallel()
	m := &fakeModel{turns: []func(*llm.Request) (*llm.Response, error){answer(llm.TextBlock("ok"))}}
	history := []llm.Message{
		llm.UserText("first"),
		{Role: llm.RoleAssistant, Content: []llm.Block{use("1", "R", `{}`)}},
		{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock("1", "r", false)}},
		llm.UserText("next prompt"),
	}
	rec := &memRecorder{}
	for ev, err := range Run(context.Background(), Config{Model: m, Tools: tool.NewPool(echo("R", true)), Recorder: rec}, history) {
		if err != nil {
			t.Fatal(err)
		}
		_ = ev
	}
	sent := m.reqs[0].Messages
	if len(sent) != 3 || sent[2].Role != llm.RoleUser || len(sent[2].Content) != 2 || sent[2].Content[1].Text != "next prompt" {
		t.Fatalf("sent %+v", sent)
	}
	// Only the new prompt is recorded: the tool results already were.
	if rec.msgs[0].Text() != "next prompt" || len(rec.msgs[0].Content) != 1 {
		t.Fatalf("recorded %+v", rec.msgs[0])
	}
}

// Issue 29: a call whose input does not fit the schema is an input error
// the model can fix, found before the authorizer is asked: never a
// denial, even from an authorizer that would deny it.
func TestInputErrorBeforeAuthorizer(t *testing.T) {
	t.Parallel()
	w := recTool{name: "W", run: func(context.Context, echoIn) (tool.Output, error) { return tool.Output{}, nil }}.build()
	m := &fakeModel{turns: []func(*llm.Request) (*llm.Response, error){
		answer(use("1", "W", `{}`), use("2", "W", `{"text":3}`)), answer(llm.TextBlock("ok")),
	}}
	auth := &denyAll{}
	res, evs, err := run(t, context.Background(), Config{Model: m, Tools: tool.NewPool(w), Authorizer: auth}, "go")
	if err != nil {
		t.Fatal(err)
	}
	if auth.calls.Load() != 0 {
		t.Fatalf("the authorizer was asked %d times about calls with bad input", auth.calls.Load())
	}
	for i, want := range []string{"text is required", "text must be a string, not a JSON number"} {
		r := res.Messages[2].Content[i]
		if !r.IsError || !strings.Contains(r.ResultText(), "InputValidationError") || !strings.Contains(r.ResultText(), want) {
			t.Errorf("result %d: %q, want an input error with %q", i, r.ResultText(), want)
		}
	}
	for _, ev := range evs {
		if ev.Kind == ToolEnd && ev.ToolResult.Denied {
			t.Errorf("call %s counted as denied", ev.Call.ID)
		}
	}
}
