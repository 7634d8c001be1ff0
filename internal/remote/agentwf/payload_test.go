package agentwf

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cadre-dev/cadre/internal/remote/workspace"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/run"
)

// cut keeps short text as it is and cuts long text at a character
// boundary, saying how much there was.
func TestCutKeepsCharactersWhole(t *testing.T) {
	if got := cut("short", 10); got != "short" {
		t.Fatalf("cut(short) = %q", got)
	}
	s := strings.Repeat("é", 100) // 200 bytes
	got := cut(s, 51)
	head, _, ok := strings.Cut(got, "\n\n")
	if !ok || len(head) != 50 || !utf8.ValidString(head) || !strings.Contains(got, "the first 50 of 200 bytes") {
		t.Fatalf("cut = %q", got)
	}
}

// A result with a huge block becomes the block's text alone, cut.
func TestFitResultCutsTextAndBlock(t *testing.T) {
	big := strings.Repeat("x", 5000)
	done := ToolDone{Result: run.ToolResult{Text: big}, Block: llm.ToolResultBlock("toolu_1", big, true)}
	fitResult(&done, 1000)
	if len(done.Result.Text) > 1300 || len(done.Block.ResultText()) > 1300 || done.Block.ToolUseID != "toolu_1" || !done.Block.IsError {
		t.Fatalf("result %d bytes, block %d bytes %+v", len(done.Result.Text), len(done.Block.ResultText()), done.Block.IsError)
	}
}

// An output over one payload sheds its conversation, then the bodies of
// its oldest events, until it fits; one that fits is left whole.
func TestFitOutputShedsWhatTheLauncherHasHad(t *testing.T) {
	msg := llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock(strings.Repeat("m", 400_000))}}
	out := &Output{Messages: []llm.Message{msg}}
	fitOutput(out)
	if out.MessagesOmitted || len(out.Messages) != 1 {
		t.Fatalf("a small output was changed: %+v", out.MessagesOmitted)
	}
	for range 8 {
		out.Messages = append(out.Messages, msg)
		out.Events = append(out.Events, run.Event{Type: run.EventUser, Message: &msg})
	}
	fitOutput(out)
	if !out.MessagesOmitted || out.Messages != nil || out.EventsTrimmed == 0 || payloadSize(out) > PayloadLimit {
		t.Fatalf("omitted %v, trimmed %d, size %d", out.MessagesOmitted, out.EventsTrimmed, payloadSize(out))
	}
	if last := out.Events[len(out.Events)-1]; last.Message == nil {
		t.Fatal("the newest event lost its body before the oldest")
	}
	for i, ev := range out.Events[:out.EventsTrimmed] {
		if ev.Message != nil {
			t.Fatalf("event %d kept its body", i)
		}
	}
}

// Tool outputs of the oldest events go too, and as a last resort the
// work, which then says why it did not come back.
func TestFitOutputDropsToolOutputsThenTheWork(t *testing.T) {
	out := &Output{}
	for range 8 {
		out.Events = append(out.Events, run.Event{Type: run.EventToolEnd, ToolResult: &run.ToolResult{Text: strings.Repeat("t", 400_000)}})
	}
	fitOutput(out)
	if payloadSize(out) > PayloadLimit || out.EventsTrimmed == 0 || out.Events[0].ToolResult.Text != "" || out.Events[7].ToolResult.Text == "" {
		t.Fatalf("size %d, trimmed %d", payloadSize(out), out.EventsTrimmed)
	}
	work := &Output{Work: &workspace.Result{Bundle: make([]byte, 3<<20)}}
	fitOutput(work)
	if work.Work != nil || !strings.Contains(work.WorkError, "git bundle") || payloadSize(work) > PayloadLimit {
		t.Fatalf("work %v, error %q", work.Work != nil, work.WorkError)
	}
}

// A query for a long agent's events answers a page that fits, and the
// pages together are every event once, in order.
func TestEventsPageFitsAndCoversAll(t *testing.T) {
	var evs []run.Event
	for i := range 12 {
		evs = append(evs, run.Event{Type: run.EventToolEnd, MessageID: fmt.Sprint(i), ToolResult: &run.ToolResult{Text: strings.Repeat("r", 300_000)}})
	}
	var got []string
	for from := 0; from < len(evs); {
		page := eventsPage(evs, from)
		if len(page) == 0 || payloadSize(page) > PayloadLimit {
			t.Fatalf("page from %d: %d events, %d bytes", from, len(page), payloadSize(page))
		}
		for _, ev := range page {
			got = append(got, ev.MessageID)
		}
		from += len(page)
	}
	if strings.Join(got, ",") != "0,1,2,3,4,5,6,7,8,9,10,11" {
		t.Fatalf("pages cover %v", got)
	}
	if len(eventsPage(evs, len(evs))) != 0 {
		t.Fatal("a page past the end is not empty")
	}
}
