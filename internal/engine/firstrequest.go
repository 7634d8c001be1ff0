package engine

import (
	"context"
	"iter"
	"net/http/httptrace"
	"strings"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/transcript"
)

// A sub-agent's first request goes out before its files are created
// (issue 24): its transcript and .meta.json wait in the journal
// (transcript.Hold) until the request is written to the connection, and
// are created once every sibling starting with it sent its own, or at
// its first answer. Creating two files a child was the largest CPU item
// between a parent's answer and its children's first requests.
//
// A child killed before its first answer then leaves no file; nothing a
// resume needs is lost: its prompt, type and description are in its
// parent's transcript (the Agent call), and it had said nothing yet.
// Teammates are not held: a team's resume reads every teammate's
// transcript (teamresume.go).

// holdFiles starts holding c's transcript and metadata on its run's
// journal, once: when it is started, in the order its parent made the
// calls, so that a burst of siblings is held before the first of them
// sends (a child queued behind the running cap, when it runs). Nothing
// is held (nil) without transcripts, for a teammate or a remote child,
// or with a model whose request going out cannot be seen (one that is
// not HTTP: in process, its request is the call).
func holdFiles(c *agent) *transcript.Hold {
	if c.held != nil {
		return c.held
	}
	tpath := c.transcriptPath()
	if c.run.journal == nil || tpath == "" || c.member != nil || c.isolation == agentdef.IsolationRemote || !llm.OverHTTP(c.run.rt.cfg.Model) {
		return nil
	}
	c.held = c.run.journal.Hold(tpath, strings.TrimSuffix(tpath, ".jsonl")+".meta.json")
	return c.held
}

// heldUntilSent is m for an agent whose files are held: its first
// request releases them. Without a hold (or once released) it is m.
func heldUntilSent(m llm.Model, h *transcript.Hold) llm.Model {
	if h.Released() {
		return m
	}
	return heldModel{m, h}
}

// heldModel releases its hold when its first request is out: written to
// the connection (net/http's client trace), or at the latest at its
// first event or the stream's end.
type heldModel struct {
	llm.Model
	hold *transcript.Hold
}

// Stream streams m's answer, releasing the hold as the request goes out.
func (m heldModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	if m.hold.Released() {
		return m.Model.Stream(ctx, req)
	}
	h := m.hold
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { h.Release() }})
	return func(yield func(llm.Event, error) bool) {
		defer h.Release()
		for ev, err := range m.Model.Stream(ctx, req) {
			h.Release()
			if !yield(ev, err) {
				return
			}
		}
	}
}
