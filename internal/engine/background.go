package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/internal/engine/hub"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/transcript"
)

// BackgroundMode says when sub-agents run in the background (S-7.1).
type BackgroundMode string

// Background modes.
const (
	// BackgroundOn (the zero value): a sub-agent runs in the background
	// when its Agent call sets run_in_background or its definition says
	// `background: true`.
	BackgroundOn BackgroundMode = ""
	// BackgroundDefault: every sub-agent runs in the background unless
	// its call sets run_in_background to false.
	BackgroundDefault BackgroundMode = "default"
	// BackgroundForced: every sub-agent runs in the background (coordinator
	// mode, S-11.2); the Agent tool offers no run_in_background.
	BackgroundForced BackgroundMode = "forced"
	// BackgroundOff: every sub-agent runs in the foreground; the Agent
	// tool offers no run_in_background and definitions' `background` is
	// ignored.
	BackgroundOff BackgroundMode = "off"
)

// Valid reports whether m is a known mode.
func (m BackgroundMode) Valid() bool {
	switch m {
	case BackgroundOn, BackgroundDefault, BackgroundForced, BackgroundOff:
		return true
	}
	return false
}

// offersRunInBackground reports whether the Agent tool shows the
// run_in_background field (S-3.2: not when background is off or forced).
func (m BackgroundMode) offersRunInBackground() bool {
	return m != BackgroundOff && m != BackgroundForced
}

// bgAsk is what an Agent call, its definition and its path say about
// running in the background.
type bgAsk struct {
	// Call is the call's run_in_background (nil: not set).
	Call *bool
	// Definition is the definition's `background: true`.
	Definition bool
	// Fork is true for the fork path (S-6), which always runs in the
	// background.
	Fork bool
}

// wantsBackground is the one place that decides whether a child runs in
// the background (S-7.1): never when background is off; always in
// coordinator mode (BackgroundForced) and on the fork path; otherwise as
// the call says, else as the definition says, else as the session's
// default. Every spawn path (Agent, fork, teams, coordinator) asks here.
func (tb toolbox) wantsBackground(q bgAsk) bool {
	r := tb.r
	switch mode := r.cfg.Background; {
	case mode == BackgroundOff:
		return false
	case mode == BackgroundForced, q.Fork:
		return true
	case q.Call != nil:
		return *q.Call
	case q.Definition:
		return true
	default:
		return mode == BackgroundDefault
	}
}

// background is the session's background machinery: the task registry,
// the task journal, the main agent's inbox, the stream background agents'
// events go to, and the owner of every child's goroutine. Its context is
// the session's: Close cancels it, which ends every task, and waits.
type background struct {
	rt      *Runtime
	reg     *task.Registry
	journal *task.Journal
	// mail is the session's mailbox store; every inbox is a view on it
	// (inbox.go). Not under mu: open, which holds mu, queues into it.
	mail atomic.Pointer[task.Mailboxes]
	main *inbox
	hub  hub.Hub
	// exec starts every child: local, the session's local executor
	// (local.go), unless a test put another before it.
	exec  executor.Executor
	local *localExecutor

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	agents map[string]*childRun // every sub-agent of the session by id

	// resumeMu makes SendMessage deliveries to sub-agents one at a time
	// (resume.go).
	resumeMu sync.Mutex

	// warns logs the writes of the session's record that failed
	// (warnings.go).
	warns warnings

	// team is the session's agent team (team.go, issue 25).
	team *team

	// reattach holds the remote tasks of an earlier process to take up
	// again (reattach.go); under mu.
	reattach reattachState
}

// newBackground prepares the machinery and registers its stop with
// Close. The journal is opened (and replayed) on the first Run, not here:
// New does no I/O.
func newBackground(r *Runtime) *background {
	ctx, cancel := context.WithCancel(context.Background())
	b := &background{rt: r, reg: task.NewRegistry(r.cfg.Now), ctx: ctx, cancel: cancel, agents: map[string]*childRun{}, team: newTeam(r)}
	b.main = newInbox("main", nil, b)
	b.local = newLocalExecutor(b)
	b.exec = b.local
	glueOf(r).onClose(b.close)
	return b
}

// close stops every task, waits for all of them to end and closes the
// journal.
func (b *background) close() error {
	b.cancel()
	b.reg.StopAll()
	b.wg.Wait()
	b.mu.Lock()
	j, mail := b.journal, b.mail.Load()
	b.mu.Unlock()
	var errs []error
	if j != nil {
		errs = append(errs, j.Close())
	}
	if mail != nil {
		errs = append(errs, mail.Close())
	}
	return errors.Join(errs...)
}

// journalPath is the session's tasks.jsonl, beside its sub-agents'
// transcripts ("" when transcripts are off).
func (b *background) journalPath() string {
	r := b.rt
	if r.tpath == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(transcript.AgentPath(r.cfg.StateDir, r.cfg.Cwd, r.session, "x")), "tasks.jsonl")
}

// open opens the task journal once and queues for the main agent what
// an earlier process left undelivered: notifications written but not
// delivered, and one "interrupted" notification for each background task
// that was running when it died (S-8.1, S-15.3).
func (b *background) open() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.journal != nil {
		return nil
	}
	path := b.journalPath()
	if path == "" {
		b.journal = task.MemoryJournal()
		return nil
	}
	inHistory := b.historyTexts()
	teammates := b.rosterIDs() // teamresume.go: they rejoin with their mail
	if err := b.openMail(filepath.Join(filepath.Dir(path), "mailbox.jsonl"), inHistory, teammates); err != nil {
		return err
	}
	teamMail{b}.leadSentAnswers() // teamsend.go: the lead's sends the journal holds read as sent
	j, rep, err := task.OpenJournal(path)
	if err != nil {
		return err
	}
	b.journal = j
	for _, n := range rep.Undelivered {
		if inHistory[n.Text] {
			// The process died while the main agent's request carrying
			// it was in flight: the restored conversation holds it
			// already, so it is delivered.
			if err := j.Delivered(n.Seq); err != nil {
				return err
			}
			continue
		}
		n.To = "main" // every agent of the earlier process is gone
		b.main.push(inboxItem{note: &n, text: n.Text})
	}
	for _, t := range rep.Ended {
		// Background agents of earlier processes can be continued.
		b.agents[t.ID] = &childRun{id: t.ID, resumable: &resumeInfo{typ: t.AgentType, description: t.Description, transcript: t.OutputFile}}
	}
	for _, t := range rep.Interrupted {
		if teammates[t.ID] {
			// A teammate rejoins (teamresume.go): it is told, not the lead.
			if err := j.Ended(t); err != nil {
				b.recordFailed("task journal", err)
			}
			continue
		}
		if t.Remote {
			// It may still run on the workers: taken up again (reattach.go).
			reattachOf(b).later(t)
			continue
		}
		tn := prompts.TaskNotification{TaskID: t.ID, ToolUseID: t.ToolUseID, AgentType: t.AgentType, Description: t.Description,
			Status: task.Killed, OutputFile: t.OutputFile, Interrupted: true}
		n := &task.Notification{To: "main", TaskID: t.ID, ToolUseID: t.ToolUseID, AgentType: t.AgentType, Description: t.Description,
			Status: task.Killed, OutputFile: t.OutputFile, Summary: tn.Summary(), Text: tn.Render()}
		if err := j.Notify(n); err != nil {
			return err
		}
		if err := j.Ended(t); err != nil {
			// Replayed as interrupted again next time: the notification
			// above is journaled, so that one would be a second one.
			b.recordFailed("task journal", err)
		}
		b.main.push(inboxItem{note: n, text: n.Text})
		b.agents[t.ID] = &childRun{id: t.ID, resumable: &resumeInfo{typ: t.AgentType, description: t.Description, transcript: t.OutputFile}}
	}
	return nil
}

// openMail opens the session's mailbox store at path and settles what
// an earlier process left in it: a message to the main agent that the
// restored conversation holds already was delivered (the process died
// before it was acknowledged); one to an agent of the earlier process
// goes to the main agent, as everything queued for an agent that has
// gone does; the rest waits for the main agent's next turn (S-15.3).
func (b *background) openMail(path string, inHistory, teammates map[string]bool) error {
	mail, rep, err := task.OpenMailboxes(path)
	if err != nil {
		return err
	}
	if _, err := mail.Withdraw(task.Main, func(m task.Message) bool { return inHistory[m.Text] }, "in the restored conversation already"); err != nil {
		_ = mail.Close()
		return err
	}
	for _, m := range rep.Pending {
		if m.To == task.Main || mail.Live(m.To) || !mail.Pending(m.To) {
			continue
		}
		// What the agent's transcript holds reached it: the process died
		// between its request and the acknowledgement.
		inAgent := b.agentTexts(m.To)
		if _, err := mail.Withdraw(m.To, func(m task.Message) bool { return inAgent(m.Text) }, "in the agent's transcript already"); err != nil {
			_ = mail.Close()
			return err
		}
		if teammates[m.To] {
			continue // it rejoins and reads it (teamresume.go)
		}
		if err := mail.End(m.To, task.AfterEnd{Delivery: task.Resumes}, task.Main); err != nil {
			_ = mail.Close()
			return err
		}
	}
	// An inbox made before the first Run (PendingNotifications) saw an
	// empty store in memory: nothing can have been posted yet.
	b.mail.Store(mail)
	return nil
}

// agentTexts reports whether a text is in a user message of the
// transcript of agent id of this session (none when it has none).
func (b *background) agentTexts(id string) func(string) bool {
	r := b.rt
	path, err := transcript.AgentFile(r.cfg.StateDir, r.cfg.Cwd, r.session, id)
	if err != nil {
		return func(string) bool { return false } // not an agent id
	}
	entries, err := transcript.ReadFile(path)
	if err != nil {
		return func(string) bool { return false } // no transcript: nothing reached it
	}
	var texts []string
	for _, m := range transcript.Messages(entries) {
		if m.Role != llm.RoleUser {
			continue
		}
		for _, c := range m.Content {
			if c.Type == llm.BlockText {
				texts = append(texts, c.Text)
			}
		}
	}
	// A continuation joins its messages in one block: containment.
	return func(text string) bool {
		return slices.ContainsFunc(texts, func(t string) bool { return strings.Contains(t, text) })
	}
}

// mailboxes returns the mailbox store (opened by the first Run; in
// memory until then, and for a session without transcripts).
func (b *background) mailboxes() *task.Mailboxes {
	if m := b.mail.Load(); m != nil {
		return m
	}
	b.mail.CompareAndSwap(nil, task.MemoryMailboxes())
	return b.mail.Load()
}

// historyTexts is the set of the text blocks of the main agent's user
// messages in the conversation the session starts from.
func (b *background) historyTexts() map[string]bool {
	r := b.rt
	r.mu.Lock()
	defer r.mu.Unlock()
	texts := map[string]bool{}
	for _, m := range r.messages {
		if m.Role != llm.RoleUser {
			continue
		}
		for _, c := range m.Content {
			if c.Type == llm.BlockText {
				texts[c.Text] = true
			}
		}
	}
	return texts
}

// taskJournal returns the journal (opened by the first Run).
func (b *background) taskJournal() *task.Journal {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.journal == nil {
		b.journal = task.MemoryJournal()
	}
	return b.journal
}

// notify journals n and queues it in to (S-7.3: written before it can be
// delivered).
func (b *background) notify(to *inbox, n *task.Notification) {
	if err := b.taskJournal().Notify(n); err != nil {
		// The notification still goes out; only a crash could lose it now.
		n.Text += "\n" + fmt.Sprintf("(cadre could not journal this notification: %v)", err)
		b.recordFailed("task journal", err)
	}
	to.push(inboxItem{note: n, text: n.Text})
}

// firstMessage is the user message that starts a main turn: what waits in
// the main agent's inbox, then the prompt ("" for a turn run only for
// notifications).
func (b *background) firstMessage(prompt string) llm.Message {
	content := b.main.Take()
	if prompt != "" {
		content = append(content, llm.TextBlock(prompt))
	}
	return llm.Message{Role: llm.RoleUser, Content: content}
}

// waitForNotes waits until something is queued for the main agent, and
// reports false when nothing can come any more (no task is live and the
// inbox is empty) or ctx ended.
func (b *background) waitForNotes(ctx context.Context) bool {
	for {
		inboxCh, regCh, teamCh := b.main.changed(), b.reg.Changed(), b.team.changes()
		// Live first: a task queues its notification before it leaves
		// the registry, so once none is live the inbox holds them all.
		// Idle teammates with nothing to read wait for nothing but a
		// message (team.go).
		live := b.reg.Live() - b.team.resting()
		if b.leadWakes() {
			return true
		}
		if live <= 0 && (b.team.size() == 0 || !(teamTasks{b}).claimable(ctx)) {
			// Idle teammates with a task to claim are about to work
			// (teamtasks.go).
			return b.main.pending()
		}
		select {
		case <-inboxCh:
		case <-teamCh:
		case <-regCh:
		case <-ctx.Done():
			return false
		}
	}
}
