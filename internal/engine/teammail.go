package engine

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/internal/engine/tasktools"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/tool"
	"github.com/cadre-dev/cadre/transcript"
)

// teamMail is SendMessage with teams on (issue 25): text between the lead
// and teammates and between teammates, and Claude Code's structured
// messages — shutdown_request and its response, plan_approval_request and
// its response — each with a request id bound to the one teammate it was
// made for, so a stale request never reaches a later teammate of the same
// name. Every message goes through the receiver's mailbox (journaled,
// exactly once, in order per sender) framed as a <teammate-message>.
type teamMail struct{ b *background }

// senderName is how a team message names its sender.
func senderName(a *agent) string {
	switch {
	case a.id == "":
		return prompts.TeamLead
	case a.member != nil:
		return a.member.name
	}
	return a.id
}

// send delivers m from agent from.
func (tmail teamMail) send(ctx context.Context, from *agent, callID string, m tasktools.TeamMessage) (tool.Output, error) {
	b := tmail.b
	t := b.team
	to := m.To
	toLead := to == prompts.TeamLead || to == task.Main
	t.mu.Lock()
	target := t.members[to]
	roster := t.roster()
	t.mu.Unlock()
	if !toLead && target == nil {
		if m.Type != "" {
			return errorOutput(prompts.TeamSendRefused(fmt.Sprintf("no teammate is named %q; the team: %s.", to, strings.Join(roster, ", ")))), nil
		}
		// Not a teammate: a sub-agent by id (S-8.2).
		return b.send(ctx, from, callID, tasktools.Message{To: m.To, Message: m.Text, Summary: m.Summary})
	}
	if toLead && from.id == "" {
		return errorOutput(prompts.MessageToSelf()), nil
	}
	if target != nil && target.a == from {
		return errorOutput(prompts.MessageToSelf()), nil
	}
	fromLead := from.id == ""
	me := from.member
	name := senderName(from)
	text, reqID := m.Text, ""
	kind := "message" // the event's message_type (teammsg.go)
	var after func()
	refuse := func(why string) (tool.Output, error) { return errorOutput(prompts.TeamSendRefused(why)), nil }
	if b.mailboxes().Posted(sendKey(from.id, callID)) {
		// This very call posted it before (teamsend.go): not again, and
		// no request state changes.
		return tool.Output{Text: prompts.TeamMessageSent(to, "")}, nil
	}
	switch m.Type {
	case "":
	case tasktools.ShutdownRequest:
		if !fromLead || target == nil {
			return refuse("only the team lead sends shutdown_request, to a teammate by name.")
		}
		reqID = tmail.requestID("shutdown", target)
		kind = "shutdown_request"
		text = prompts.TeamProtocol("shutdown_request", "request_id", reqID, "from", name, "reason", m.Reason)
		after = func() { tmail.armShutdown(target, reqID) }
	case tasktools.ShutdownResponse:
		if me == nil || !toLead {
			return refuse("shutdown_response is a teammate's answer, sent to team-lead.")
		}
		t.mu.Lock()
		pending := me.shutdownID
		t.mu.Unlock()
		if pending == "" || pending != m.RequestID {
			return refuse(fmt.Sprintf("request %q is not a shutdown_request waiting for your answer.", m.RequestID))
		}
		if m.Approve {
			kind = "shutdown_approved"
			text = prompts.TeamProtocol("shutdown_approved", "request_id", m.RequestID, "from", name)
			after = func() {
				t.mu.Lock()
				if !me.stopping {
					me.stopping = true
					close(me.stop)
				}
				t.mu.Unlock()
			}
		} else {
			kind = "shutdown_rejected"
			text = prompts.TeamProtocol("shutdown_rejected", "request_id", m.RequestID, "from", name, "reason", m.Reason)
			after = func() {
				t.mu.Lock()
				if me.shutdownID == m.RequestID {
					me.shutdownID = ""
					if me.timer != nil {
						me.timer.Stop()
					}
				}
				t.mu.Unlock()
			}
		}
	case tasktools.PlanApprovalRequest:
		t.mu.Lock()
		plan := me != nil && me.plan
		t.mu.Unlock()
		if !plan || !toLead {
			return refuse("plan_approval_request is sent to team-lead by a teammate in plan mode.")
		}
		reqID = tmail.requestID("plan", me)
		kind = "plan_approval_request"
		text = prompts.TeamProtocol("plan_approval_request", "from", name, "request_id", reqID, "planContent", m.Plan)
		t.mu.Lock()
		me.planID = reqID
		t.mu.Unlock()
	case tasktools.PlanApprovalResponse:
		kind = "plan_approval_response"
		if !fromLead || target == nil {
			return refuse("only the team lead answers a plan, to the teammate by name.")
		}
		t.mu.Lock()
		pending := target.planID
		t.mu.Unlock()
		if pending == "" || pending != m.RequestID {
			return refuse(fmt.Sprintf("request %q is not a plan_approval_request of %s waiting for an answer.", m.RequestID, to))
		}
		var mode permission.Mode
		if m.Approve {
			// Bounded by the lead's ceiling (teamplanmode.go).
			var err error
			if mode, err = approvedMode(from, m.Mode); err != nil {
				return refuse(err.Error())
			}
			text = prompts.TeamProtocol("plan_approval_response", "request_id", m.RequestID, "approved", true, "permissionMode", string(cmp.Or(mode, permission.ModeDefault)))
		} else {
			text = prompts.TeamProtocol("plan_approval_response", "request_id", m.RequestID, "approved", false, "feedback", m.Feedback)
		}
		approve := m.Approve
		// The verdict holds before the teammate can read it.
		t.mu.Lock()
		target.planID = ""
		if approve {
			target.plan = false
			target.mode = mode
			t.saveRoster() // teamresume.go: the mode holds across --resume
		}
		t.mu.Unlock()
	}
	item := inboxItem{text: prompts.TeammateMessage(name, m.Summary, text), from: name, summary: m.Summary, key: sendKey(from.id, callID)}
	if err := transcriptWritten(from); err != nil {
		// Posted, a restart could send it again: not posted.
		return errorOutput(prompts.MessageNotKept(to, err)), nil
	}
	var out task.Outcome
	var err error
	if toLead {
		if out, err = b.main.post(item); err != nil {
			return errorOutput(prompts.MessageNotKept(prompts.TeamLead, err)), nil
		}
	} else {
		out, err = target.a.inbox.post(item)
		switch {
		case err != nil:
			return errorOutput(prompts.MessageNotKept(to, err)), nil
		case out.Delivery == task.Duplicate:
		case out.Delivery != task.Queued && out.Delivery != task.Later:
			// It has ended: the message is taken back.
			_, _ = b.mailboxes().Withdraw(target.a.id, func(x task.Message) bool { return x.Seq == out.Seq }, "teammate "+to+" has stopped")
			return refuse(fmt.Sprintf("teammate %s has stopped.", to))
		}
	}
	if out.Delivery == task.Duplicate {
		// Posted before for this very call (teamsend.go): not again.
		return tool.Output{Text: prompts.TeamMessageSent(to, "")}, nil
	}
	if after != nil {
		after()
	}
	// One event per message, for stream-json and the UI (teammsg.go).
	ev := run.TeamMessage{From: name, To: to, FromAgentID: from.id, Type: kind, RequestID: cmp.Or(reqID, m.RequestID), Summary: m.Summary, Text: text}
	if toLead {
		ev.To = prompts.TeamLead
	} else {
		ev.ToAgentID = target.a.id
	}
	tmail.announce(ctx, from, ev)
	if m.Type == tasktools.ShutdownResponse && m.Approve {
		return tool.Output{Text: prompts.ShutdownApprovedReply}, nil
	}
	return tool.Output{Text: prompts.TeamMessageSent(to, reqID)}, nil
}

// requestID numbers a request for teammate m: bound to its agent id, so
// a later teammate of the same name never matches it.
func (tmail teamMail) requestID(kind string, m *member) string {
	t := tmail.b.team
	t.mu.Lock()
	defer t.mu.Unlock()
	t.reqSeq++
	return fmt.Sprintf("%s-%d@%s", kind, t.reqSeq, m.a.id)
}

// armShutdown records the shutdown_request id for m and starts its grace
// period: unanswered when it passes, m is stopped and the lead told.
func (tmail teamMail) armShutdown(m *member, id string) {
	b := tmail.b
	t := b.team
	grace := b.rt.cfg.TeamShutdownGrace
	if grace <= 0 {
		grace = defaultShutdownGrace
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if m.ended {
		return
	}
	if m.timer != nil {
		m.timer.Stop()
	}
	m.shutdownID = id
	m.timer = time.AfterFunc(grace, func() { tmail.graceOver(m, id, grace) })
}

// graceOver stops m when shutdown_request id is still unanswered.
func (tmail teamMail) graceOver(m *member, id string, grace time.Duration) {
	b := tmail.b
	t := b.team
	t.mu.Lock()
	due := !m.ended && m.shutdownID == id && !m.stopping
	t.mu.Unlock()
	if !due {
		return
	}
	text := prompts.TeamProtocol("teammate_terminated", "from", m.name, "request_id", id,
		"message", fmt.Sprintf("%s did not answer shutdown_request %s within %s; it was stopped.", m.name, id, grace))
	if _, err := b.main.post(inboxItem{text: prompts.TeammateMessage(m.name, "", text), from: m.name}); err != nil {
		b.recordFailed("mailbox journal", err)
	} else { // teammsg.go
		tmail.announce(b.ctx, m.a, run.TeamMessage{From: m.name, To: prompts.TeamLead, FromAgentID: m.a.id, Type: "teammate_terminated", RequestID: id, Text: text})
	}
	// An error: it ended meanwhile.
	_, _ = b.reg.Stop(m.a.id)
}

// transcriptWritten waits until what agent a's transcript has queued is
// written (transcript.Journal.Written): the turn that calls SendMessage,
// or that ends before an idle notice, is then in the transcript before
// its effect is in the mailbox journal. A process killed after the post
// leaves a teammate that rejoins (teamresume.go) with that turn, so it
// does not run it, and send the message, a second time. Nothing for the
// main agent or without transcripts.
func transcriptWritten(a *agent) error {
	rs := a.run
	if a.id == "" || rs.journal == nil {
		return nil
	}
	tpath, err := transcript.AgentFile(rs.rt.cfg.StateDir, rs.rt.cfg.Cwd, rs.rt.session, a.id)
	if err != nil {
		return fmt.Errorf("transcript of %s: %w", a.id, err)
	}
	if err := rs.journal.Written(tpath); err != nil {
		return fmt.Errorf("transcript of %s: %w", a.id, err)
	}
	return nil
}
