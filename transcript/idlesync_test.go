package transcript

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/safefs"
	"github.com/cadre-dev/cadre/llm"
)

// notifySync is a transcript opened again to be synced; it reports each
// sync of its path.
type notifySync struct {
	*os.File
	path   string
	synced chan<- string
}

func (f notifySync) Sync() error {
	err := f.File.Sync()
	f.synced <- f.path
	return err
}

// TestJournalSyncsReleasedFilesWhileIdle: the transcripts of agents that
// ended are synced while nothing else is to be written — before any Sync
// or Close asks for it — so a run's last sync (between the final answer
// and the exit) no longer opens and syncs every sub-agent's file; and each
// is synced once, not again at Close.
func TestJournalSyncsReleasedFilesWhileIdle(t *testing.T) {
	dir := t.TempDir()
	const n = 8
	synced := make(chan string, 4*n)
	j := newJournal(func(path string) (appendFile, error) { return openAppend(path) })
	j.reopen = func(path string) (syncFile, error) {
		f, err := safefs.OpenNoFollow(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return nil, err
		}
		return notifySync{File: f, path: path, synced: synced}, nil
	}
	go j.loop()
	want := map[string]bool{}
	for i := range n {
		w := j.Transcript(filepath.Join(dir, fmt.Sprintf("agent-a%d.jsonl", i)), "s", fmt.Sprintf("a%d", i), nil)
		want[w.Path()] = true
		if err := w.AppendMessage(llm.UserText("done"), "", nil); err != nil {
			t.Fatal(err)
		}
		if err := w.Release(); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]int{}
	for len(seen) < n {
		select {
		case p := <-synced:
			seen[p]++
		case <-time.After(time.Minute):
			t.Fatalf("after a minute idle, %d of %d released transcripts synced: %v", len(seen), n, seen)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	close(synced)
	for p := range synced {
		seen[p]++
	}
	for p, k := range seen {
		if !want[p] || k != 1 {
			t.Errorf("%s synced %d times through a reopen, want once", p, k)
		}
	}
}
