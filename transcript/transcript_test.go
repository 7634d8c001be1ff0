package transcript

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/llm"
)

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := SessionPath(dir, "/home/me/my proj", "s1")
	if want := filepath.Join(dir, "projects", "-home-me-my-proj", "s1.jsonl"); path != want {
		t.Fatalf("path %s, want %s", path, want)
	}
	j := NewJournal()
	w := j.Transcript(path, "s1", "", func() time.Time { return time.Unix(0, 0) })
	msgs := []llm.Message{
		llm.UserText("hi"),
		{Role: llm.RoleAssistant, Content: []llm.Block{
			{Type: llm.BlockThinking, Thinking: "hmm", Signature: "sig=="},
			{Type: llm.BlockToolUse, ID: "t1", Name: "Read", Input: []byte(`{"file_path":"/x"}`)},
		}},
		{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock("t1", "body", false)}},
	}
	for _, m := range msgs {
		if err := w.AppendMessage(m, "model-x", &llm.Usage{InputTokens: 3}); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	entries, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(msgs, Messages(entries)); diff != "" {
		t.Fatalf("messages (-want +got):\n%s", diff)
	}
	if entries[1].Model != "model-x" || entries[1].Usage.InputTokens != 3 || entries[0].SessionID != "s1" || entries[0].Timestamp != "1970-01-01T00:00:00Z" {
		t.Fatalf("entry fields %+v", entries[1])
	}
	if err := w.AppendMessage(msgs[0], "", nil); err == nil {
		t.Fatal("append after close succeeded")
	}
}

func TestTornLastLineIgnored(t *testing.T) {
	in := `{"type":"user","sessionId":"s","timestamp":"x","message":{"role":"user","content":[{"type":"text","text":"a"}]}}
{"type":"assistant","sess`
	entries, err := Read(strings.NewReader(in))
	if err != nil || len(entries) != 1 {
		t.Fatalf("entries %d err %v", len(entries), err)
	}
	if _, err := Read(strings.NewReader("garbage\n" + in)); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("bad middle line: err %v", err)
	}
}

func TestStateDir(t *testing.T) {
	env := map[string]string{"XDG_STATE_HOME": "/x/state", "HOME": "/h"}
	if d, _ := StateDir(func(k string) string { return env[k] }); d != "/x/state/cadre" {
		t.Fatal(d)
	}
	delete(env, "XDG_STATE_HOME")
	if d, _ := StateDir(func(k string) string { return env[k] }); d != "/h/.local/state/cadre" {
		t.Fatal(d)
	}
}

func TestMessagesJoinConsecutiveUserEntries(t *testing.T) {
	r := llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock("t", "x", false)}}
	p := llm.UserText("more")
	got := Messages([]Entry{{Message: &r}, {Message: &p}})
	if len(got) != 1 || len(got[0].Content) != 2 || len(r.Content) != 1 {
		t.Fatalf("got %+v (original %+v)", got, r)
	}
}

func TestJournalWritesInOrderAndDrains(t *testing.T) {
	dir := t.TempDir()
	j := NewJournal()
	var ws []*JournalWriter
	for i := range 8 {
		ws = append(ws, j.Transcript(filepath.Join(dir, "s", "agent-"+string(rune('a'+i))+".jsonl"), "s", string(rune('a'+i)), nil))
	}
	done := make(chan struct{})
	for _, w := range ws {
		go func() {
			defer func() { done <- struct{}{} }()
			for k := range 200 {
				if err := w.AppendMessage(llm.UserText(strings.Repeat("x", k)), "", nil); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for range ws {
		<-done
	}
	if err := j.Replace(filepath.Join(dir, "s", "meta.json"), []byte(`{"ok":true}`)); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		entries, err := ReadFile(w.Path())
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 200 {
			t.Fatalf("%s: %d entries", w.Path(), len(entries))
		}
		for k, e := range entries {
			if len(e.Message.Text()) != k {
				t.Fatalf("%s: entry %d out of order", w.Path(), k)
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "s", "meta.json")); err != nil || string(b) != `{"ok":true}` {
		t.Fatalf("meta %q %v", b, err)
	}
	if err := ws[0].AppendMessage(llm.UserText("late"), "", nil); err == nil {
		t.Fatal("append after close succeeded")
	}
	if err := j.Close(); err != nil {
		t.Fatal("second close:", err)
	}
}

func TestJournalReportsWriteErrors(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	j := NewJournal()
	w := j.Transcript(filepath.Join(blocker, "under-a-file.jsonl"), "s", "", nil)
	_ = w.AppendMessage(llm.UserText("x"), "", nil)
	if err := j.Close(); err == nil || !strings.Contains(err.Error(), "transcript") {
		t.Fatalf("close error %v", err)
	}
}

func TestMessagesStartAtLastCompactBoundary(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.jsonl")
	j := NewJournal()
	w := j.Transcript(path, "s", "", nil)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.AppendMessage(llm.UserText("old task"), "", nil))
	must(w.AppendMessage(llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("old answer")}}, "m", nil))
	must(w.AppendCompact(CompactBoundary{Trigger: "auto", PreTokens: 5200, PostTokens: 300, DurationMs: 12, Summary: "s"}))
	must(w.AppendMessage(llm.UserText("summary"), "", nil))
	must(w.AppendMessage(llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("new answer")}}, "m", nil))
	must(j.Close())
	entries, err := ReadFile(path)
	must(err)
	if len(entries) != 5 || entries[2].Type != EntryCompactBoundary || entries[2].Compact.PreTokens != 5200 {
		t.Fatalf("the file does not keep the whole history and the boundary: %+v", entries)
	}
	msgs := Messages(entries)
	if len(msgs) != 2 || msgs[0].Text() != "summary" {
		t.Fatalf("resume messages %+v", msgs)
	}
}
