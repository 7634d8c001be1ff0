package task

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestJournalsCreatedByTheirFirstRecord: opening the task journal and the
// mailbox journal of a new session creates no file (issue 24: a file
// fewer each on a session's start, where most sessions never write one);
// the first record creates the file and its directory, and a journal
// opened again appends after what is there.
func TestJournalsCreatedByTheirFirstRecord(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "session")
	tasks, mailbox := filepath.Join(dir, "tasks.jsonl"), filepath.Join(dir, "mailbox.jsonl")
	j, _, err := OpenJournal(tasks)
	mustOK(t, err)
	m, _, err := OpenMailboxes(mailbox)
	mustOK(t, err)
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("opening the journals made %s: %v", dir, err)
	}
	mustOK(t, j.Started(Info{ID: "a", Status: Running}))
	if _, err := os.Stat(tasks); err != nil {
		t.Fatalf("the first record did not create the task journal: %v", err)
	}
	if _, err := os.Stat(mailbox); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a task record made the mailbox journal: %v", err)
	}
	mustOK(t, j.Close())
	mustOK(t, m.Close())
	if err := j.Started(Info{ID: "b", Status: Running}); err == nil {
		t.Fatal("a closed journal took a record")
	}

	j2, rep, err := OpenJournal(tasks)
	mustOK(t, err)
	if len(rep.Interrupted) != 1 || rep.Interrupted[0].ID != "a" {
		t.Fatalf("replay: %+v", rep)
	}
	mustOK(t, j2.Ended(Info{ID: "a", Status: Completed}))
	mustOK(t, j2.Close())
	_, rep, err = OpenJournal(tasks)
	mustOK(t, err)
	if len(rep.Interrupted) != 0 || len(rep.Ended) != 1 {
		t.Fatalf("replay after the end: %+v", rep)
	}
}
