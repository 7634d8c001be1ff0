package engine

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/tool"
	"github.com/cadre-dev/cadre/transcript"
)

// Continuing a finished agent (S-8.2): a SendMessage to an agent that has
// ended — in this process, or interrupted by a crash of an earlier one —
// starts it again in the background with its whole conversation read back
// from its transcript and the message as its next user turn. It keeps its
// id, type and transcript (the new turns are appended to it), becomes a
// child of the agent that sent the message, and notifies that agent when
// it ends, like any background child. One-shot types and forks cannot be
// continued.

// resumedFrom marks an agent continued with SendMessage: its first
// request's last message holds kept blocks that are in its transcript
// already (the turn the earlier run never got an answer for).
type resumedFrom struct {
	kept int
}

// resumeRecorder wraps the transcript recorder of a continued agent so
// that the history read back from the file is not written again: of the
// first message recorded (the continuation's user turn) only the blocks
// after the kept ones are appended; transcript.Messages joins the two
// user entries back into one message.
func (c *agent) resumeRecorder(rec loop.Recorder) loop.Recorder {
	if c.resumed == nil || rec == nil {
		return rec
	}
	return &skipRecorder{rec: rec, skip: c.resumed.kept}
}

type skipRecorder struct {
	rec  loop.Recorder
	skip int
	done bool
}

// AppendMessage implements loop.Recorder.
func (s *skipRecorder) AppendMessage(m llm.Message, model string, usage *llm.Usage) error {
	if !s.done {
		s.done = true
		if s.skip > 0 && s.skip <= len(m.Content) {
			m.Content = m.Content[s.skip:]
		}
	}
	return s.rec.AppendMessage(m, model, usage)
}

// Written implements the engine's writtenRecorder when the recorder it
// wraps does.
func (s *skipRecorder) Written() error {
	if w, ok := s.rec.(writtenRecorder); ok {
		return w.Written()
	}
	return nil
}

// continuation returns the conversation a continued agent starts from:
// its history and the message as a new user turn. Calls of its last
// answer that never got results (it was stopped or the process died
// between the answer and the results) get error results first
// (transcript.CloseInterrupted), so the conversation stays well formed; a
// last user turn takes the message at its end. kept counts the blocks of
// the last message that the history already had.
func continuation(history []llm.Message, text string) (msgs []llm.Message, kept int) {
	msgs, _ = transcript.CloseInterrupted(slices.Clone(history))
	if n := len(msgs); n > 0 && msgs[n-1].Role == llm.RoleUser {
		last := msgs[n-1]
		kept = len(last.Content)
		if h := len(history); h > 0 && history[h-1].Role == llm.RoleAssistant {
			// The results of the last answer's calls are new: recorded
			// with the message.
			kept = 0
		}
		last.Content = append(slices.Clone(last.Content), llm.TextBlock(text))
		msgs[n-1] = last
		return msgs, kept
	}
	return append(msgs, llm.UserText(text)), 0
}

// agentType is the type of the agent h runs or ran.
func (h *childRun) agentType() string {
	if h.child != nil {
		return h.child.typ
	}
	if h.resumable != nil {
		return h.resumable.typ
	}
	return ""
}

// oneShot reports whether the agent h runs or ran is of a one-shot type
// (S-3.6: Explore, Plan), which cannot be sent messages.
func (rp resumePath) oneShot(h *childRun) bool {
	b := rp.b
	if h.child != nil && h.child.def != nil {
		return h.child.def.OneShot
	}
	d := b.rt.defs[h.agentType()]
	return d != nil && d.OneShot
}

// deliver gives a message to the agent of h (S-8.2) through its mailbox,
// journaled first: queued for its next tool round while it runs; once it
// has ended, the mailbox keeps it and the agent is continued with it in
// the background as a child of from, which acknowledges it once its first
// request was answered. When it cannot be continued the message is
// withdrawn and the sender told why. Deliveries are one at a time, so two
// messages to a finished agent continue it once and the second is queued
// for the continued run.
func (rp resumePath) deliver(ctx context.Context, from *agent, callID string, h *childRun, it inboxItem) (tool.Output, error) {
	b := rp.b
	b.resumeMu.Lock()
	defer b.resumeMu.Unlock()
	h = b.handle(h.id) // the latest run of the agent
	mail := b.mailboxes()
	if _, known := mail.Resolve(h.id); !known {
		// An agent of an earlier process that has no mailbox yet.
		_ = mail.Open(h.id, "")
		_ = mail.End(h.id, task.AfterEnd{Delivery: task.Resumes}, "")
	}
	out, err := mail.Post(it.message(h.id))
	switch {
	case err != nil:
		return errorOutput(prompts.MessageNotKept(h.id, err)), nil
	case out.Delivery == task.Refused:
		return errorOutput(prompts.CannotContinue(h.id, out.Reason)), nil
	case out.Delivery != task.Resumes:
		return tool.Output{Text: prompts.MessageQueued(h.id)}, nil
	}
	if h.child != nil {
		<-h.done // its mailbox ended: it is ending and its result is being set
	}
	var texts []string
	for _, m := range mail.Take(h.id) {
		texts = append(texts, m.Text)
	}
	res, err := rp.resume(ctx, from, callID, h, strings.Join(texts, "\n\n"))
	if err != nil || res.IsError {
		// Not continued: the message goes back to its sender. A journal
		// that cannot record that ends the turn (a restart would deliver
		// the message the sender was told was not).
		why := res.Text
		if err != nil {
			why = err.Error()
		}
		mail.Requeue(h.id)
		if _, werr := mail.Withdraw(h.id, func(m task.Message) bool { return m.Seq == out.Seq }, why); werr != nil && err == nil {
			err = werr
		}
	}
	return res, err
}

// resume continues the finished agent of h with text as its next user
// turn, as a background child of from (see the comment at the top).
// b.resumeMu is held.
func (rp resumePath) resume(ctx context.Context, from *agent, callID string, h *childRun, text string) (tool.Output, error) {
	b := rp.b
	h.mu.Lock()
	info := h.resumable
	h.mu.Unlock()
	typ := h.agentType()
	remote := info != nil && ((h.child != nil && h.child.isolation == agentdef.IsolationRemote) || ranRemotely(info.transcript)) // remotelog.go
	switch {
	case info == nil:
		return errorOutput(prompts.CannotContinue(h.id, "it has not finished")), nil
	case typ == agentdef.ForkName:
		return errorOutput(prompts.CannotContinue(h.id, "it is a fork, which lives in its parent's conversation; start a new fork instead")), nil
	case remote && b.rt.cfg.Remote.Executor == nil:
		// It continues where it ran: on a remote worker (remote.go).
		return errorOutput(prompts.CannotContinue(h.id, "it ran on a remote worker and this session has no remote executor (configure remote.temporal in settings)")), nil
	case info.transcript == "":
		return errorOutput(prompts.CannotContinue(h.id, "this session keeps no transcripts, so its conversation is gone")), nil
	}
	def := b.rt.defs[typ]
	if def == nil {
		return errorOutput(prompts.CannotContinue(h.id, "its type "+typ+" is no longer defined")), nil
	}
	if h.child != nil && h.child.run.journal != nil {
		// Its last lines may still be queued in its run's journal; a
		// closed journal has written everything already.
		if err := h.child.run.journal.Sync(); err != nil && !errors.Is(err, transcript.ErrJournalClosed) {
			b.recordFailed("transcripts", err)
		}
	}
	entries, err := transcript.ReadFile(info.transcript)
	if err != nil {
		return errorOutput(prompts.CannotContinue(h.id, err.Error())), nil
	}
	msgs, kept := continuation(transcript.Messages(entries), text)
	cwd := from.env.Cwd
	if st, err := os.Stat(info.cwd); info.cwd != "" && err == nil && st.IsDir() {
		cwd = info.cwd
	}
	in := agentInput{Description: info.description, Prompt: text, SubagentType: typ, RunInBackground: new(true)}
	iso := agentdef.Isolation("")
	if remote {
		// A remote agent is continued remotely, from the conversation its
		// transcript on the launcher holds (remotelog.go).
		iso, cwd = agentdef.IsolationRemote, from.env.Cwd
	}
	child, ref := from.newChildID(def, in, callID, cwd, iso, h.id)
	if ref == nil {
		child.start, child.resumed = msgs, &resumedFrom{kept: kept}
		if ref, err = mcpOf(child).acquire(ctx, from); err != nil { // mcp.go
			return tool.Output{}, err
		}
	}
	if ref != nil {
		if ref.reason != "" {
			from.run.count(func(s *run.SubagentStats) { s.Refused[ref.reason]++ })
		}
		return errorOutput(ref.msg), nil
	}
	_, out, err := from.admit(ctx, tool.Turn{}, child, in, true) // SendMessage runs alone: no batch turn; in the background, nothing to wait on
	if err != nil || out.IsError {
		return out, err
	}
	return tool.Output{Text: prompts.AgentResumed(h.id, typ, child.transcriptPath())}, nil
}

// earlier returns a handle for agent id of an earlier process of this
// session that the task journal does not hold (a foreground agent: only
// background ones are journaled), read from the .meta.json beside its
// transcript, and registers it; nil when the session has no such agent.
// It can then be continued like any finished agent.
func (rp resumePath) earlier(id string) *childRun {
	b := rp.b
	r := b.rt
	if r.cfg.NoTranscript {
		return nil
	}
	tpath, err := transcript.AgentFile(r.cfg.StateDir, r.cfg.Cwd, r.session, id)
	if err != nil {
		return nil // not an agent id
	}
	raw, err := os.ReadFile(strings.TrimSuffix(tpath, ".jsonl") + ".meta.json")
	if err != nil {
		return nil
	}
	var m agentMeta
	if json.Unmarshal(raw, &m) != nil || m.AgentID != id || m.AgentType == "" {
		return nil
	}
	if st, err := os.Stat(tpath); err != nil || !st.Mode().IsRegular() {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if h := b.agents[id]; h != nil {
		return h
	}
	h := &childRun{id: id, resumable: &resumeInfo{typ: m.AgentType, description: m.Description, transcript: tpath, cwd: m.Worktree}}
	b.agents[id] = h
	return h
}

// known lists every agent a message can go to: main, then the session's
// agents in the order they started, then those an earlier process left.
func (rp resumePath) known() []string {
	b := rp.b
	out := append([]string{"main"}, b.ids()...)
	n := len(out)
	b.mu.Lock()
	for id := range b.agents {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	b.mu.Unlock()
	slices.Sort(out[n:])
	return out
}
