package loop

import (
	"context"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// An assistant event names the answer, the model that gave it, why it
// stopped and how long its request took, for Claude Code-shaped output.
func TestAssistantEventDescribesItsRequest(t *testing.T) {
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { clock = clock.Add(250 * time.Millisecond); return clock }
	m := &fakeModel{turns: []func(*llm.Request) (*llm.Response, error){
		func(*llm.Request) (*llm.Response, error) {
			return &llm.Response{ID: "msg_1", Model: "claude-test-20260101", StopReason: llm.StopEndTurn,
				Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("hi")}}}, nil
		},
		func(*llm.Request) (*llm.Response, error) {
			return &llm.Response{StopReason: llm.StopEndTurn,
				Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("again")}}}, nil
		},
	}}
	cfg := Config{Model: m, ModelID: "claude-test", Tools: tool.NewPool(), Now: now}
	var got []Event
	for _, prompt := range []string{"one", "two"} {
		for ev, err := range Run(context.Background(), cfg, []llm.Message{llm.UserText(prompt)}) {
			if err != nil {
				t.Fatal(err)
			}
			if ev.Kind == AssistantMessage {
				got = append(got, ev)
			}
		}
	}
	if len(got) != 2 {
		t.Fatalf("%d assistant events", len(got))
	}
	if e := got[0]; e.MessageID != "msg_1" || e.Model != "claude-test-20260101" || e.StopReason != llm.StopEndTurn || e.APIDuration != 250*time.Millisecond {
		t.Fatalf("first event %+v", e)
	}
	// A provider that names no model: the requested id stands in.
	if e := got[1]; e.MessageID != "" || e.Model != "claude-test" {
		t.Fatalf("second event %+v", e)
	}
}
