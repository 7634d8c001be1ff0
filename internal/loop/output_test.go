package loop

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// gate is an Output whose answer is given by the tool "O" with text "ok";
// every other call of O and every reminder spends an attempt.
type gate struct {
	mu            sync.Mutex
	done          bool
	attempts, max int
	reminders     int
}

func (g *gate) Done() bool { g.mu.Lock(); defer g.mu.Unlock(); return g.done }
func (g *gate) Exhausted() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return !g.done && g.attempts >= g.max
}
func (g *gate) Remind() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.attempts++
	g.reminders++
	return "CALL O NOW"
}

func (g *gate) tool() tool.Tool {
	return recTool{name: "O", run: func(_ context.Context, in echoIn) (tool.Output, error) {
		g.mu.Lock()
		defer g.mu.Unlock()
		if in.Text == "ok" {
			g.done = true
			return tool.Output{Text: "accepted"}, nil
		}
		g.attempts++
		return tool.Output{Text: "mismatch", IsError: true}, nil
	}}.build()
}

func TestOutputEndsTurnWhenGiven(t *testing.T) {
	t.Parallel()
	g := &gate{max: 5}
	m := &fakeModel{turns: []func(*llm.Request) (*llm.Response, error){
		answer(llm.TextBlock("prose first")),
		answer(use("1", "O", `{"text":"bad"}`)),
		answer(llm.TextBlock("here it is"), use("2", "O", `{"text":"ok"}`)),
		answer(llm.TextBlock("never asked")),
	}}
	res, _, err := run(t, context.Background(), Config{Model: m, Tools: tool.NewPool(g.tool()), Output: g}, "go")
	if err != nil {
		t.Fatal(err)
	}
	if res.OutputExhausted || res.Turns != 3 || res.Text != "here it is" || len(m.reqs) != 3 {
		t.Fatalf("result %+v after %d requests", res, len(m.reqs))
	}
	if got := m.reqs[1].Messages[len(m.reqs[1].Messages)-1].Text(); got != "CALL O NOW" || g.reminders != 1 {
		t.Fatalf("after prose the model got %q (%d reminders)", got, g.reminders)
	}
}

func TestOutputExhausted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		turns []func(*llm.Request) (*llm.Response, error)
		reqs  int
	}{
		{"bad calls", []func(*llm.Request) (*llm.Response, error){answer(use("1", "O", `{"text":"a"}`)), answer(use("2", "O", `{"text":"b"}`))}, 2},
		{"no calls", []func(*llm.Request) (*llm.Response, error){answer(llm.TextBlock("a")), answer(llm.TextBlock("b"))}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := &gate{max: 2}
			m := &fakeModel{turns: append(tc.turns, answer(llm.TextBlock("never")))}
			res, _, err := run(t, context.Background(), Config{Model: m, Tools: tool.NewPool(g.tool()), Output: g}, "go")
			if err != nil {
				t.Fatal(err)
			}
			if !res.OutputExhausted || len(m.reqs) != tc.reqs {
				t.Fatalf("result %+v after %d requests", res, len(m.reqs))
			}
		})
	}
}

func TestOutputRemindersStopAtMaxTurns(t *testing.T) {
	t.Parallel()
	g := &gate{max: 10}
	m := &fakeModel{turns: []func(*llm.Request) (*llm.Response, error){answer(llm.TextBlock("a")), answer(llm.TextBlock("b")), answer(llm.TextBlock("c"))}}
	res, _, err := run(t, context.Background(), Config{Model: m, Tools: tool.NewPool(g.tool()), Output: g, MaxTurns: 2}, "go")
	if err != nil {
		t.Fatal(err)
	}
	if !res.MaxTurnsHit || res.OutputExhausted || len(m.reqs) != 2 || !strings.Contains(res.Text, "limit of 2 turns") {
		t.Fatalf("result %+v after %d requests", res, len(m.reqs))
	}
}
