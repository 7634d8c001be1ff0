package task

import (
	"path/filepath"
	"testing"
)

// TestMailboxKeyIdempotent: a post with a key is kept once; a second post
// with the same key keeps nothing and says Duplicate with the first
// message's number, also after the journal is replayed (kill -9, the
// message delivered and acknowledged meanwhile); posts without a key or
// with another key are kept as before.
func TestMailboxKeyIdempotent(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "mailbox.jsonl")
	s, _, err := OpenMailboxes(path)
	mustOK(t, err)
	first, err := s.Post(Message{To: Main, From: "w1", Text: "once", Key: "send:w1:toolu_1"})
	mustOK(t, err)
	again, err := s.Post(Message{To: Main, From: "w1", Text: "once", Key: "send:w1:toolu_1"})
	mustOK(t, err)
	if first.Delivery != Queued || again.Delivery != Duplicate || again.Seq != first.Seq {
		t.Fatalf("first %+v, again %+v", first, again)
	}
	_, err = s.Post(Message{To: Main, From: "w1", Text: "other", Key: "send:w1:toolu_2"})
	mustOK(t, err)
	_, err = s.Post(Message{To: Main, From: "w1", Text: "plain"})
	mustOK(t, err)
	_, err = s.Post(Message{To: Main, From: "w1", Text: "plain"})
	mustOK(t, err)
	if got := texts(s.Take(Main)); len(got) != 4 || got[0] != "once" || got[1] != "other" {
		t.Fatalf("main's mailbox %v", got)
	}
	_, err = s.Ack(Main)
	mustOK(t, err)
	if !s.Posted("send:w1:toolu_1") || s.Posted("send:w1:toolu_9") || s.Posted("") {
		t.Fatal("Posted")
	}
	// kill -9: dropped without Close, then replayed.
	s2, rep, err := OpenMailboxes(path)
	mustOK(t, err)
	if len(rep.Pending) != 0 {
		t.Fatalf("pending after replay %+v", rep.Pending)
	}
	if !s2.Posted("send:w1:toolu_1") || !s2.Posted("send:w1:toolu_2") {
		t.Fatal("keys lost in the replay")
	}
	out, err := s2.Post(Message{To: Main, From: "w1", Text: "once", Key: "send:w1:toolu_1"})
	mustOK(t, err)
	if out.Delivery != Duplicate || out.Seq != first.Seq || s2.Pending(Main) {
		t.Fatalf("after replay: %+v, pending %v", out, s2.Pending(Main))
	}
	mustOK(t, s2.Close())
	mustOK(t, s.Close())
}
