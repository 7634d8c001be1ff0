package task

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sync"
)

// The mailbox store (S-8.2, S-15.3): one mailbox per addressable agent of
// a session, reached by the agent's id, by its name when it has one, and
// by Main for the main agent. What is posted to a mailbox is journaled
// (mailbox.jsonl beside the task journal, synced to disk) before anyone
// can take it, and delivered exactly once in two phases: Take hands the
// pending messages to the agent's next request and holds them in flight;
// Ack, called once that request was answered (the turn carrying them is
// in the agent's transcript), journals them delivered. A crash between
// the two leaves them pending when the store is opened again, so they are
// delivered again rather than lost; an acknowledged message is never
// pending again. The journal is append-only; a torn last line (a process
// killed mid-write) is ignored.

// Main is the address of the main agent's mailbox.
const Main = "main"

// Message is one thing in an agent's mailbox.
type Message struct {
	// Seq numbers the session's messages in the order they were posted
	// (set by Post).
	Seq int64 `json:"seq"`
	// To is the agent id of the mailbox it is in (Main for the main
	// agent); Post resolves a name to the id.
	To string `json:"to"`
	// From is the sender's address (Main, an agent id or name).
	From    string `json:"from,omitempty"`
	Summary string `json:"summary,omitempty"`
	// Text is what the receiving model reads.
	Text string `json:"text"`
	// Key, when set, makes the post idempotent: a later Post with the
	// same key keeps nothing (Duplicate), in this process or after the
	// journal is replayed. A sender derives it from what it posts for
	// (a SendMessage call's tool_use id), so a post made again for the
	// same call is not delivered twice.
	Key string `json:"key,omitempty"`
	// Note is set on a task notification carried by the mailbox so it
	// reaches its agent in order with messages. Its durability is the
	// task journal's (Journal.Notify): the store keeps it in memory only.
	Note *Notification `json:"-"`
}

// volatile reports whether m lives in memory only (its journal is
// another's).
func (m Message) volatile() bool { return m.Note != nil }

// Delivery is what became of a posted message.
type Delivery string

// Deliveries.
const (
	// Queued: the agent runs; it gets the message at its next tool round
	// or turn.
	Queued Delivery = "queued"
	// Later: the agent is idle; the message is kept and delivered when it
	// runs again (a receiver waiting on Changed is woken at once).
	Later Delivery = "later"
	// Resumes: the agent has ended; the message is kept in its mailbox
	// and delivered if the caller resumes the agent (Open). A caller that
	// cannot resume it takes the message back with Withdraw.
	Resumes Delivery = "resumes"
	// Refused: the agent has ended and takes no more messages; nothing
	// was kept, and the outcome's Reason says why.
	Refused Delivery = "refused"
	// Duplicate: a message with the same Key was posted before (see
	// Message.Key); nothing new was kept, and the outcome's Seq is the
	// earlier message's.
	Duplicate Delivery = "duplicate"
)

// Outcome is the store's answer to Post.
type Outcome struct {
	Delivery Delivery
	// To is the agent id the address resolved to.
	To string
	// Seq is the message's number (0 when refused).
	Seq int64
	// Reason says why a message was refused.
	Reason string
}

// AfterEnd says what a mailbox does with messages posted while its agent
// does not run: Later (an idle agent that will run again), Resumes (an
// ended agent the caller may continue) or Refused with a reason.
type AfterEnd struct {
	Delivery Delivery
	Reason   string
}

// Errors of the address book.
var (
	// ErrUnknownAddress: no agent of the session has the address.
	ErrUnknownAddress = errors.New("no agent has this address")
	// ErrNameTaken: another agent of the session has the name.
	ErrNameTaken = errors.New("the name is taken")
	// ErrBadName: a name that is reserved or not made of letters,
	// digits, '_' and '-' (at most 64).
	ErrBadName = errors.New("invalid agent name")
)

// ValidName reports whether name can be an agent's address: 1 to 64
// letters, digits, '_' or '-', and not a reserved word (main, team-lead,
// user, system).
func ValidName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	switch name {
	case Main, "team-lead", "user", "system":
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// mailbox is one agent's.
type mailbox struct {
	id, name string
	live     bool
	after    AfterEnd
	queue    []Message     // pending, in arrival order
	flight   []Message     // taken, not yet acknowledged
	signal   chan struct{} // closed on a change; nil until someone waits (Changed)
}

// wake wakes whoever waits on the box's signal. A channel is made only for
// a waiter (Changed): most boxes are never waited on.
func (b *mailbox) wake() {
	if b.signal != nil {
		close(b.signal)
		b.signal = nil
	}
}

// mailRecord is one line of the mailbox journal.
type mailRecord struct {
	Op string `json:"op"`
	// Addr: the agent ID has the address Name ("" for none).
	ID   string `json:"id,omitempty"`
	Name string `json:"name,omitempty"`
	// Post.
	Msg *Message `json:"msg,omitempty"`
	// Ack, Fwd (moved to mailbox To) and Withdrawn (with Reason).
	Seqs   []int64 `json:"seqs,omitempty"`
	To     string  `json:"to,omitempty"`
	Reason string  `json:"reason,omitempty"`
}

// Mailbox journal operations.
const (
	mailAddr      = "addr"
	mailPost      = "post"
	mailAck       = "ack"
	mailFwd       = "fwd"
	mailWithdrawn = "withdrawn"
)

// Mailboxes is a session's mailbox store (see the comment at the top).
// Safe for concurrent use.
type Mailboxes struct {
	mu    sync.Mutex
	path  string
	file  *appendFile // nil in memory
	seq   int64
	boxes map[string]*mailbox
	names map[string]string // name → agent id
	keys  map[string]int64  // Message.Key → its message's Seq
}

// MailReplay is what a mailbox journal held when it was opened.
type MailReplay struct {
	// Pending are the messages posted and never acknowledged nor
	// withdrawn (those in flight at a crash included), each with To its
	// mailbox, in the order they arrived there.
	Pending []Message
	// Names maps each agent id that had a name to it.
	Names map[string]string
}

// MemoryMailboxes returns a store that journals nothing, for a session
// without transcripts (nothing can be resumed).
func MemoryMailboxes() *Mailboxes {
	s := &Mailboxes{boxes: map[string]*mailbox{}, names: map[string]string{}, keys: map[string]int64{}}
	s.box(Main).live = true
	return s
}

// OpenMailboxes opens (creating it and its directory if needed) the
// mailbox journal at path and replays it: every mailbox it names comes
// back with its pending messages. The main agent's mailbox is live; every
// other agent's belongs to an earlier process, so it is ended with
// Resumes (messages wait for the agent to be continued) until Open makes
// it live or End moves its messages elsewhere.
func OpenMailboxes(path string) (*Mailboxes, MailReplay, error) {
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, MailReplay{}, fmt.Errorf("mailbox journal: %w", err)
	}
	s := MemoryMailboxes()
	journalOf(s).replay(b)
	rep := MailReplay{Names: map[string]string{}}
	for _, id := range journalOf(s).order() {
		box := s.boxes[id]
		if box.name != "" {
			rep.Names[id] = box.name
		}
		rep.Pending = append(rep.Pending, box.queue...)
	}
	file, err := openAppendFile("mailbox journal", path)
	if err != nil {
		return nil, MailReplay{}, err
	}
	s.file, s.path = file, path
	return s, rep, nil
}

// mailJournal is the journal side of a Mailboxes: the records it
// appends and syncs, and their replay when a session is opened again. It
// is a view of the store, so that Mailboxes does not hold every method.
type mailJournal struct{ s *Mailboxes }

func journalOf(s *Mailboxes) mailJournal { return mailJournal{s} }

// order lists the mailboxes' ids, Main first, then sorted.
func (mj mailJournal) order() []string {
	s := mj.s
	ids := make([]string, 0, len(s.boxes))
	for id := range s.boxes {
		if id != Main {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return append([]string{Main}, ids...)
}

// replay applies the journal's records in order: the same moves the
// store made while it ran, so the mailboxes end as they were, with what
// was in flight pending again. Lines that do not parse (torn by a crash)
// and records that make no sense (an unknown or repeated number, a bad
// address) are skipped.
func (mj mailJournal) replay(b []byte) {
	s := mj.s
	if len(b) == 0 {
		return
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64*1024*1024) // grows from 4 KiB as lines need
	where := map[int64]string{}  // a pending message's mailbox
	seen := map[int64]bool{}
	for sc.Scan() {
		var rec mailRecord
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			continue
		}
		switch rec.Op {
		case mailAddr:
			if rec.ID == "" || rec.ID == Main || (rec.Name != "" && s.addressErr(rec.ID, rec.Name) != nil) {
				continue
			}
			s.setName(s.box(rec.ID), rec.Name)
		case mailPost:
			m := rec.Msg
			if m == nil || m.Seq <= 0 || seen[m.Seq] || m.To == "" {
				continue
			}
			seen[m.Seq] = true
			s.seq = max(s.seq, m.Seq)
			if m.Key != "" {
				s.keys[m.Key] = m.Seq
			}
			box := s.box(m.To)
			box.queue = append(box.queue, *m)
			where[m.Seq] = m.To
		case mailAck, mailWithdrawn:
			s.remove(where, rec.Seqs)
		case mailFwd:
			if rec.To == "" {
				continue
			}
			to := s.box(rec.To)
			for _, m := range s.remove(where, rec.Seqs) {
				m.To = rec.To
				to.queue = append(to.queue, m)
				where[m.Seq] = rec.To
			}
		}
	}
	for id, box := range s.boxes {
		if id != Main {
			box.live, box.after = false, AfterEnd{Delivery: Resumes}
		}
	}
}

// remove takes the pending messages numbered seqs out of the mailboxes
// where says hold them, and returns them in seqs' mailboxes' order.
func (s *Mailboxes) remove(where map[int64]string, seqs []int64) []Message {
	var out []Message
	done := map[string]bool{}
	for _, seq := range seqs {
		id, ok := where[seq]
		if !ok || done[id] {
			continue
		}
		done[id] = true
		box := s.boxes[id]
		keep := box.queue[:0]
		for _, m := range box.queue {
			if where[m.Seq] == id && slices.Contains(seqs, m.Seq) {
				out = append(out, m)
				delete(where, m.Seq)
			} else {
				keep = append(keep, m)
			}
		}
		box.queue = keep
	}
	return out
}

// box returns the mailbox of agent id, creating it (not live).
func (s *Mailboxes) box(id string) *mailbox {
	b := s.boxes[id]
	if b == nil {
		b = &mailbox{id: id, after: AfterEnd{Delivery: Resumes}}
		s.boxes[id] = b
	}
	return b
}

func (s *Mailboxes) setName(b *mailbox, name string) {
	if b.name != "" {
		delete(s.names, b.name)
	}
	b.name = name
	if name != "" {
		s.names[name] = b.id
	}
}

// addressErr says why agent id cannot have name, nil when it can.
func (s *Mailboxes) addressErr(id, name string) error {
	if !ValidName(name) {
		return fmt.Errorf("%w %q: use 1 to 64 letters, digits, '_' or '-', not main, team-lead, user or system", ErrBadName, name)
	}
	if other, ok := s.names[name]; ok && other != id {
		return fmt.Errorf("%w: %q is agent %s", ErrNameTaken, name, other)
	}
	if _, ok := s.boxes[name]; ok && name != id {
		return fmt.Errorf("%w: %q is an agent id", ErrNameTaken, name)
	}
	return nil
}

// write appends rec and syncs it to disk; s.mu is held. The exactly-once
// promise rests on every record but an address: a post lost to a crash
// is a lost message, a lost ack a duplicate one. An address (a name) is
// not synced; a later synced record carries it to disk.
func (mj mailJournal) write(rec mailRecord) error {
	if mj.s.file == nil {
		return nil
	}
	return mj.s.file.append(rec, rec.Op != mailAddr)
}

// Path is the journal's file ("" in memory).
func (s *Mailboxes) Path() string { return s.path }

// Open makes the mailbox of agent id live (creating it, with its
// address, when it is new): what it holds and what is posted from now on
// is the agent's at its next tool round or turn. name ("" for none)
// becomes its address beside its id; an agent keeps the name it had when
// name is "". Only a name costs a journal write, so starting an agent
// does no I/O.
func (s *Mailboxes) Open(id, name string) error {
	if id == "" || id == Main {
		return fmt.Errorf("mailbox %q: not an agent id", id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if other, ok := s.names[id]; ok && other != id {
		return fmt.Errorf("mailbox %s: %w: %q is the name of agent %s", id, ErrNameTaken, id, other)
	}
	box, known := s.boxes[id]
	if name != "" && (box == nil || box.name != name) {
		if err := s.addressErr(id, name); err != nil {
			return fmt.Errorf("mailbox %s: %w", id, err)
		}
	}
	if name != "" && (!known || box.name != name) {
		// An id needs no record: a mailbox that holds something is
		// named by its messages' records.
		if err := journalOf(s).write(mailRecord{Op: mailAddr, ID: id, Name: name}); err != nil {
			return err
		}
	}
	box = s.box(id)
	if name != "" {
		s.setName(box, name)
	}
	box.live, box.after = true, AfterEnd{}
	if len(box.queue) > 0 {
		box.wake()
	}
	return nil
}

// Resolve returns the agent id an address names: Main, an agent id, or an
// agent's name.
func (s *Mailboxes) Resolve(addr string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resolve(addr)
}

func (s *Mailboxes) resolve(addr string) (string, bool) {
	if _, ok := s.boxes[addr]; ok {
		return addr, true
	}
	id, ok := s.names[addr]
	return id, ok
}

// Name returns the name of agent id ("" for none).
func (s *Mailboxes) Name(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.boxes[id]; b != nil {
		return b.name
	}
	return ""
}

// Post puts m in the mailbox its To addresses and says what became of it
// (see Delivery). A message is journaled before it can be taken; an
// unknown address is ErrUnknownAddress, and a failed journal write an
// error with nothing kept (the sender may try again).
func (s *Mailboxes) Post(m Message) (Outcome, error) {
	return s.post(m, false)
}

// PostRunning is Post for a message that only a running agent should
// keep (a notification whose agent has ended goes to its parent): when
// the agent does not run, nothing is kept and the outcome says what Post
// would have done.
func (s *Mailboxes) PostRunning(m Message) (Outcome, error) {
	return s.post(m, true)
}

func (s *Mailboxes) post(m Message, runningOnly bool) (Outcome, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.resolve(m.To)
	if !ok {
		return Outcome{}, fmt.Errorf("post to %q: %w", m.To, ErrUnknownAddress)
	}
	box := s.boxes[id]
	if seq, dup := s.keys[m.Key]; dup && m.Key != "" {
		return Outcome{Delivery: Duplicate, To: id, Seq: seq}, nil
	}
	out := Outcome{Delivery: Queued, To: id}
	if !box.live {
		out.Delivery = box.after.Delivery
		if out.Delivery == "" {
			out.Delivery = Resumes
		}
		if out.Delivery == Refused {
			out.Reason = box.after.Reason
		}
		if out.Delivery == Refused || runningOnly {
			return out, nil
		}
	}
	s.seq++
	m.Seq, m.To = s.seq, id
	if m.Note != nil {
		n := *m.Note
		n.To = id
		m.Note = &n
	}
	if !m.volatile() {
		if err := journalOf(s).write(mailRecord{Op: mailPost, Msg: &m}); err != nil {
			s.seq--
			return Outcome{}, fmt.Errorf("post to %s: %w", id, err)
		}
	}
	out.Seq = m.Seq
	if m.Key != "" {
		s.keys[m.Key] = m.Seq
	}
	box.queue = append(box.queue, m)
	box.wake()
	return out, nil
}

// Posted reports whether a message with key was posted (Message.Key), in
// this process or in the journal it replayed.
func (s *Mailboxes) Posted(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.keys[key]
	return key != "" && ok
}

// Take returns what is pending in the mailbox of agent id, in arrival
// order, and holds it in flight until Ack or Requeue; nil when nothing
// is pending.
func (s *Mailboxes) Take(id string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	box := s.boxes[id]
	if box == nil || len(box.queue) == 0 {
		return nil
	}
	taken := box.queue
	box.flight = append(box.flight, taken...)
	box.queue = nil
	return slices.Clone(taken)
}

// Ack marks what is in flight in the mailbox of agent id delivered, and
// returns it: call it once the request that carried it was answered.
// They were delivered whatever the journal says: when it cannot record
// that, they are still returned and gone from the mailbox, and the error
// says a restart would deliver them again.
func (s *Mailboxes) Ack(id string) ([]Message, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	box := s.boxes[id]
	if box == nil || len(box.flight) == 0 {
		return nil, nil
	}
	acked := box.flight
	box.flight = nil
	if seqs := durable(acked); len(seqs) > 0 {
		if err := journalOf(s).write(mailRecord{Op: mailAck, Seqs: seqs}); err != nil {
			return acked, fmt.Errorf("mailbox %s: record %d delivered messages (a restart would deliver them again): %w", id, len(seqs), err)
		}
	}
	return acked, nil
}

// durable lists the numbers of the journaled messages among ms.
func durable(ms []Message) []int64 {
	var seqs []int64
	for _, m := range ms {
		if !m.volatile() {
			seqs = append(seqs, m.Seq)
		}
	}
	return seqs
}

// Requeue puts what is in flight in the mailbox of agent id (taken for a
// request that was never answered) back in front of what is pending.
func (s *Mailboxes) Requeue(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	box := s.boxes[id]
	if box == nil || len(box.flight) == 0 {
		return
	}
	box.queue = append(box.flight, box.queue...)
	box.flight = nil
	box.wake()
}

// Withdraw takes the messages of the mailbox of agent id for which which
// is true (pending or in flight) out of it, undelivered, journaling why,
// and returns them: the caller owns them now (a refused resume answers
// the sender; a killed agent's children's notifications are folded into
// its own).
func (s *Mailboxes) Withdraw(id string, which func(Message) bool, reason string) ([]Message, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	box := s.boxes[id]
	if box == nil {
		return nil, nil
	}
	var out []Message
	split := func(ms []Message) []Message {
		keep := ms[:0]
		for _, m := range ms {
			if which(m) {
				out = append(out, m)
			} else {
				keep = append(keep, m)
			}
		}
		return keep
	}
	flight, queue := slices.Clone(box.flight), slices.Clone(box.queue)
	flight, queue = split(flight), split(queue)
	if seqs := durable(out); len(seqs) > 0 {
		if err := journalOf(s).write(mailRecord{Op: mailWithdrawn, Seqs: seqs, Reason: reason}); err != nil {
			return nil, fmt.Errorf("mailbox %s: withdraw: %w", id, err)
		}
	}
	box.flight, box.queue = flight, queue
	return out, nil
}

// End stops the mailbox of agent id taking messages for a running agent:
// from now on Post answers as after says. What it holds (pending, and in
// flight for a request that was never answered) moves to the mailbox of
// forward in order, or stays for the agent when forward is "" (or when
// the journal cannot record the move: the mailbox ends all the same, and
// the error says so).
func (s *Mailboxes) End(id string, after AfterEnd, forward string) error {
	switch after.Delivery {
	case Later, Resumes, Refused:
	default:
		return fmt.Errorf("mailbox %s: end with %q: not later, resumes or refused", id, after.Delivery)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	box := s.boxes[id]
	if box == nil || id == Main {
		return fmt.Errorf("mailbox %s: %w", id, ErrUnknownAddress)
	}
	held := append(slices.Clone(box.flight), box.queue...)
	box.live, box.after, box.flight, box.queue = false, after, nil, held
	defer box.wake()
	if forward == "" || forward == id || len(held) == 0 {
		return nil
	}
	to, ok := s.resolve(forward)
	if !ok {
		return fmt.Errorf("mailbox %s: forward to %q: %w", id, forward, ErrUnknownAddress)
	}
	if seqs := durable(held); len(seqs) > 0 {
		if err := journalOf(s).write(mailRecord{Op: mailFwd, Seqs: seqs, To: to}); err != nil {
			return fmt.Errorf("mailbox %s: forward: %w", id, err)
		}
	}
	dst := s.boxes[to]
	for _, m := range held {
		m.To = to
		if m.Note != nil {
			n := *m.Note
			n.To = to
			m.Note = &n
		}
		dst.queue = append(dst.queue, m)
	}
	dst.wake()
	box.queue = nil
	return nil
}

// InFlight reports whether anything taken from the mailbox of agent id
// waits for Ack or Requeue.
func (s *Mailboxes) InFlight(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	box := s.boxes[id]
	return box != nil && len(box.flight) > 0
}

// Live reports whether the agent of mailbox id runs (Open, not End);
// the main agent's always does.
func (s *Mailboxes) Live(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	box := s.boxes[id]
	return box != nil && box.live
}

// Pending reports whether anything waits in the mailbox of agent id.
func (s *Mailboxes) Pending(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	box := s.boxes[id]
	return box != nil && len(box.queue) > 0
}

// Changed returns a channel closed when something next arrives in the
// mailbox of agent id (or it ends): a waiting agent is woken at once. For
// an id that has no mailbox it is a channel that is never closed.
func (s *Mailboxes) Changed(id string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if box := s.boxes[id]; box != nil {
		if box.signal == nil {
			box.signal = make(chan struct{})
		}
		return box.signal
	}
	return make(chan struct{})
}

// Close closes the journal; later posts and acknowledgements fail.
func (s *Mailboxes) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file == nil {
		return nil
	}
	return s.file.close()
}

// Queued returns a copy of the messages pending in mailbox id, in
// arrival order (not those in flight).
func (s *Mailboxes) Queued(id string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	box := s.boxes[id]
	if box == nil {
		return nil
	}
	return slices.Clone(box.queue)
}
