package agentwf

// Payload sizes (issue 26): every model call carries the agent's whole
// conversation as one activity input, and the workflow's result carries
// it again with the agent's events; Temporal refuses a payload over its
// blob size limit (2 MB by default), and a workflow whose command carries
// one does not fail cleanly — its task is retried for ever. So big tool
// results are cut on the worker (MaxResultBytes, as MCP results are cut
// on the launcher), a model call that would not fit ends the agent with
// an error naming the limit, and a result that would not fit sheds what
// the launcher has had already (fitOutput).

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/run"
)

// PayloadLimit is the largest payload the agent workflow sends: an
// activity's input, its own result. It is Temporal's default blob size
// limit (2 MiB) less room for the envelope around the payload.
const PayloadLimit = 2<<20 - 64<<10

// MaxResultBytes is the most of one tool result that travels back from a
// worker; the rest is cut, with a note saying how much there was.
const MaxResultBytes = 100_000

// payloadSize is the size of v as the workflow's payloads encode it
// (JSON); deterministic, so the workflow may decide on it.
func payloadSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}

// cut returns s cut to at most max bytes (at a character boundary) and a
// note saying how much there was; s itself when it fits.
func cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "\n\n" + prompts.RemoteResultTruncated(n, len(s))
}

// fitResult cuts a tool call's result to max bytes: the event's text, and
// the block the model reads (a block bigger than that, images included,
// becomes its text alone, cut).
func fitResult(done *ToolDone, max int) {
	done.Result.Text = cut(done.Result.Text, max)
	if payloadSize(done.Block) <= max+1024 {
		return
	}
	done.Block = llm.ToolResultBlock(done.Block.ToolUseID, cut(done.Block.ResultText(), max), done.Block.IsError)
}

// fitOutput makes out fit in one payload: first without the conversation
// (its Messages, which only continuing the finished workflow by its
// handle needs; MessagesOmitted says so), then without the message bodies
// and tool outputs of its oldest events, which the launcher has read while
// the agent ran, and as a last resort without its work (WorkError says
// why).
func fitOutput(out *Output) {
	if payloadSize(out) <= PayloadLimit {
		return
	}
	out.Messages, out.MessagesOmitted = nil, true
	size := payloadSize(out)
	for i := range out.Events {
		if size <= PayloadLimit {
			return
		}
		ev := &out.Events[i]
		if ev.Message == nil && (ev.ToolResult == nil || ev.ToolResult.Text == "") {
			continue
		}
		if ev.Message != nil {
			size -= payloadSize(ev.Message)
			ev.Message = nil
		}
		if ev.ToolResult != nil && ev.ToolResult.Text != "" {
			tr := *ev.ToolResult
			size -= len(tr.Text)
			tr.Text = ""
			ev.ToolResult = &tr
		}
		out.EventsTrimmed++
	}
	if size = payloadSize(out); size > PayloadLimit && out.Work != nil {
		// Its work alone is too big to come back with the result: said so,
		// rather than a result the server refuses for ever.
		out.WorkError = prompts.RemoteWorkTooLarge(len(out.Work.Bundle), PayloadLimit)
		out.Work = nil
	}
}

// eventsPage is the events from index from on that fit in half a payload
// (at least one): a query's answer is a payload too, and a launcher that
// reads a long agent's events from its first (re-attached) asks again
// from where the page ended.
func eventsPage(events []run.Event, from int) []run.Event {
	size := 0
	for i := from; i < len(events); i++ {
		size += payloadSize(events[i])
		if size > PayloadLimit/2 && i > from {
			return events[from:i]
		}
	}
	return events[from:]
}
