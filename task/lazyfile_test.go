package task

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJournalsCreatedByTheirFirstRecord: opening a session's task and
// mailbox journals creates no file (nor their directory) — most sessions
// never write either, and a file creation is the slowest step before a
// run's first model request; the first record creates the file, and a
// journal opened again replays it.
func TestJournalsCreatedByTheirFirstRecord(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "session")
	tasks, mail := filepath.Join(dir, "tasks.jsonl"), filepath.Join(dir, "mailbox.jsonl")
	j, _, err := OpenJournal(tasks)
	mustOK(t, err)
	s, _, err := OpenMailboxes(mail)
	mustOK(t, err)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("opening the journals made their directory: %v", err)
	}
	mustOK(t, s.Open("w1", "worker"))
	if _, err := s.Post(Message{To: Main, From: "w1", Text: "hello"}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(mail); err != nil || !strings.Contains(string(b), "hello") {
		t.Fatalf("mailbox journal after the first message: %q, %v", b, err)
	}
	if _, err := os.Stat(tasks); !os.IsNotExist(err) {
		t.Fatalf("the task journal was made without a record: %v", err)
	}
	mustOK(t, s.Close())
	mustOK(t, j.Close())
	if _, err := s.Post(Message{To: Main, From: "w1", Text: "late"}); err == nil {
		t.Fatal("a message posted after Close was kept")
	}
	_, rep, err := OpenMailboxes(mail)
	mustOK(t, err)
	if len(rep.Pending) != 1 || rep.Pending[0].Text != "hello" {
		t.Fatalf("replayed %+v, want the one message", rep.Pending)
	}
}
