package temporalexec

import (
	"context"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/engine"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/anthropic"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/transcript"
)

// launcher is an engine runtime whose remote agents run on x: the
// launcher's side of issue 26 against a real dev server and a worker.
type launcher struct {
	srv *llmtest.Server
	rt  *engine.Runtime
}

// newLauncher starts a worker on a queue of t's own and a runtime that
// sends agents of type far (isolation: remote) to it; both answer from
// srv, so the worker's requests are captured beside the launcher's.
func newLauncher(t *testing.T) *launcher {
	t.Helper()
	c := dial(t)
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	q := queue(t)
	workerFor(t, c, q, srv)
	x, err := New(Config{Client: c, TaskQueue: q})
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	m, err := anthropic.New(anthropic.Config{APIKey: "test", BaseURL: srv.URL(), HTTPClient: &http.Client{Transport: tr}, RetryBase: 1, RetryMax: 2})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := engine.New(engine.Config{
		Model: m, ModelID: "claude-sonnet-4-5", Cwd: t.TempDir(), StateDir: t.TempDir(), Permissions: engine.AllowAll(),
		Agents: []*agentdef.Definition{{Name: "far", Description: "runs elsewhere", Body: "You run elsewhere.", Isolation: agentdef.IsolationRemote, Path: "test:far"}},
		Remote: engine.Remote{Executor: x},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close() })
	return &launcher{srv: srv, rt: rt}
}

// run runs prompt and then the notifications until no task is left.
func (l *launcher) run(t *testing.T, prompt string) []run.Event {
	t.Helper()
	var evs []run.Event
	for ev, err := range l.rt.Run(context.Background(), prompt) {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	for l.rt.RunningTasks() > 0 || l.rt.PendingNotifications() {
		for ev, err := range l.rt.RunNotifications(context.Background()) {
			if err != nil {
				t.Fatal(err)
			}
			evs = append(evs, ev)
		}
	}
	return evs
}

var taskIDRe = regexp.MustCompile(`<task-id>([^<]+)</task-id>`)

// notes counts the notifications of id in every message of req.
func notes(req *llmtest.Request, id string) int {
	n := 0
	for _, m := range req.Messages {
		for _, b := range m.Content {
			if b.Type == llm.BlockText {
				n += strings.Count(b.Text, "<task-id>"+id+"</task-id>")
			}
		}
	}
	return n
}

// texts is every text and tool result of req's messages, in order.
func texts(req *llmtest.Request) string {
	var sb strings.Builder
	for _, m := range req.Messages {
		for _, b := range m.Content {
			sb.WriteString(b.Text)
			sb.WriteString(b.ResultText())
			sb.WriteString("\n")
		}
	}
	return sb.String()
}

// A remote agent writes its transcript on the launcher as its tool rounds
// come back, and a message to it once it has finished continues it
// remotely: a new run on the worker that starts from the whole of its
// conversation, whose end is again one notification, its new turns
// appended to the same transcript.
func TestFinishedRemoteAgentIsContinuedRemotely(t *testing.T) {
	l := newLauncher(t)
	l.srv.Script("FARJOB", llmtest.ToolUse("Bash", map[string]any{"command": "echo PLUM-FROM-TOOL"}), llmtest.Text("FIRST-REPORT"),
		llmtest.Text("SECOND-REPORT"))
	var mu sync.Mutex
	var sent, heard bool
	var agentID string
	l.srv.Script("MAIN", llmtest.ToolUse("Agent", map[string]any{"description": "far job", "prompt": "FARJOB remember the tool's word", "subagent_type": "far"}),
		llmtest.Text("launched"))
	l.srv.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
		mu.Lock()
		defer mu.Unlock()
		last := r.LastUserText()
		switch {
		case !sent && taskIDRe.MatchString(last):
			sent, agentID = true, taskIDRe.FindStringSubmatch(last)[1]
			return llmtest.ToolUse("SendMessage", map[string]any{"to": agentID, "message": "FOLLOWUP which word did the tool print?"})
		case sent && !heard && len(r.LastToolResults()) > 0:
			return llmtest.Text("continued it")
		case sent && taskIDRe.MatchString(last):
			heard = true
			return llmtest.Text("heard twice")
		}
		return llmtest.Text("nothing to do")
	})
	evs := l.run(t, "MAIN go")

	mu.Lock()
	id := agentID
	mu.Unlock()
	if id == "" || !heard {
		t.Fatalf("main never heard of the remote agent (id %q, heard twice %v)", id, heard)
	}
	// The message continued it: its tool result says so.
	mainReqs := l.srv.RequestsFor("MAIN")
	var sendResult string
	for _, r := range mainReqs {
		for _, b := range r.LastToolResults() {
			if strings.Contains(b.ResultText(), "Agent "+id) {
				sendResult = b.ResultText()
			}
		}
	}
	if !strings.Contains(sendResult, "was continued") {
		t.Fatalf("SendMessage to the finished remote agent got %q", sendResult)
	}
	// The worker's model got the continued run's request with the whole
	// conversation: the first prompt, the tool's output, the first
	// report, then the message.
	far := l.srv.RequestsFor("FARJOB")
	if len(far) != 3 {
		t.Fatalf("the worker's model got %d requests for the agent, want 3 (two of the first run, one of the continued)", len(far))
	}
	all := texts(far[2])
	for _, want := range []string{"FARJOB remember", "PLUM-FROM-TOOL", "FIRST-REPORT", "FOLLOWUP which word"} {
		if !strings.Contains(all, want) {
			t.Fatalf("the continued run's request lacks %q:\n%s", want, all)
		}
	}
	if i, j := strings.Index(all, "FIRST-REPORT"), strings.Index(all, "FOLLOWUP"); i > j {
		t.Fatalf("the message comes before the first report:\n%s", all)
	}
	// Each run's end is one notification, exactly once.
	last := mainReqs[len(mainReqs)-1]
	if n := notes(last, id); n != 2 {
		t.Fatalf("main's last request holds %d notifications of %s, want 2 (one per run)", n, id)
	}
	var completions int
	for _, ev := range evs {
		if ev.Type == run.EventTaskCompleted && ev.AgentID == id {
			completions++
			if ev.Subagent.Status != task.Completed {
				t.Fatalf("completion %+v", ev.Subagent)
			}
		}
	}
	if completions != 2 {
		t.Fatalf("%d completions of %s, want 2", completions, id)
	}
	info, ok := l.rt.Task(id)
	if !ok || info.Status != task.Completed || info.OutputFile == "" {
		t.Fatalf("task %+v, %v", info, ok)
	}
	// Its transcript on the launcher holds both runs, at tool-round
	// granularity, well formed, each run closed by a run_end entry.
	entries, err := transcript.ReadFile(info.OutputFile)
	if err != nil {
		t.Fatalf("the remote agent's transcript: %v", err)
	}
	msgs := transcript.Messages(entries)
	var roles []string
	var got strings.Builder
	for _, m := range msgs {
		roles = append(roles, string(m.Role))
		for _, b := range m.Content {
			got.WriteString(b.Text + b.ResultText() + "|")
		}
	}
	want := []string{"user", "assistant", "user", "assistant", "user", "assistant"}
	if !slices.Equal(roles, want) {
		t.Fatalf("transcript roles %v, want %v:\n%s", roles, want, got.String())
	}
	for _, w := range []string{"FARJOB remember", "PLUM-FROM-TOOL", "FIRST-REPORT", "FOLLOWUP which word", "SECOND-REPORT"} {
		if !strings.Contains(got.String(), w) {
			t.Fatalf("transcript lacks %q: %s", w, got.String())
		}
	}
	var ends int
	for _, e := range entries {
		if e.Type == transcript.EntryRunEnd {
			ends++
			if e.RunEnd.IsError {
				t.Fatalf("run end %+v", e.RunEnd)
			}
		}
	}
	if ends != 2 {
		t.Fatalf("%d run_end entries, want 2", ends)
	}
}
