package engine

import (
	"context"
	"iter"
	"strings"
	"sync"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
	"github.com/cadre-dev/cadre/transcript"
)

// A sub-agent's first request goes out before its files are created
// (issue 24): its transcript and .meta.json wait in the journal
// (transcript.Hold) until the request has reached the server (its answer
// started), and are created once every sibling starting with it got that
// far too, or a second after. Creating two files a child was the largest
// CPU item between a parent's answer and its children's first requests.
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
// or with a model that answers in process (llm.OverHTTP: no server to
// leave the machine to).
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

// heldModel releases its hold when its first request has reached the
// server: at the stream's first event (the answer has started), or its
// end (an error). Not when the request is written: the server has yet to
// read it then, and on a machine whose cores are all busy the files
// created at that moment delay the server as much as the child.
type heldModel struct {
	llm.Model
	hold *transcript.Hold
}

// Stream streams m's answer, releasing the hold as it starts.
func (m heldModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	if m.hold.Released() {
		return m.Model.Stream(ctx, req)
	}
	h := m.hold
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

// burst is an agent's Agent calls of one answer while they start. The
// calls run at once, but a child's goroutine can build and send its first
// request before the calls after it have run at all: the journal would
// see no sibling held and write the first child's files in the middle of
// the burst. So the first call of an answer to run holds a place (a
// pathless transcript.Hold) for every other Agent call of the answer;
// each call gives its place back once its child's own hold is in (or it
// started none).
type burst struct {
	mu sync.Mutex
	// key is the first Agent call's id in the answer the places are for.
	key    string
	places map[string]*transcript.Hold
}

// burstOf is a's burst.
func burstOf(a *agent) *burst { return &a.burst }

// enter is the place held for call (nil when none: the first call of its
// answer to run, a lone call, no transcripts or a model whose requests
// are not held). The caller releases it once its child is started.
func (bu *burst) enter(a *agent, call tool.Call) *transcript.Hold {
	if a.run.journal == nil || len(call.Conversation) == 0 || !llm.OverHTTP(a.run.rt.cfg.Model) {
		return nil
	}
	answer := call.Conversation[len(call.Conversation)-1].Content
	key, n := "", 0
	for i := range answer {
		if isAgentCall(&answer[i]) {
			if key == "" {
				key = answer[i].ID
			}
			n++
		}
	}
	if n < 2 {
		return nil
	}
	bu.mu.Lock()
	defer bu.mu.Unlock()
	if bu.key == key {
		h := bu.places[call.ID]
		delete(bu.places, call.ID)
		return h
	}
	bu.releaseLocked() // an earlier answer's calls that never ran
	bu.key, bu.places = key, make(map[string]*transcript.Hold, n-1)
	for i := range answer {
		if b := &answer[i]; isAgentCall(b) && b.ID != call.ID {
			bu.places[b.ID] = a.run.journal.Hold()
		}
	}
	return nil
}

// end gives back the places of calls that never ran (denied before they
// reached the spawn path, or a turn cut short).
func (bu *burst) end() {
	bu.mu.Lock()
	defer bu.mu.Unlock()
	bu.releaseLocked()
}

func (bu *burst) releaseLocked() {
	for _, h := range bu.places {
		h.Release()
	}
	bu.places = nil
}

// isAgentCall reports whether b calls the Agent tool.
func isAgentCall(b *llm.Block) bool {
	return b.Type == llm.BlockToolUse && (b.Name == AgentToolName || b.Name == tool.Task)
}
