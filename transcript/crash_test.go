package transcript

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/prompts"
)

func use(id string) llm.Block {
	return llm.Block{Type: llm.BlockToolUse, ID: id, Name: "Bash", Input: []byte(`{"command":"make"}`)}
}

func interrupted(id string) llm.Block {
	return llm.ToolResultBlock(id, prompts.CallInterrupted(), true)
}

func TestCloseInterrupted(t *testing.T) {
	asst := func(b ...llm.Block) llm.Message { return llm.Message{Role: llm.RoleAssistant, Content: b} }
	user := func(b ...llm.Block) llm.Message { return llm.Message{Role: llm.RoleUser, Content: b} }
	ok := func(id string) llm.Block { return llm.ToolResultBlock(id, "done", false) }
	cases := []struct {
		name  string
		in    []llm.Message
		want  []llm.Message
		added int
	}{
		{"whole", []llm.Message{llm.UserText("go"), asst(use("a")), user(ok("a"))}, nil, 0},
		{"last answer's calls", []llm.Message{llm.UserText("go"), asst(llm.TextBlock("x"), use("a"), use("b"))},
			[]llm.Message{llm.UserText("go"), asst(llm.TextBlock("x"), use("a"), use("b")), user(interrupted("a"), interrupted("b"))}, 2},
		{"some results recorded", []llm.Message{llm.UserText("go"), asst(use("a"), use("b")), user(ok("a"), llm.TextBlock("next"))},
			[]llm.Message{llm.UserText("go"), asst(use("a"), use("b")), user(ok("a"), interrupted("b"), llm.TextBlock("next"))}, 1},
		{"a later prompt", []llm.Message{llm.UserText("go"), asst(use("a")), llm.UserText("resumed"), asst(llm.TextBlock("ok"))},
			[]llm.Message{llm.UserText("go"), asst(use("a")), user(interrupted("a"), llm.TextBlock("resumed")), asst(llm.TextBlock("ok"))}, 1},
		{"two answers in a row", []llm.Message{llm.UserText("go"), asst(use("a")), asst(llm.TextBlock("x"))},
			[]llm.Message{llm.UserText("go"), asst(use("a")), user(interrupted("a")), asst(llm.TextBlock("x"))}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			orig := cloneMsgs(c.in)
			got, added := CloseInterrupted(c.in)
			want := c.want
			if want == nil {
				want = c.in
			}
			if diff := cmp.Diff(want, got); diff != "" || added != c.added {
				t.Fatalf("added %d (want %d) (-want +got):\n%s", added, c.added, diff)
			}
			if diff := cmp.Diff(orig, c.in); diff != "" {
				t.Fatalf("input changed:\n%s", diff)
			}
			again, n := CloseInterrupted(got)
			if n != 0 || !cmp.Equal(again, got) {
				t.Fatalf("not idempotent: %d more", n)
			}
		})
	}
}

func cloneMsgs(ms []llm.Message) []llm.Message {
	out := make([]llm.Message, len(ms))
	for i, m := range ms {
		out[i] = llm.Message{Role: m.Role, Content: append([]llm.Block(nil), m.Content...)}
	}
	return out
}

func TestScanTornRecords(t *testing.T) {
	good := `{"type":"user","sessionId":"s","timestamp":"x","message":{"role":"user","content":[{"type":"text","text":"a"}]}}`
	in := good + "\n" + `{"type":"assistant","message":{"role":"assistant","content":[{"type":"te` + "\n" + good + "\n" + `{"type":"us`
	entries, torn, err := Scan(strings.NewReader(in))
	if err != nil || len(entries) != 2 {
		t.Fatalf("entries %d err %v", len(entries), err)
	}
	if len(torn) != 2 || torn[0].Line != 2 || torn[1].Line != 4 || torn[1].Bytes != len(`{"type":"us`) {
		t.Fatalf("torn %+v", torn)
	}
	if w := TornWarning("/t.jsonl", torn); !strings.Contains(w, "/t.jsonl") || !strings.Contains(w, "line 2") || !strings.Contains(w, "line 4") {
		t.Fatalf("warning %q", w)
	}
	// A record glued after a torn one (an older writer) is kept.
	glued := good + "\n" + `{"type":"assistant","message":{"role":"assi` + good + "\n"
	entries, torn, err = Scan(strings.NewReader(glued))
	if err != nil || len(entries) != 2 || len(torn) != 1 || torn[0].Line != 2 || torn[0].Bytes != len(`{"type":"assistant","message":{"role":"assi`) {
		t.Fatalf("glued: entries %d torn %+v err %v", len(entries), torn, err)
	}
	// A complete line that is not an entry is damage, not a tear.
	for _, bad := range []string{"garbage\n" + good + "\n", good + "\n" + `{"type":"user"} {"x":1}` + "\n" + good + "\n", `["a"]` + "\n"} {
		if _, _, err := Scan(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// A crash tore the last line; the next run's journal ends it before its
// first record, so both that record and everything before it read back.
func TestJournalAppendsAfterTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	j := NewJournal()
	w := j.Transcript(path, "s", "", nil)
	if err := w.AppendMessage(llm.UserText("first"), "", nil); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"type":"assistant","sessionId":"s","message":{"role":"assi`); err != nil {
		t.Fatal(err)
	}
	f.Close()

	j = NewJournal()
	w = j.Transcript(path, "s", "", nil)
	if err := w.AppendMessage(llm.UserText("second"), "", nil); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	entries, torn, err := ScanFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range Messages(entries) {
		texts = append(texts, m.Text())
	}
	if len(torn) != 1 || torn[0].Line != 2 || strings.Join(texts, "|") != "firstsecond" {
		t.Fatalf("torn %+v messages %q", torn, texts)
	}
}

// faultFile writes through to a real file until its budget of bytes is
// spent, then writes what fits and fails like a full disk.
type faultFile struct {
	*os.File
	budget *int
}

func (f faultFile) Write(p []byte) (int, error) {
	if len(p) <= *f.budget {
		*f.budget -= len(p)
		return f.File.Write(p)
	}
	n, _ := f.File.Write(p[:*f.budget])
	*f.budget = 0
	return n, syscall.ENOSPC
}

func TestJournalFailedWriteLeavesNoPartialRecord(t *testing.T) {
	dir := t.TempDir()
	full, other := filepath.Join(dir, "full.jsonl"), filepath.Join(dir, "other.jsonl")
	budget := 1 << 20
	j := newJournal(func(path string) (appendFile, error) {
		f, err := openAppend(path)
		if err != nil || path != full {
			return f, err
		}
		return faultFile{File: f, budget: &budget}, nil
	})
	go j.loop()
	w, o := j.Transcript(full, "s", "", nil), j.Transcript(other, "s", "a1", nil)
	if err := w.AppendMessage(llm.UserText("kept"), "", nil); err != nil {
		t.Fatal(err)
	}
	if err := j.Sync(); err != nil {
		t.Fatal(err)
	}
	budget = 40 // the next record is longer: a short write, then ENOSPC
	if err := w.AppendMessage(llm.UserText(strings.Repeat("lost ", 30)), "", nil); err != nil {
		t.Fatal(err)
	}
	err := j.Sync()
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), full) {
		t.Fatalf("sync error %v", err)
	}
	if err := w.AppendMessage(llm.UserText("after"), "", nil); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("append after a failed write: %v", err)
	}
	// Another agent's file goes on.
	if err := o.AppendMessage(llm.UserText("other"), "", nil); err != nil {
		t.Fatal(err)
	}
	_ = j.Close()
	b, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(b), "\n") != 1 || !strings.HasSuffix(string(b), "\n") {
		t.Fatalf("partial record left: %q", b)
	}
	entries, torn, err := ScanFile(full)
	if err != nil || len(torn) != 0 || len(entries) != 1 || entries[0].Message.Text() != "kept" {
		t.Fatalf("entries %+v torn %v err %v", entries, torn, err)
	}
	if entries, err := ReadFile(other); err != nil || len(entries) != 1 {
		t.Fatalf("other: %d %v", len(entries), err)
	}
}

// countingFile counts the open transcripts of a journal.
type countingFile struct {
	*os.File
	open, peak *int
}

func (f countingFile) Close() error {
	*f.open--
	return f.File.Close()
}

func TestJournalBoundsOpenFiles(t *testing.T) {
	dir := t.TempDir()
	var open, peak int // used by the journal goroutine only, read after Close
	j := newJournal(func(path string) (appendFile, error) {
		f, err := openAppend(path)
		if err != nil {
			return nil, err
		}
		open++
		peak = max(peak, open)
		return countingFile{File: f, open: &open, peak: &peak}, nil
	})
	go j.loop()
	const agents = 200
	var ws []*JournalWriter
	for i := range agents {
		ws = append(ws, j.Transcript(filepath.Join(dir, "agent-"+strings.Repeat("x", i%7)+string(rune('A'+i%26))+string(rune('a'+i/26))+".jsonl"), "s", "", nil))
	}
	for round := range 3 {
		for _, w := range ws {
			if err := w.AppendMessage(llm.UserText(strings.Repeat("r", round+1)), "", nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if peak > maxOpen || open != 0 {
		t.Fatalf("peak %d open transcripts (bound %d), %d left open", peak, maxOpen, open)
	}
	for _, w := range ws {
		entries, err := ReadFile(w.Path())
		if err != nil || len(entries) != 3 || entries[2].Message.Text() != "rrr" {
			t.Fatalf("%s: %d entries, %v", w.Path(), len(entries), err)
		}
	}
}

// Written reports the errors of the files asked about, not another
// agent's: a sub-agent's failed file fails that sub-agent only.
func TestJournalWrittenReportsOnlyItsFiles(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	j := NewJournal()
	bad := j.Transcript(filepath.Join(blocker, "agent-a.jsonl"), "s", "a", nil)
	good := j.Transcript(filepath.Join(dir, "s.jsonl"), "s", "", nil)
	meta := filepath.Join(blocker, "agent-a.meta.json")
	_ = bad.AppendMessage(llm.UserText("x"), "", nil)
	_ = j.Create(meta, []byte("{}"))
	if err := good.AppendMessage(llm.UserText("y"), "", nil); err != nil {
		t.Fatal(err)
	}
	if err := j.Written(good.Path()); err != nil || good.Err() != nil {
		t.Fatalf("good file: %v %v", err, good.Err())
	}
	if err := j.Written(good.Path(), meta); err == nil || !strings.Contains(err.Error(), meta) {
		t.Fatalf("meta error %v", err)
	}
	if err := j.Written(bad.Path()); err == nil || bad.Err() == nil {
		t.Fatal("bad transcript not reported")
	}
	if err := j.Close(); err == nil {
		t.Fatal("close reports no error")
	}
}

// Release closes an ended agent's transcript; a later line opens it again.
func TestJournalReleaseClosesTheFile(t *testing.T) {
	dir := t.TempDir()
	var open, peak int // the journal goroutine's; read after Written
	j := newJournal(func(path string) (appendFile, error) {
		f, err := openAppend(path)
		if err != nil {
			return nil, err
		}
		open++
		peak = max(peak, open)
		return countingFile{File: f, open: &open, peak: &peak}, nil
	})
	go j.loop()
	a, b := j.Transcript(filepath.Join(dir, "a.jsonl"), "s", "a", nil), j.Transcript(filepath.Join(dir, "b.jsonl"), "s", "b", nil)
	for _, w := range []*JournalWriter{a, b} {
		if err := w.AppendMessage(llm.UserText("x"), "", nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Release(); err != nil {
		t.Fatal(err)
	}
	if err := j.Written(); err != nil || open != 1 {
		t.Fatalf("%d open after a release (%v)", open, err)
	}
	if err := a.AppendMessage(llm.UserText("again"), "", nil); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil || open != 0 {
		t.Fatalf("%d open after close (%v)", open, err)
	}
	if entries, err := ReadFile(a.Path()); err != nil || len(entries) != 2 {
		t.Fatalf("a: %d entries %v", len(entries), err)
	}
}

// TestTranscriptLinkRefused: a link planted where a transcript or its
// metadata goes is not written through; the error names the link and the
// target is untouched.
func TestTranscriptLinkRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "elsewhere")
	if err := os.WriteFile(target, []byte("keep\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a.jsonl", "b.meta.json", "c.jsonl.tmp"} {
		link := filepath.Join(dir, name)
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := openAppend(filepath.Join(dir, "a.jsonl")); err == nil || !strings.Contains(err.Error(), "a.jsonl is a symbolic link") {
		t.Fatalf("append through a link: %v", err)
	}
	if err := createFile(filepath.Join(dir, "b.meta.json"), []byte("x")); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("create through a link: %v", err)
	}
	if err := replaceFile(filepath.Join(dir, "c.jsonl"), []byte("x")); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("replace through a link: %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep\n" {
		t.Fatalf("the link's target was written: %q", b)
	}
}
