package tui

import (
	"context"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/run"
)

// TestTodosFromTheRuntime: the main agent writes a todo list with
// TodoWrite in a real session; the call shows the checklist and, while the
// turn runs, the spinner says what is in progress and how far the list is.
func TestTodosFromTheRuntime(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	t.Cleanup(func() { srv.Check(t) })
	srv.Script("TODO", llmtest.ToolUse("TodoWrite", map[string]any{"todos": []map[string]any{
		{"content": "Read the cart code", "status": "completed", "activeForm": "Reading the cart code"},
		{"content": "Run the tests", "status": "in_progress", "activeForm": "Running the tests"},
		{"content": "Fix the rounding", "status": "pending", "activeForm": "Fixing the rounding"},
	}}), llmtest.Text("On it."))
	rt := realRuntime(t, srv)
	t.Cleanup(func() { _ = rt.Close() })
	m := testModel(t, 100, 30, nil)
	typeText(m, "TODO fix the cart")
	press(m, "enter")
	f := &feeder{m: m, at: t0}
	sawTodos := false
	for ev, err := range rt.Run(context.Background(), "TODO fix the cart") {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == run.EventResult {
			// Before the turn ends: the spinner still shows.
			has(t, view(t, m), "Running the tests… (", "todos 1/3")
		}
		sawTodos = sawTodos || ev.Type == run.EventTodos
		f.ev(ev)
	}
	if !sawTodos {
		t.Fatal("the runtime sent no todo event")
	}
	f.end()
	has(t, view(t, m), "TodoWrite(3 todos)", "☒ Read the cart code", "◼ Run the tests", "☐ Fix the rounding", "On it.")
}
