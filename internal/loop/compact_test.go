package loop

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/hooks"
	"github.com/cadre-dev/cadre/internal/compact"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/tool"
)

// sized answers with blocks and reports a context of size tokens.
func sized(size int64, blocks ...llm.Block) func(*llm.Request) (*llm.Response, error) {
	return func(req *llm.Request) (*llm.Response, error) {
		resp, _ := answer(blocks...)(req)
		resp.Usage = llm.Usage{InputTokens: size - 5, OutputTokens: 5}
		return resp, nil
	}
}

// summaryAnswer answers a summary request, checking it is one.
func summaryAnswer(t *testing.T, summary string) func(*llm.Request) (*llm.Response, error) {
	return func(req *llm.Request) (*llm.Response, error) {
		last := req.Messages[len(req.Messages)-1].Content
		if !strings.HasPrefix(last[len(last)-1].Text, prompts.CompactInstructions("")[:60]) {
			t.Errorf("request answered as a summary is not one: %+v", last)
		}
		return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("<analysis>x</analysis><summary>" + summary + "</summary>")}},
			StopReason: llm.StopEndTurn, Usage: llm.Usage{InputTokens: 900, OutputTokens: 40}}, nil
	}
}

func tooLongErr() func(*llm.Request) (*llm.Response, error) {
	return func(*llm.Request) (*llm.Response, error) {
		return nil, &llm.APIError{Status: 400, Type: "invalid_request_error", Message: "prompt is too long: 9000 tokens > 8000 maximum"}
	}
}

// boundaryRec records messages and boundaries in order.
type boundaryRec struct {
	memRecorder
	bounds []Boundary
	order  []string
}

func (b *boundaryRec) AppendMessage(m llm.Message, model string, u *llm.Usage) error {
	b.order = append(b.order, string(m.Role))
	return b.memRecorder.AppendMessage(m, model, u)
}

func (b *boundaryRec) AppendBoundary(x Boundary) error {
	b.order = append(b.order, "boundary")
	b.bounds = append(b.bounds, x)
	return nil
}

// firer records hook inputs and answers with the outcome set per event.
type firer struct {
	mu  sync.Mutex
	ins []hooks.Input
	out map[hooks.Event]hooks.Outcome
}

func (f *firer) Fire(_ context.Context, in *hooks.Input) hooks.Outcome {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ins = append(f.ins, *in)
	return f.out[in.HookEventName]
}

func (f *firer) events() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, in := range f.ins {
		out = append(out, string(in.HookEventName)+":"+in.Trigger+in.Source)
	}
	return out
}

func compaction() *Compaction {
	return &Compaction{Thresholds: compact.Compute(8000, 0, 0), Auto: true, Transcript: "/t/a.jsonl",
		Keep: func(context.Context, []llm.Message) compact.Keep {
			return compact.Keep{Files: []compact.File{{Path: "/w/a.go", Content: "package a"}}, Todos: []prompts.CompactTodo{{Content: "finish", Status: "in_progress"}}}
		}}
}

func TestAutoCompactionAtThreshold(t *testing.T) {
	t.Parallel()
	m := &fakeModel{turns: []func(*llm.Request) (*llm.Response, error){
		sized(3000, use("t1", "R", `{"text":"a"}`)),
		sized(5200, use("t2", "R", `{"text":"b"}`)), // past 5,000: compact before the next request
		summaryAnswer(t, "did a and b"),
		sized(1200, llm.TextBlock("done")),
	}}
	rec := &boundaryRec{}
	f := &firer{out: map[hooks.Event]hooks.Outcome{hooks.PreCompact: {Context: []string{"keep the ids"}}}}
	cfg := Config{Model: m, ModelID: "m", System: "sys", Tools: tool.NewPool(echo("R", true)), Recorder: rec, Compaction: compaction(), Hooks: f,
		CacheHints: []llm.CacheHint{{Message: 0, Block: 0}}}
	res, evs, err := run(t, context.Background(), cfg, "do the work")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "done" || len(m.reqs) != 4 {
		t.Fatalf("text %q after %d requests", res.Text, len(m.reqs))
	}
	sum, post := m.reqs[2], m.reqs[3]
	// The summary request: the same system and tools, the whole
	// conversation, the instructions with the hook's text last.
	if sum.System != "sys" || len(sum.Tools) != 1 || len(sum.Messages) != 5 {
		t.Fatalf("summary request: system %q, %d tools, %d messages", sum.System, len(sum.Tools), len(sum.Messages))
	}
	last := sum.Messages[4].Content
	if last[0].Type != llm.BlockToolResult || last[len(last)-1].Text != prompts.CompactInstructions("keep the ids") {
		t.Fatalf("summary request's last message: %+v", last)
	}
	// The post-compaction request: one user message with the summary and
	// what survived; system and tools unchanged; no stale cache hints.
	if post.System != sum.System || len(post.Tools) != 1 || post.Tools[0].Name != sum.Tools[0].Name || len(post.CacheHints) != 0 {
		t.Fatalf("post request changed system/tools or kept hints: %+v", post)
	}
	if len(post.Messages) != 1 || post.Messages[0].Role != llm.RoleUser {
		t.Fatalf("post request messages: %+v", post.Messages)
	}
	text := messageText(post.Messages[0])
	for _, want := range []string{"did a and b", "/t/a.jsonl", "/w/a.go", "[in_progress] finish", prompts.CompactContinue()} {
		if !strings.Contains(text, want) {
			t.Errorf("post-compaction message lacks %q:\n%s", want, text)
		}
	}
	var start, end *Boundary
	for _, ev := range evs {
		switch ev.Kind {
		case CompactStart:
			start = ev.Compact
		case CompactEnd:
			end = ev.Compact
		}
	}
	if start == nil || end == nil || end.Trigger != compact.Auto || end.PreTokens != 5200 || end.PostTokens <= 0 || end.PostTokens >= 5200 || end.Usage.InputTokens != 900 {
		t.Fatalf("events: start %+v end %+v", start, end)
	}
	// The summary request counts in the run's usage.
	if res.Usage.InputTokens != 2995+5195+900+1195 {
		t.Fatalf("usage %+v", res.Usage)
	}
	if got := strings.Join(f.events(), " "); !strings.Contains(got, "PreCompact:auto SessionStart:compact PostCompact:auto") {
		t.Fatalf("hooks fired: %s", got)
	}
	// The record: the whole history, then the boundary, then the new start.
	if got := strings.Join(rec.order, " "); got != "user assistant user assistant user boundary user assistant" {
		t.Fatalf("record order: %s", got)
	}
	if len(res.Messages) != 2 {
		t.Fatalf("result holds %d messages, want the compacted 2", len(res.Messages))
	}
}

func TestWarningBeforeThreshold(t *testing.T) {
	t.Parallel()
	m := &fakeModel{turns: []func(*llm.Request) (*llm.Response, error){
		sized(4100, use("t1", "R", `{"text":"a"}`)),
		sized(4200, use("t2", "R", `{"text":"b"}`)),
		sized(4300, llm.TextBlock("done")),
	}}
	_, evs, err := run(t, context.Background(), Config{Model: m, Tools: tool.NewPool(echo("R", true)), Compaction: compaction()}, "go")
	if err != nil {
		t.Fatal(err)
	}
	warnings := 0
	for _, ev := range evs {
		if ev.Kind == ContextWarning {
			warnings++
		}
		if ev.Kind == CompactStart {
			t.Fatal("compacted below the threshold")
		}
	}
	if warnings != 1 {
		t.Fatalf("%d warnings, want 1", warnings)
	}
}

func TestPromptTooLongCompactsOnceAndRetries(t *testing.T) {
	t.Parallel()
	m := &fakeModel{turns: []func(*llm.Request) (*llm.Response, error){
		sized(3000, use("t1", "R", `{"text":"a"}`)),
		tooLongErr(),
		summaryAnswer(t, "s"),
		sized(1000, llm.TextBlock("done")),
	}}
	res, _, err := run(t, context.Background(), Config{Model: m, Tools: tool.NewPool(echo("R", true)), Compaction: compaction()}, "go")
	if err != nil || res.Text != "done" {
		t.Fatalf("res %+v err %v", res, err)
	}
	if len(m.reqs[3].Messages) != 1 {
		t.Fatal("retry did not send the compacted conversation")
	}
}

func TestAlwaysTooLongEndsWithClearError(t *testing.T) {
	t.Parallel()
	// Every agent request is refused; summaries succeed: one compaction,
	// then a clear error, no loop.
	m := &fakeModel{}
	for range 20 {
		m.turns = append(m.turns, tooLongErr(), summaryAnswer(t, "s"))
	}
	_, _, err := run(t, context.Background(), Config{Model: m, Tools: tool.NewPool(), Compaction: compaction()}, "go")
	if err == nil || !strings.Contains(err.Error(), "still too long for the model right after compaction") || !compact.PromptTooLong(err) {
		t.Fatalf("err = %v", err)
	}
	if len(m.reqs) != 3 {
		t.Fatalf("%d requests, want 3 (refused, summary, refused)", len(m.reqs))
	}
	// Summaries refused too: trims, then a clear error.
	m2 := &fakeModel{}
	for range 20 {
		m2.turns = append(m2.turns, tooLongErr())
	}
	_, _, err = run(t, context.Background(), Config{Model: m2, Tools: tool.NewPool(), Compaction: compaction()}, "go")
	if err == nil || !strings.Contains(err.Error(), "compact the conversation") {
		t.Fatalf("err = %v", err)
	}
	if len(m2.reqs) > 2+maxTrims {
		t.Fatalf("%d requests", len(m2.reqs))
	}
	// Compaction off: the error as it was.
	m3 := &fakeModel{turns: m2.turns}
	_, _, err = run(t, context.Background(), Config{Model: m3, Tools: tool.NewPool()}, "go")
	if err == nil || len(m3.reqs) != 1 {
		t.Fatalf("err %v after %d requests", err, len(m3.reqs))
	}
}

func TestBreakerStopsThrashing(t *testing.T) {
	t.Parallel()
	// Each answer fills the context again: compact after every turn.
	m := &fakeModel{}
	for i := range 20 {
		m.turns = append(m.turns, sized(7000, use("t"+string(rune('a'+i)), "R", `{"text":"x"}`)), summaryAnswer(t, "s"))
	}
	_, _, err := run(t, context.Background(), Config{Model: m, Tools: tool.NewPool(echo("R", true)), Compaction: compaction()}, "go")
	if err == nil || err.Error() != prompts.CompactThrashing(3, 3) {
		t.Fatalf("err = %v", err)
	}
	if len(m.reqs) != 8 {
		t.Fatalf("%d requests, want 8 (4 turns, 4 compactions)", len(m.reqs))
	}
}

func TestPreCompactBlockStopsIt(t *testing.T) {
	t.Parallel()
	f := &firer{out: map[hooks.Event]hooks.Outcome{hooks.PreCompact: {Blocked: true, Feedback: []string{"not now"}}}}
	m := &fakeModel{turns: []func(*llm.Request) (*llm.Response, error){
		sized(5500, use("t1", "R", `{"text":"a"}`)),
		sized(5600, llm.TextBlock("done")),
	}}
	res, _, err := run(t, context.Background(), Config{Model: m, Tools: tool.NewPool(echo("R", true)), Compaction: compaction(), Hooks: f}, "go")
	if err != nil || res.Text != "done" || len(m.reqs) != 2 {
		t.Fatalf("auto compaction not skipped: %v %d", err, len(m.reqs))
	}
	// Manual: the stop is the error.
	for _, err := range Compact(context.Background(), Config{Model: m, Tools: tool.NewPool(), Compaction: compaction(), Hooks: f}, res.Messages, "") {
		if !IsCompactBlocked(err) || !strings.Contains(err.Error(), "not now") {
			t.Fatalf("err = %v", err)
		}
	}
}

func TestManualCompact(t *testing.T) {
	t.Parallel()
	m := &fakeModel{turns: []func(*llm.Request) (*llm.Response, error){summaryAnswer(t, "all of it")}}
	msgs := []llm.Message{llm.UserText("task"), {Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("ok")}}}
	var end *Boundary
	for ev, err := range Compact(context.Background(), Config{Model: m, System: "sys", Tools: tool.NewPool(), Compaction: compaction()}, msgs, "focus") {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == CompactEnd {
			end = ev.Compact
		}
	}
	if end == nil || end.Trigger != compact.Manual || len(end.Messages) != 1 || !strings.Contains(messageText(end.Messages[0]), "all of it") {
		t.Fatalf("end %+v", end)
	}
	// After an answer, the instructions are a user message of their own.
	sum := m.reqs[0]
	if len(sum.Messages) != 3 || !strings.HasSuffix(messageText(sum.Messages[2]), "focus") {
		t.Fatalf("summary request %+v", sum.Messages)
	}
}

func TestDroppedInputIsNotCounted(t *testing.T) {
	t.Parallel()
	over := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockToolUse, ID: "t", Name: "W", Input: []byte(`{}`), InputOverLimit: 1 << 20}}}
	if got := compactSize(llm.Usage{InputTokens: 4000, OutputTokens: 262_000}, over); got > 4100 {
		t.Fatalf("size %d counts the dropped input", got)
	}
	plain := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("hi")}}
	if got := compactSize(llm.Usage{InputTokens: 4000, CacheReadTokens: 100, OutputTokens: 50}, plain); got != 4150 {
		t.Fatalf("size %d", got)
	}
}

// tokenBudget is a Budget that only counts what it is charged.
type tokenBudget struct {
	mu      sync.Mutex
	charged []llm.Usage
}

func (b *tokenBudget) Check() BudgetLevel { return BudgetUnder }
func (b *tokenBudget) Charge(_ string, u llm.Usage) BudgetLevel {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.charged = append(b.charged, u)
	return BudgetUnder
}
func (b *tokenBudget) WrapUp() string { return "" }
func (b *tokenBudget) What() string   { return "tokens" }

// The summary request of a compaction is charged to the agent's budget
// like every other model request (issue 27 point 6).
func TestCompactionChargesTheBudget(t *testing.T) {
	t.Parallel()
	m := &fakeModel{turns: []func(*llm.Request) (*llm.Response, error){
		sized(5200, use("t1", "R", `{"text":"a"}`)),
		summaryAnswer(t, "did a"),
		sized(1200, llm.TextBlock("done")),
	}}
	b := &tokenBudget{}
	cfg := Config{Model: m, ModelID: "m", System: "sys", Tools: tool.NewPool(echo("R", true)), Compaction: compaction(), Budget: b}
	if _, _, err := run(t, context.Background(), cfg, "do the work"); err != nil {
		t.Fatal(err)
	}
	if len(b.charged) != 3 || b.charged[1] != (llm.Usage{InputTokens: 900, OutputTokens: 40}) {
		t.Fatalf("charged %+v, want the three requests with the summary's in the middle", b.charged)
	}
}
