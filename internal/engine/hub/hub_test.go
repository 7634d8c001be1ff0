package hub

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/run"
)

// Events sent while no stream is attached wait for the next one, which
// gets them first and in order: text pieces dropped, a task's progress
// kept only as its latest, lifecycle events always.
func TestHeldEventsReachTheNextStream(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var h Hub
	for _, ev := range []run.Event{
		{Type: run.EventTaskStarted, AgentID: "a"},
		{Type: run.EventText, AgentID: "a", Text: "piece"},
		{Type: run.EventTaskProgress, AgentID: "a", Text: "1"},
		{Type: run.EventTaskProgress, AgentID: "b", Text: "1"},
		{Type: run.EventTaskProgress, AgentID: "a", Text: "2"},
		{Type: run.EventNotification, AgentID: "a"},
	} {
		if err := h.Send(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	ch := make(chan Item, 16)
	h.Attach(ctx, ch)
	if err := h.Send(ctx, run.Event{Type: run.EventText, AgentID: "a", Text: "live"}); err != nil {
		t.Fatal(err)
	}
	h.Detach()
	close(ch)
	var got []string
	for it := range ch {
		got = append(got, fmt.Sprintf("%s %s %s", it.Ev.Type, it.Ev.AgentID, it.Ev.Text))
	}
	want := []string{
		fmt.Sprintf("%s a ", run.EventTaskStarted),
		fmt.Sprintf("%s b 1", run.EventTaskProgress),
		fmt.Sprintf("%s a 2", run.EventTaskProgress),
		fmt.Sprintf("%s a ", run.EventNotification),
		fmt.Sprintf("%s a live", run.EventText),
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
}

// Past maxHeld, the oldest event that is not a task lifecycle event or a
// notification goes first.
func TestHeldEventsStayBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var h Hub
	if err := h.Send(ctx, run.Event{Type: run.EventTaskStarted, AgentID: "a"}); err != nil {
		t.Fatal(err)
	}
	for i := range maxHeld + 10 {
		if err := h.Send(ctx, run.Event{Type: run.EventToolStart, AgentID: "a", Text: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	ch := make(chan Item, maxHeld+20)
	h.Attach(ctx, ch)
	h.Detach()
	close(ch)
	var got []run.Event
	for it := range ch {
		got = append(got, it.Ev)
	}
	if len(got) != maxHeld {
		t.Fatalf("%d events held, want %d", len(got), maxHeld)
	}
	if got[0].Type != run.EventTaskStarted {
		t.Errorf("first held %s, want the task start", got[0].Type)
	}
	if last := got[len(got)-1].Text; last != fmt.Sprint(maxHeld+9) {
		t.Errorf("last held %q, want the newest", last)
	}
}
