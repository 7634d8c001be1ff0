package engine

import (
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
)

// inboxItem is one thing for an agent: a task notification (note set),
// or a message (SendMessage) with its sender and summary.
type inboxItem struct {
	note          *task.Notification
	text          string
	from, summary string
	// key makes the post idempotent (task.Message.Key; teamsend.go).
	key string
}

// message is it as a message to the mailbox of agent to.
func (it inboxItem) message(to string) task.Message {
	return task.Message{To: to, From: it.from, Summary: it.summary, Text: it.text, Note: it.note, Key: it.key}
}

// inbox is an agent's view on its mailbox in the session's mailbox store
// (task.Mailboxes), as the loop reads it (loop.Inbox). Items are
// delivered in arrival order, each once: Take moves them in flight, Sent
// acknowledges them (a message in the mailbox journal, a notification in
// the task journal). An inbox closes when its agent ends; what is queued
// or in flight then goes to the nearest live ancestor (the main agent's
// inbox never closes), and so does every notification that arrives
// later; a message that arrives later is kept for the agent, whom the
// sender may continue (resume.go). Nothing is dropped.
type inbox struct {
	owner  string
	parent *inbox
	b      *background
}

// newInbox opens the mailbox of agent owner (the main agent's is always
// open).
func newInbox(owner string, parent *inbox, b *background) *inbox {
	if owner != task.Main {
		// Unnamed, so no I/O and no error: only a name can clash, and
		// agents have none yet.
		_ = b.mailboxes().Open(owner, "")
	}
	return &inbox{owner: owner, parent: parent, b: b}
}

// push queues a notification for the agent, or for its nearest live
// ancestor once it has ended.
func (x *inbox) push(it inboxItem) {
	for to := x; to != nil; to = to.parent {
		out, err := x.b.mailboxes().PostRunning(it.message(to.owner))
		if err == nil && out.Delivery == task.Queued {
			return
		}
	}
}

// post puts a message in the agent's mailbox, journaled before it can be
// taken, and says what became of it.
func (x *inbox) post(it inboxItem) (task.Outcome, error) {
	return x.b.mailboxes().Post(it.message(x.owner))
}

// pending reports whether anything is queued.
func (x *inbox) pending() bool { return x.b.mailboxes().Pending(x.owner) }

// changed returns a channel closed when the next item arrives.
func (x *inbox) changed() <-chan struct{} { return x.b.mailboxes().Changed(x.owner) }

// Take implements loop.Inbox.
func (x *inbox) Take() []llm.Block {
	taken := x.b.mailboxes().Take(x.owner)
	if len(taken) == 0 {
		return nil
	}
	linkNotes(x.b.rt.tel, x.owner, taken) // telemetry.go: the request carrying them links back
	blocks := make([]llm.Block, len(taken))
	for i, m := range taken {
		blocks[i] = llm.TextBlock(m.Text)
	}
	return blocks
}

// Sent implements loop.Inbox: the request carrying what is in flight was
// answered, so it is acknowledged, and each notification is marked
// delivered and reported.
func (x *inbox) Sent() {
	sent, err := x.b.mailboxes().Ack(x.owner)
	if err != nil {
		// Delivered all the same; a later process would deliver them
		// again.
		x.b.recordFailed("mailbox journal", err)
	}
	for _, m := range sent {
		if m.Note == nil {
			continue
		}
		if err := x.b.taskJournal().Delivered(m.Note.Seq); err != nil {
			// A later process would deliver it again.
			x.b.recordFailed("task journal", err)
		}
		n := *m.Note
		_ = x.b.emit(x.b.ctx, run.Event{Type: run.EventNotification, AgentID: agentIDOf(x.owner), Notification: &n})
	}
}

// inFlight reports whether a notification or a message is in flight
// (writtenFirst in agent.go waits for the transcript before Sent then).
func (x *inbox) inFlight() bool { return x.b.mailboxes().InFlight(x.owner) }

// discard marks every notification queued or in flight delivered without
// delivering it: a killed agent's children's ends are folded into its
// own notification. Messages stay, and go up when the inbox closes.
func (x *inbox) discard() {
	// Notifications are not in the mailbox journal: no write, no error.
	notes, _ := x.b.mailboxes().Withdraw(x.owner, func(m task.Message) bool { return m.Note != nil }, "folded into the killed agent's notification")
	for _, m := range notes {
		if err := x.b.taskJournal().Delivered(m.Note.Seq); err != nil {
			x.b.recordFailed("task journal", err)
		}
	}
}

// close ends the inbox: what is queued or in flight (taken by a request
// that was never answered) goes up to the nearest live ancestor; later
// messages are kept for the agent, which can be continued.
func (x *inbox) close() {
	mail := x.b.mailboxes()
	up := x.parent
	for up.parent != nil && !mail.Live(up.owner) {
		up = up.parent
	}
	if err := mail.End(x.owner, task.AfterEnd{Delivery: task.Resumes}, up.owner); err != nil {
		// The journal could not record the move: what was queued stays
		// in this mailbox, for the agent if it is continued, and for
		// the main agent after a restart.
		x.b.recordFailed("mailbox journal", err)
	}
}

// requeue puts what is in flight (taken for a request that was never
// answered) back at the front of the queue.
func (x *inbox) requeue() { x.b.mailboxes().Requeue(x.owner) }

// agentIDOf maps an inbox owner to an event's AgentID ("" for main).
func agentIDOf(owner string) string {
	if owner == task.Main {
		return ""
	}
	return owner
}
