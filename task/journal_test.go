package task

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestJournalReplay: what a journal holds when it is opened again —
// notifications written but not delivered, tasks started but never ended
// or notified (interrupted), tasks that ended (each once, as its last run
// ended) — with a torn last line ignored and numbering going on.
func TestJournalReplay(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s", "tasks.jsonl")
	j, rep, err := OpenJournal(path)
	if err != nil || len(rep.Undelivered)+len(rep.Interrupted)+len(rep.Ended) != 0 {
		t.Fatalf("fresh journal: %+v %v", rep, err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	info := func(id string, s Status) Info { return Info{ID: id, Status: s, AgentType: "general-purpose"} }
	// a: ended and delivered; b: ended, notified, not delivered; c: still
	// running; d: ended, then continued and ended again; e: notified but
	// its end record was lost.
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		must(j.Started(info(id, Running)))
	}
	na := &Notification{TaskID: "a", Status: Completed}
	nb := &Notification{TaskID: "b", Status: Failed}
	nd := &Notification{TaskID: "d", Status: Completed}
	ne := &Notification{TaskID: "e", Status: Completed}
	for _, n := range []*Notification{na, nb, nd, ne} {
		must(j.Notify(n))
	}
	must(j.Ended(info("a", Completed)))
	must(j.Ended(info("b", Failed)))
	must(j.Ended(info("d", Completed)))
	must(j.Delivered(na.Seq))
	must(j.Delivered(nd.Seq))
	must(j.Started(info("d", Running)))
	nd2 := &Notification{TaskID: "d", Status: Killed}
	must(j.Notify(nd2))
	must(j.Ended(info("d", Killed)))
	must(j.Delivered(nd2.Seq))
	must(j.Delivered(ne.Seq))
	must(j.Close())
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	must(err)
	_, err = f.WriteString(`{"op":"delivered","seq":`) // torn by a crash
	must(err)
	must(f.Close())

	j2, rep, err := OpenJournal(path)
	must(err)
	defer j2.Close()
	if len(rep.Undelivered) != 1 || rep.Undelivered[0].TaskID != "b" {
		t.Fatalf("undelivered %+v", rep.Undelivered)
	}
	if len(rep.Interrupted) != 1 || rep.Interrupted[0].ID != "c" {
		t.Fatalf("interrupted %+v", rep.Interrupted)
	}
	var ended []string
	for _, e := range rep.Ended {
		ended = append(ended, e.ID+":"+string(e.Status))
	}
	if !slices.Equal(ended, []string{"a:completed", "b:failed", "d:killed"}) {
		t.Fatalf("ended %v", ended)
	}
	n := &Notification{TaskID: "x"}
	must(j2.Notify(n))
	if n.Seq != nd2.Seq+1 {
		t.Fatalf("numbering restarted: %d after %d", n.Seq, nd2.Seq)
	}
}

// TestJournalAfterTornLine: a record written after a torn last line
// (the process died in a write) starts a line of its own, so it is not
// lost with the torn one when the journal is read again.
func TestJournalAfterTornLine(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "tasks.jsonl")
	j, _, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Started(Info{ID: "a", Status: Running, AgentType: "x"}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"op":"start","task":{"id":"b","sta`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	j, rep, err := OpenJournal(path)
	if err != nil || len(rep.Interrupted) != 1 {
		t.Fatalf("replay %+v %v", rep, err)
	}
	if err := j.Ended(Info{ID: "a", Status: Completed, AgentType: "x"}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	_, rep, err = OpenJournal(path)
	if err != nil || len(rep.Interrupted) != 0 || len(rep.Ended) != 1 || rep.Ended[0].ID != "a" {
		t.Fatalf("the record after the torn line was lost: %+v %v", rep, err)
	}
}
