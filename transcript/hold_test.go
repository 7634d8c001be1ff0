package transcript

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/llm"
)

// seen waits until the journal's goroutine took every op queued before,
// without writing what holds keep.
func seen(t *testing.T, j *Journal) {
	t.Helper()
	done := make(chan struct{})
	if err := j.send(journalOp{synced: done, noSync: true, keepHeld: true}); err != nil {
		t.Fatal(err)
	}
	<-done
}

// journalWaiting is a journal whose released holds wait for the others
// for wait (0: until the others are released).
func journalWaiting(wait time.Duration) *Journal {
	j := newJournal(func(path string) (appendFile, error) { return openAppend(path) })
	j.holdWait = wait
	go j.loop()
	return j
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, os.ErrNotExist)
}

// startAgent queues what an agent's start queues: its metadata and its
// first message.
func startAgent(t *testing.T, j *Journal, dir, id string) (tpath, mpath string, w *JournalWriter) {
	t.Helper()
	tpath, mpath = filepath.Join(dir, "agent-"+id+".jsonl"), filepath.Join(dir, "agent-"+id+".meta.json")
	w = j.Transcript(tpath, "s", id, nil)
	if err := j.CreateOwned(mpath, []byte("{\"start\":1}\n")); err != nil {
		t.Fatal(err)
	}
	if err := w.AppendMessage(llm.UserText("prompt of "+id), "", nil); err != nil {
		t.Fatal(err)
	}
	return tpath, mpath, w
}

// TestHoldKeepsAnAgentsFilesUntilTheBurstIsOver: held files do not exist
// while any hold waits, even once their agent answered; the last release
// writes them all; lines keep their order; unheld files are written as
// they come.
func TestHoldKeepsAnAgentsFilesUntilTheBurstIsOver(t *testing.T) {
	dir := t.TempDir()
	j := journalWaiting(0)
	defer j.Close()
	main := filepath.Join(dir, "main.jsonl")
	mw := j.Transcript(main, "s", "", nil)

	ta, ma := filepath.Join(dir, "agent-a.jsonl"), filepath.Join(dir, "agent-a.meta.json")
	tb, mb := filepath.Join(dir, "agent-b.jsonl"), filepath.Join(dir, "agent-b.meta.json")
	ha, hb := j.Hold(ta, ma), j.Hold(tb, mb)
	startAgent(t, j, dir, "b")
	_, _, wa := startAgent(t, j, dir, "a")
	if err := mw.AppendMessage(llm.UserText("main goes on"), "", nil); err != nil {
		t.Fatal(err)
	}
	seen(t, j)
	for _, p := range []string{ta, ma, tb, mb} {
		if exists(p) {
			t.Fatalf("%s exists before its agent's first request", filepath.Base(p))
		}
	}
	if !exists(main) {
		t.Fatal("an unheld transcript waited for the holds")
	}

	ha.Release()
	ha.Release() // twice is once
	if err := wa.AppendMessage(llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("answer")}}, "m", nil); err != nil {
		t.Fatal(err)
	}
	seen(t, j)
	if exists(ta) || exists(ma) {
		t.Fatal("a's files were written while b still waits for its first request")
	}

	hb.Release()
	seen(t, j)
	for _, p := range []string{ta, ma, tb, mb} {
		if !exists(p) {
			t.Fatalf("the last release did not write %s", filepath.Base(p))
		}
	}
	entries, err := ReadFile(ta)
	if err != nil || len(entries) != 2 || entries[0].Message.Text() != "prompt of a" || entries[1].Message.Text() != "answer" {
		t.Fatalf("a's transcript: %+v, %v", entries, err)
	}
	if b, err := os.ReadFile(mb); err != nil || string(b) != "{\"start\":1}\n" {
		t.Fatalf("b's meta: %q, %v", b, err)
	}
	// Released and written: later lines go straight to the file.
	if err := wa.AppendMessage(llm.UserText("later"), "", nil); err != nil {
		t.Fatal(err)
	}
	seen(t, j)
	if entries, _ := ReadFile(ta); len(entries) != 3 {
		t.Fatalf("a line after the burst was held: %d entries", len(entries))
	}
}

// TestHoldReleasedWaitsBoundedly: a released hold's lines are written
// after holdWait though another hold still waits (a sibling stuck before
// its first request); the waiting one's stay held.
func TestHoldReleasedWaitsBoundedly(t *testing.T) {
	dir := t.TempDir()
	j := journalWaiting(time.Millisecond)
	defer j.Close()
	ta, ma := filepath.Join(dir, "agent-a.jsonl"), filepath.Join(dir, "agent-a.meta.json")
	tb, mb := filepath.Join(dir, "agent-b.jsonl"), filepath.Join(dir, "agent-b.meta.json")
	ha, hb := j.Hold(ta, ma), j.Hold(tb, mb)
	defer hb.Release()
	startAgent(t, j, dir, "a")
	startAgent(t, j, dir, "b")
	ha.Release()
	for !exists(ma) { // written by the journal's timer; no bound on when
		seen(t, j)
		time.Sleep(time.Millisecond)
	}
	seen(t, j)
	if entries, err := ReadFile(ta); err != nil || len(entries) != 1 {
		t.Fatalf("a's transcript: %+v, %v", entries, err)
	}
	if exists(tb) || exists(mb) {
		t.Fatal("b's files were written before b's release")
	}
}

// TestHoldWrittenSyncCloseWriteHeldLines: what Written, Sync and Close
// promise holds with a hold waiting.
func TestHoldWrittenSyncCloseWriteHeldLines(t *testing.T) {
	for _, how := range []string{"Written", "Sync", "Close"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			j := NewJournal()
			defer j.Close()
			ta, ma := filepath.Join(dir, "agent-a.jsonl"), filepath.Join(dir, "agent-a.meta.json")
			h := j.Hold(ta, ma)
			defer h.Release()
			_, _, w := startAgent(t, j, dir, "a")
			var err error
			switch how {
			case "Written":
				err = w.Written()
			case "Sync":
				err = j.Sync()
			case "Close":
				err = j.Close()
			}
			if err != nil {
				t.Fatal(err)
			}
			if entries, err := ReadFile(ta); err != nil || len(entries) != 1 {
				t.Fatalf("after %s: %+v, %v", how, entries, err)
			}
			if !exists(ma) {
				t.Fatalf("after %s: no metadata", how)
			}
			if how != "Close" {
				// The hold still holds what comes after.
				if err := w.AppendMessage(llm.UserText("more"), "", nil); err != nil {
					t.Fatal(err)
				}
				seen(t, j)
				if entries, _ := ReadFile(ta); len(entries) != 1 {
					t.Fatalf("after %s: a later line was not held", how)
				}
			}
		})
	}
}

// TestHoldBounded: a journal keeps at most maxHeldOps ops for holds.
func TestHoldBounded(t *testing.T) {
	dir := t.TempDir()
	j := NewJournal()
	defer j.Close()
	ta := filepath.Join(dir, "agent-a.jsonl")
	h := j.Hold(ta)
	defer h.Release()
	w := j.Transcript(ta, "s", "a", nil)
	for range maxHeldOps + 1 {
		if err := w.AppendMessage(llm.UserText("x"), "", nil); err != nil {
			t.Fatal(err)
		}
	}
	seen(t, j)
	if entries, err := ReadFile(ta); err != nil || len(entries) != maxHeldOps+1 {
		t.Fatalf("held past the bound: %d entries, %v", len(entries), err)
	}
}

// TestHoldAfterCloseHoldsNothing: a hold of a closed journal is released.
func TestHoldAfterCloseHoldsNothing(t *testing.T) {
	j := NewJournal()
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	h := j.Hold(filepath.Join(t.TempDir(), "a.jsonl"))
	if !h.Released() {
		t.Fatal("a hold of a closed journal waits")
	}
	h.Release()
	var nilHold *Hold
	nilHold.Release()
	if !nilHold.Released() {
		t.Fatal("a nil hold waits")
	}
}

// TestHoldWrittenLeavesOtherAgentsHeld: Written of one agent's files
// writes its held lines, not those another hold keeps (an agent ending
// does not create the files of siblings still starting).
func TestHoldWrittenLeavesOtherAgentsHeld(t *testing.T) {
	dir := t.TempDir()
	j := journalWaiting(0)
	defer j.Close()
	ta, ma := filepath.Join(dir, "agent-a.jsonl"), filepath.Join(dir, "agent-a.meta.json")
	tb, mb := filepath.Join(dir, "agent-b.jsonl"), filepath.Join(dir, "agent-b.meta.json")
	ha, hb := j.Hold(ta, ma), j.Hold(tb, mb)
	defer hb.Release()
	_, _, wa := startAgent(t, j, dir, "a")
	startAgent(t, j, dir, "b")
	ha.Release()
	if err := j.Written(ta, ma); err != nil {
		t.Fatal(err)
	}
	if entries, err := ReadFile(ta); err != nil || len(entries) != 1 || !exists(ma) {
		t.Fatalf("Written did not write a's files: %+v, %v", entries, err)
	}
	if exists(tb) || exists(mb) {
		t.Fatal("a's Written wrote b's held files")
	}
	// A later line of a is written at once: its hold is gone.
	if err := wa.AppendMessage(llm.UserText("more"), "", nil); err != nil {
		t.Fatal(err)
	}
	seen(t, j)
	if entries, _ := ReadFile(ta); len(entries) != 2 {
		t.Fatalf("a line after Written was held: %d entries", len(entries))
	}
	// Sync writes everything.
	if err := j.Sync(); err != nil {
		t.Fatal(err)
	}
	if !exists(tb) || !exists(mb) {
		t.Fatal("Sync left b's files held")
	}
}

// TestMakeDir: the journal makes the directory it is asked to, in order
// with the other ops.
func TestMakeDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "session")
	j := NewJournal()
	defer j.Close()
	if err := j.MakeDir(dir); err != nil {
		t.Fatal(err)
	}
	seen(t, j)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Fatalf("no directory: %v", err)
	}
}
