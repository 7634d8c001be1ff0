package task

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// texts lists the messages' texts.
func texts(ms []Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Text)
	}
	return out
}

// TestMailboxAddresses: an agent is reached by its id, by its name when
// it has one, and the main agent by "main"; names are unique in a session
// and well formed, and cannot be confused with an id.
func TestMailboxAddresses(t *testing.T) {
	t.Parallel()
	s := MemoryMailboxes()
	mustOK(t, s.Open("a1", "alice"))
	mustOK(t, s.Open("b2", ""))
	for _, tc := range []struct {
		addr, want string
		ok         bool
	}{
		{"main", Main, true},
		{"a1", "a1", true},
		{"alice", "a1", true},
		{"b2", "b2", true},
		{"bob", "", false},
		{"", "", false},
	} {
		got, ok := s.Resolve(tc.addr)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Resolve(%q) = %q, %v; want %q, %v", tc.addr, got, ok, tc.want, tc.ok)
		}
	}
	for _, tc := range []struct {
		id, name string
		want     error
	}{
		{"c3", "alice", ErrNameTaken}, // another agent's name
		{"c3", "b2", ErrNameTaken},    // another agent's id
		{"alice", "", ErrNameTaken},   // an id that is a name
		{"c3", "main", ErrBadName},
		{"c3", "team-lead", ErrBadName},
		{"c3", "user", ErrBadName},
		{"c3", "system", ErrBadName},
		{"c3", "has space", ErrBadName},
		{"c3", "ünï", ErrBadName},
		{"c3", string(make([]byte, 65)), ErrBadName},
		{"c3", "carol_2-x", nil},
		{"a1", "alice", nil}, // the same agent again (continued)
	} {
		if err := s.Open(tc.id, tc.name); !errors.Is(err, tc.want) {
			t.Errorf("Open(%q, %q) = %v; want %v", tc.id, tc.name, err, tc.want)
		}
	}
	if err := s.Open(Main, ""); err == nil {
		t.Error("Open(main) is no agent's mailbox, want an error")
	}
	if got := s.Name("c3"); got != "carol_2-x" {
		t.Errorf("Name(c3) = %q", got)
	}
	if _, ok := s.Resolve("c3"); !ok {
		t.Error("c3 lost its id address")
	}
}

// TestMailboxDelivery: what Post says for each state of the receiving
// agent, and whether the message is kept.
func TestMailboxDelivery(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		to     string
		end    *AfterEnd // the agent ended (nil: it runs)
		want   Outcome
		kept   bool
		errIs  error
		reopen bool // Open it again after: the message is there
	}{
		{name: "running", to: "w1", want: Outcome{Delivery: Queued, To: "w1", Seq: 1}, kept: true},
		{name: "by name", to: "worker", want: Outcome{Delivery: Queued, To: "w1", Seq: 1}, kept: true},
		{name: "main", to: Main, want: Outcome{Delivery: Queued, To: Main, Seq: 1}, kept: true},
		{name: "idle", to: "w1", end: &AfterEnd{Delivery: Later}, want: Outcome{Delivery: Later, To: "w1", Seq: 1}, kept: true, reopen: true},
		{name: "ended, resumable", to: "worker", end: &AfterEnd{Delivery: Resumes}, want: Outcome{Delivery: Resumes, To: "w1", Seq: 1}, kept: true, reopen: true},
		{name: "ended, refused", to: "w1", end: &AfterEnd{Delivery: Refused, Reason: "one-shot"}, want: Outcome{Delivery: Refused, To: "w1", Reason: "one-shot"}},
		{name: "unknown", to: "nobody", errIs: ErrUnknownAddress},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _, err := OpenMailboxes(filepath.Join(t.TempDir(), "mailbox.jsonl"))
			mustOK(t, err)
			defer s.Close()
			mustOK(t, s.Open("w1", "worker"))
			if tc.end != nil {
				mustOK(t, s.End("w1", *tc.end, ""))
			}
			id, _ := s.Resolve(tc.to)
			woken := s.Changed(id)
			got, err := s.Post(Message{To: tc.to, From: Main, Text: "hello"})
			if !errors.Is(err, tc.errIs) {
				t.Fatalf("Post: %v; want %v", err, tc.errIs)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("outcome (-want +got):\n%s", d)
			}
			if tc.errIs != nil {
				return
			}
			if s.Pending(id) != tc.kept {
				t.Errorf("kept = %v, want %v", !tc.kept, tc.kept)
			}
			if tc.kept {
				select {
				case <-woken:
				default:
					t.Error("a waiting receiver was not woken")
				}
			}
			if tc.reopen {
				mustOK(t, s.Open("w1", ""))
				got, _ := s.Post(Message{To: "w1", Text: "again"})
				if got.Delivery != Queued {
					t.Errorf("after Open: %s, want queued", got.Delivery)
				}
				if d := cmp.Diff([]string{"hello", "again"}, texts(s.Take("w1"))); d != "" {
					t.Errorf("the continued agent gets (-want +got):\n%s", d)
				}
			}
		})
	}
}

// TestMailboxTwoPhase: Take holds messages in flight, Requeue puts them
// back in front, Ack delivers them once.
func TestMailboxTwoPhase(t *testing.T) {
	t.Parallel()
	s := MemoryMailboxes()
	for _, txt := range []string{"a", "b"} {
		if _, err := s.Post(Message{To: Main, Text: txt}); err != nil {
			t.Fatal(err)
		}
	}
	if got := texts(s.Take(Main)); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("Take = %q", got)
	}
	if s.Pending(Main) || s.Take(Main) != nil {
		t.Fatal("taken messages are still pending")
	}
	_, _ = s.Post(Message{To: Main, Text: "c"})
	s.Requeue(Main) // the request was never answered
	if got := texts(s.Take(Main)); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("after Requeue, Take = %q", got)
	}
	acked, err := s.Ack(Main)
	mustOK(t, err)
	if got := texts(acked); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("Ack = %q", got)
	}
	s.Requeue(Main)
	if s.Take(Main) != nil {
		t.Fatal("an acknowledged message came back")
	}
	if acked, _ := s.Ack(Main); acked != nil {
		t.Fatalf("a second Ack delivered %q", texts(acked))
	}
}

// TestMailboxEndForwards: an agent that ends hands what it held (pending
// and in flight) to the mailbox named, in order, and answers later posts
// as its end says.
func TestMailboxEndForwards(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "mailbox.jsonl")
	s, _, err := OpenMailboxes(path)
	mustOK(t, err)
	mustOK(t, s.Open("p", ""))
	mustOK(t, s.Open("c", ""))
	_, _ = s.Post(Message{To: "p", Text: "p1"})
	_, _ = s.Post(Message{To: "c", Text: "c1"})
	s.Take("c")
	_, _ = s.Post(Message{To: "c", Text: "c2", Note: &Notification{TaskID: "g"}})
	mustOK(t, s.End("c", AfterEnd{Delivery: Resumes}, "p"))
	got := s.Take("p")
	if d := cmp.Diff([]string{"p1", "c1", "c2"}, texts(got)); d != "" {
		t.Fatalf("parent gets (-want +got):\n%s", d)
	}
	if got[2].To != "p" || got[2].Note.To != "p" {
		t.Errorf("a forwarded notification is addressed to %q/%q, want p", got[2].To, got[2].Note.To)
	}
	if out, _ := s.Post(Message{To: "c", Text: "c3"}); out.Delivery != Resumes {
		t.Errorf("post to the ended agent: %s", out.Delivery)
	}
	if err := s.End("c", AfterEnd{Delivery: "gone"}, ""); err == nil {
		t.Error("End with an unknown delivery: no error")
	}
	if err := s.End("zz", AfterEnd{Delivery: Later}, ""); !errors.Is(err, ErrUnknownAddress) {
		t.Errorf("End of an unknown agent: %v", err)
	}
	// The forward is in the journal: reopened, c3 waits for c and c1 is
	// p's (the note is the task journal's).
	_, rep, err := OpenMailboxes(path)
	mustOK(t, err)
	want := []Message{{Seq: 4, To: "c", Text: "c3"}, {Seq: 1, To: "p", Text: "p1"}, {Seq: 2, To: "p", Text: "c1"}}
	if d := cmp.Diff(want, rep.Pending); d != "" {
		t.Errorf("replayed (-want +got):\n%s", d)
	}
}

// TestMailboxWithdraw: a withdrawn message is the caller's, gone from
// the mailbox and from the journal's pending ones.
func TestMailboxWithdraw(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "mailbox.jsonl")
	s, _, err := OpenMailboxes(path)
	mustOK(t, err)
	mustOK(t, s.Open("x", ""))
	mustOK(t, s.End("x", AfterEnd{Delivery: Resumes}, ""))
	out, err := s.Post(Message{To: "x", Text: "continue"})
	mustOK(t, err)
	_, _ = s.Post(Message{To: "x", Text: "keep"})
	got, err := s.Withdraw("x", func(m Message) bool { return m.Seq == out.Seq }, "its type is no longer defined")
	mustOK(t, err)
	if d := cmp.Diff([]string{"continue"}, texts(got)); d != "" {
		t.Fatalf("withdrawn (-want +got):\n%s", d)
	}
	_, rep, err := OpenMailboxes(path)
	mustOK(t, err)
	if d := cmp.Diff([]string{"keep"}, texts(rep.Pending)); d != "" {
		t.Errorf("replayed (-want +got):\n%s", d)
	}
}

// TestMailboxCrash: a process dies (the store is dropped, never closed)
// with messages pending, in flight and acknowledged, and its last record
// torn; the session's journal opened again has every message that was
// not acknowledged pending again, in order, and none that was.
func TestMailboxCrash(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state", "mailbox.jsonl")
	s, rep, err := OpenMailboxes(path)
	mustOK(t, err)
	if len(rep.Pending) != 0 {
		t.Fatalf("fresh journal: %+v", rep)
	}
	mustOK(t, s.Open("w1", "worker"))
	post := func(to, txt string) {
		t.Helper()
		if _, err := s.Post(Message{To: to, From: "w1", Text: txt}); err != nil {
			t.Fatal(err)
		}
	}
	post(Main, "m1")
	post("worker", "w-1")
	s.Take(Main)
	_, err = s.Ack(Main) // m1 delivered
	mustOK(t, err)
	post(Main, "m2")
	s.Take(Main) // m2 in flight when the process dies
	post(Main, "m3")
	post("w1", "w-2")
	s.Take("w1")
	_, _ = s.Post(Message{To: Main, Text: "note", Note: &Notification{TaskID: "t"}}) // the task journal's
	// "kill -9": s is dropped without Close, and the next record is torn.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	mustOK(t, err)
	_, err = f.WriteString(`{"op":"ack","seqs":[2,`)
	mustOK(t, err)
	mustOK(t, f.Close())

	s2, rep, err := OpenMailboxes(path)
	mustOK(t, err)
	// Numbers follow posting order (m1 1, w-1 2, m2 3, m3 4, w-2 5, the
	// note 6); mailboxes come main first.
	want := []Message{
		{Seq: 3, To: Main, From: "w1", Text: "m2"},
		{Seq: 4, To: Main, From: "w1", Text: "m3"},
		{Seq: 2, To: "w1", From: "w1", Text: "w-1"},
		{Seq: 5, To: "w1", From: "w1", Text: "w-2"},
	}
	if d := cmp.Diff(want, rep.Pending); d != "" {
		t.Fatalf("replayed (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]string{"w1": "worker"}, rep.Names); d != "" {
		t.Errorf("names (-want +got):\n%s", d)
	}
	// The worker belonged to the dead process: its mail waits for it to
	// be continued, and it can be reached by name still.
	if out, err := s2.Post(Message{To: "worker", Text: "w-3"}); err != nil || out.Delivery != Resumes || out.Seq <= 5 {
		t.Errorf("post to the earlier worker: %+v %v; want resumes, numbered past 5", out, err)
	}
	if got := texts(s2.Take(Main)); !slices.Equal(got, []string{"m2", "m3"}) {
		t.Fatalf("main gets %q", got)
	}
	_, err = s2.Ack(Main)
	mustOK(t, err)
	mustOK(t, s2.End("w1", AfterEnd{Delivery: Resumes}, Main))
	if got := texts(s2.Take(Main)); !slices.Equal(got, []string{"w-1", "w-2", "w-3"}) {
		t.Fatalf("forwarded to main: %q", got)
	}
	_, err = s2.Ack(Main)
	mustOK(t, err)
	// Dropped again; a third process has nothing to deliver.
	_, rep, err = OpenMailboxes(path)
	mustOK(t, err)
	if len(rep.Pending) != 0 {
		t.Errorf("delivered again after a second restart: %q", texts(rep.Pending))
	}
}

// TestMailboxWriteFails: a post the journal cannot record is refused
// with an error and not kept; an acknowledgement it cannot record is
// reported, and the messages, delivered, are not delivered again.
func TestMailboxWriteFails(t *testing.T) {
	t.Parallel()
	s, _, err := OpenMailboxes(filepath.Join(t.TempDir(), "mailbox.jsonl"))
	mustOK(t, err)
	_, err = s.Post(Message{To: Main, Text: "a"})
	mustOK(t, err)
	s.Take(Main)
	mustOK(t, s.Close())
	if _, err := s.Post(Message{To: Main, Text: "b"}); err == nil {
		t.Error("post after Close: no error")
	}
	if acked, err := s.Ack(Main); err == nil || !slices.Equal(texts(acked), []string{"a"}) {
		t.Errorf("ack after Close: %q %v; want [a] and an error", texts(acked), err)
	}
	s.Requeue(Main)
	if got := s.Take(Main); got != nil {
		t.Errorf("after failed writes the mailbox holds %q, want nothing", texts(got))
	}
}

// TestMailboxConcurrent: many senders post to one receiver that takes
// and acknowledges as it goes; every message arrives exactly once, in
// order per sender, and the journal holds nothing pending after.
func TestMailboxConcurrent(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "mailbox.jsonl")
	s, _, err := OpenMailboxes(path)
	mustOK(t, err)
	const senders, each = 8, 25
	mustOK(t, s.Open("r", "receiver"))
	var wg sync.WaitGroup
	for i := range senders {
		from := fmt.Sprintf("s%d", i)
		wg.Go(func() {
			for n := range each {
				if _, err := s.Post(Message{To: "receiver", From: from, Text: fmt.Sprint(n)}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	got := map[string][]string{}
	total := 0
	for round := 0; total < senders*each; round++ {
		ch := s.Changed("r")
		ms := s.Take("r")
		if len(ms) == 0 {
			<-ch
			continue
		}
		if round%3 == 0 {
			s.Requeue("r") // a request that failed: delivered next time
			continue
		}
		acked, err := s.Ack("r")
		mustOK(t, err)
		for _, m := range acked {
			got[m.From] = append(got[m.From], m.Text)
			total++
		}
	}
	wg.Wait()
	for i := range senders {
		from := fmt.Sprintf("s%d", i)
		var want []string
		for n := range each {
			want = append(want, fmt.Sprint(n))
		}
		if d := cmp.Diff(want, got[from]); d != "" {
			t.Errorf("from %s (-want +got):\n%s", from, d)
		}
	}
	mustOK(t, s.Close())
	_, rep, err := OpenMailboxes(path)
	mustOK(t, err)
	if len(rep.Pending) != 0 {
		t.Errorf("%d messages pending after all were delivered", len(rep.Pending))
	}
}

// FuzzMailboxJournal: any bytes read as a mailbox journal give mailboxes,
// never a panic; what is pending is numbered once each and addressed to a
// mailbox that exists; new numbers go on past the old; a second opening
// replays the same; acknowledging everything leaves nothing pending.
func FuzzMailboxJournal(f *testing.F) {
	f.Add([]byte(`{"op":"addr","id":"a1","name":"alice"}
{"op":"post","msg":{"seq":1,"to":"main","text":"hi"}}
{"op":"post","msg":{"seq":2,"to":"a1","text":"yo"}}
{"op":"ack","seqs":[1]}
{"op":"fwd","seqs":[2],"to":"main"}
{"op":"withdrawn","seqs":[3],"reason":"x"}
{"op":"post","msg":{"seq":3,"to":"b","text":"`))
	f.Add([]byte(`{"op":"post","msg":{"seq":-1,"to":"main"}}` + "\n" + `{"op":"post","msg":{"seq":5,"to":""}}` + "\n" + `{"op":"addr","id":"main","name":"x"}`))
	f.Add([]byte("\n\n{}\nnot json\n{\"op\":\"addr\",\"id\":\"x\",\"name\":\"main\"}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "mailbox.jsonl")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		s, rep, err := OpenMailboxes(path)
		if err != nil {
			t.Fatalf("a readable file did not open: %v", err)
		}
		seen := map[int64]bool{}
		var top int64
		for _, m := range rep.Pending {
			if seen[m.Seq] || m.Seq <= 0 {
				t.Fatalf("pending number %d twice or invalid", m.Seq)
			}
			seen[m.Seq] = true
			top = max(top, m.Seq)
			if id, ok := s.Resolve(m.To); !ok || id != m.To {
				t.Fatalf("pending message to %q, which has no mailbox", m.To)
			}
		}
		out, err := s.Post(Message{To: Main, Text: "new"})
		if err != nil || out.Seq <= top {
			t.Fatalf("new post %+v %v after numbers up to %d", out, err, top)
		}
		mustOK(t, s.Close())
		s2, rep2, err := OpenMailboxes(path)
		if err != nil {
			t.Fatal(err)
		}
		// Main's mailbox comes first: the new message ends its part.
		i := 0
		for i < len(rep.Pending) && rep.Pending[i].To == Main {
			i++
		}
		want := slices.Insert(slices.Clone(rep.Pending), i, Message{Seq: out.Seq, To: Main, Text: "new"})
		if d := cmp.Diff(want, rep2.Pending); d != "" {
			t.Fatalf("second opening differs (-first +second):\n%s", d)
		}
		for id := range rep2.Names {
			mustOK(t, s2.End(id, AfterEnd{Delivery: Resumes}, Main))
		}
		for _, m := range rep2.Pending {
			if m.To != Main {
				_ = s2.End(m.To, AfterEnd{Delivery: Resumes}, Main)
			}
		}
		s2.Take(Main)
		if _, err := s2.Ack(Main); err != nil {
			t.Fatal(err)
		}
		mustOK(t, s2.Close())
		_, rep3, err := OpenMailboxes(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep3.Pending) != 0 {
			t.Fatalf("pending after all were acknowledged: %+v", rep3.Pending)
		}
	})
}

// TestMailboxPostRunning: PostRunning keeps a message only for a running
// agent and otherwise says what Post would have done, keeping nothing;
// opening an unnamed agent's mailbox writes nothing.
func TestMailboxPostRunning(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "mailbox.jsonl")
	s, _, err := OpenMailboxes(path)
	mustOK(t, err)
	mustOK(t, s.Open("c", ""))
	// The journal is created by its first record (issue 24): no file is
	// nothing written.
	if st, err := os.Stat(path); (err == nil && st.Size() != 0) || (err != nil && !errors.Is(err, fs.ErrNotExist)) {
		t.Fatalf("opening an unnamed mailbox wrote to the journal: %v %v", st, err)
	}
	note := Message{To: "c", Text: "n1", Note: &Notification{TaskID: "g"}}
	if out, err := s.PostRunning(note); err != nil || out.Delivery != Queued || !s.Live("c") {
		t.Fatalf("to a running agent: %+v %v", out, err)
	}
	mustOK(t, s.End("c", AfterEnd{Delivery: Resumes}, Main))
	if s.Live("c") || !s.Live(Main) {
		t.Fatal("Live after End")
	}
	note.Text = "n2"
	if out, err := s.PostRunning(note); err != nil || out.Delivery != Resumes || s.Pending("c") {
		t.Fatalf("to an ended agent: %+v %v, pending %v", out, err, s.Pending("c"))
	}
	if got := texts(s.Take(Main)); !slices.Equal(got, []string{"n1"}) {
		t.Fatalf("main got %q", got)
	}
}
