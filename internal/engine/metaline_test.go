package engine

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/transcript"
)

// TestWriteMetaOneLine: an agent's .meta.json is one line of JSON that
// reads back as the record, at its start and at its end; the end's
// record is written over the start's in place (the same file).
func TestWriteMetaOneLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent-a1.meta.json")
	j := transcript.NewJournal()
	defer j.Close()
	m := &agentMeta{AgentID: "a1", AgentType: "general-purpose", Description: "d", Depth: 1, Parent: "main", Model: "m",
		StartedAt: time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC), Receipt: run.Receipt{AgentType: "general-purpose", Tools: []string{"Read", "Grep"}}}
	check := func() os.FileInfo {
		t.Helper()
		if err := j.Sync(); err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Count(raw, []byte("\n")) != 1 || raw[len(raw)-1] != '\n' {
			t.Fatalf("not one line: %q", raw)
		}
		var got agentMeta
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(m)
		if back, _ := json.Marshal(&got); !bytes.Equal(back, want) {
			t.Fatalf("read back %s, want %s", back, want)
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	if err := writeMeta(j, path, m); err != nil {
		t.Fatal(err)
	}
	start := check()
	m.Finished, m.Status, m.FinishedAt = true, task.Completed, m.StartedAt.Add(time.Second)
	if err := writeMeta(j, path, m); err != nil {
		t.Fatal(err)
	}
	if end := check(); !os.SameFile(start, end) {
		t.Fatal("the end's record made a new file; want it written over the start's")
	}
}
