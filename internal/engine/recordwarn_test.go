package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/transcript"
)

// warningsIn returns the texts of the EventWarning events of evs, and
// checks that each comes before the next EventResult, which lists it.
func warningsIn(t *testing.T, evs []run.Event) []string {
	t.Helper()
	var all, pending []string
	for _, ev := range evs {
		switch ev.Type {
		case run.EventWarning:
			all = append(all, ev.Text)
			pending = append(pending, ev.Text)
		case run.EventResult:
			if !slices.Equal(pending, ev.Result.Warnings) {
				t.Errorf("Result.Warnings %q, want the warnings sent before it %q", ev.Result.Warnings, pending)
			}
			pending = nil
		}
	}
	if len(pending) > 0 {
		t.Errorf("warnings %q came with no Result after them", pending)
	}
	return all
}

// Issue 22, point 9: a task journal whose writes fail (its file closed
// under it) loses none of the failures: the run's Result lists the
// failure once, an EventWarning carries it first, and the background
// child's notification still arrives.
func TestTaskJournalWriteFailureReachesTheResult(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Script("JW-MAIN", llmtest.ToolUse("Agent", bgCall("JW-BG: work")), llmtest.Text("started"), llmtest.Text("got it"))
	h.srv.Script("JW-BG", llmtest.Text("done"))
	rt := newRuntime(t, h.config())
	// The journal is opened as the first run opens it, then fails every
	// write after: the injected failure.
	if err := rt.bg.open(); err != nil {
		t.Fatal(err)
	}
	if rt.bg.journal.Path() == "" {
		t.Fatal("the task journal is in memory; want the session's tasks.jsonl")
	}
	if err := rt.bg.journal.Close(); err != nil {
		t.Fatal(err)
	}
	evs, res, err := runAll(t, context.Background(), rt, "JW-MAIN go")
	if err != nil || res == nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("the run failed: %s", res.Error)
	}
	evs = append(evs, drainNotifications(t, rt)...)
	got := warningsIn(t, evs)
	if len(got) != 1 || !strings.Contains(got[0], "task journal") || !strings.Contains(got[0], "closed") {
		t.Errorf("warnings %q, want the task journal's failure once", got)
	}
	if !slices.Equal(res.Warnings, got) {
		t.Errorf("the run's Result lists %q, want %q (the child started in it)", res.Warnings, got)
	}
	notes := 0
	for _, ev := range evs {
		if ev.Type == run.EventNotification {
			notes++
			contains(t, ev.Notification.Text, "cadre could not journal this notification")
		}
	}
	if notes != 1 {
		t.Errorf("%d notifications, want 1", notes)
	}
}

// Issue 22, point 9: a sub-agent's final .meta.json that cannot be
// written (its path made a directory with something in it, which a rename
// cannot replace, even as root) was dropped without a word; now the run
// succeeds and its Result and an EventWarning say which file failed.
func TestTranscriptWriteFailureReachesTheResult(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cfg := h.config()
	rt := newRuntime(t, cfg)
	dir := filepath.Join(cfg.StateDir, "projects", transcript.ProjectSlug(cfg.Cwd), rt.SessionID())
	// The child waits for its .meta.json to be written (the journal queues
	// it), then puts a directory in its place.
	cmd := fmt.Sprintf(`for i in $(seq 1200); do set -- %q/agent-*.meta.json; [ -e "$1" ] && break; sleep 0.05; done; rm "$1" && mkdir -p "$1/x" && echo blocked`, dir)
	h.srv.Script("TW-MAIN", llmtest.ToolUse("Agent", agentCall("general-purpose", "TW-CHILD: block your meta")), llmtest.Text("fin"))
	h.srv.Script("TW-CHILD", llmtest.ToolUse("Bash", map[string]any{"command": cmd}), llmtest.Text("done"))
	evs, res, err := runAll(t, context.Background(), rt, "TW-MAIN go")
	if err != nil || res == nil {
		t.Fatal(err)
	}
	contains(t, strings.Join(h.toolResults("TW-CHILD"), "\n"), "blocked")
	if res.IsError {
		t.Fatalf("the run failed: %s", res.Error)
	}
	got := warningsIn(t, evs)
	if len(got) != 1 || !strings.Contains(got[0], ".meta.json") {
		t.Fatalf("warnings %q, want the failed .meta.json once", got)
	}
	if !slices.Equal(res.Warnings, got) {
		t.Errorf("Result.Warnings %q, want %q", res.Warnings, got)
	}
}

// A notification is marked delivered only once the transcript line that
// carried it is written (writtenFirst): afterwards the line is in the file,
// whatever the journal's goroutine was doing.
func TestNotificationDeliveredAfterItsTranscriptLine(t *testing.T) {
	t.Parallel()
	r := &Runtime{cfg: Config{Now: time.Now}}
	b := newBackground(r)
	t.Cleanup(func() { _ = b.close() })
	j := transcript.NewJournal()
	path := filepath.Join(t.TempDir(), "main.jsonl")
	w := j.Transcript(path, "s", "", nil)
	x := newInbox("main", nil, b)
	x.push(inboxItem{note: &task.Notification{Seq: 1, Text: "NOTE-1"}, text: "NOTE-1"})
	blocks := x.Take()
	if err := w.AppendMessage(llm.Message{Role: llm.RoleUser, Content: blocks}, "m", nil); err != nil {
		t.Fatal(err)
	}
	writtenFirst{x, w}.Sent()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	contains(t, string(data), "NOTE-1")
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
}
