package temporalexec

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/engine"
	"github.com/cadre-dev/cadre/internal/remote/agentwf"
	"github.com/cadre-dev/cadre/internal/remote/workspace"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/anthropic"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/tool/builtin"
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
	return newLauncherIn(t, t.TempDir(), nil)
}

// newLauncherIn is newLauncher with the launcher working in cwd and, with
// pool set, a worker that holds workspaces in pool's clones.
func newLauncherIn(t *testing.T, cwd string, pool *workspace.Pool) *launcher {
	t.Helper()
	c := dial(t)
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	q := queue(t)
	if pool == nil {
		workerFor(t, c, q, srv)
	} else {
		workspaceWorker(t, c, q, srv, pool)
	}
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
		Model: m, ModelID: "claude-sonnet-4-5", Cwd: cwd, StateDir: t.TempDir(), Permissions: engine.AllowAll(),
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

// workspaceWorker starts a worker on queue that holds agents' trees in
// pool's clones, on its own queue.
func workspaceWorker(t *testing.T, c client.Client, queue string, srv *llmtest.Server, pool *workspace.Pool) {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	m, err := anthropic.New(anthropic.Config{APIKey: "test", BaseURL: srv.URL(), HTTPClient: &http.Client{Transport: tr}, RetryBase: 1, RetryMax: 2})
	if err != nil {
		t.Fatal(err)
	}
	acts := &agentwf.Activities{Model: m, Tools: builtin.Tools(builtin.Config{}), Pool: pool, WorkerID: "w1", OwnQueue: agentwf.OwnQueue(queue, "w1")}
	w := agentwf.NewWorker(c, agentwf.WorkerOptions{TaskQueue: queue, Activities: acts})
	if err := w.Start(); err != nil {
		t.Fatalf("start worker: %v", err)
	}
	t.Cleanup(w.Stop)
}

// git runs git in dir with no configuration of the machine's and a fixed
// identity.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// A finished remote agent with a workspace, continued with SendMessage,
// goes on in the tree its first run left — on a real server, with a
// worker that has its own clone: its landed branch's commits travel to
// the worker, the continued run sees the first run's file, and its new
// commit lands on top of the same branch in the launcher's repository.
func TestContinuedRemoteAgentGoesOnFromItsLandedBranch(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	upstream, launcherDir, clone := filepath.Join(base, "up.git"), filepath.Join(base, "launcher"), filepath.Join(base, "worker-clone")
	git(t, base, "init", "-q", "--bare", "-b", "main", upstream)
	git(t, base, "clone", "-q", upstream, launcherDir)
	if err := os.WriteFile(filepath.Join(launcherDir, "README.md"), []byte("# p\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, launcherDir, "add", "-A")
	git(t, launcherDir, "commit", "-q", "-m", "initial")
	git(t, launcherDir, "push", "-q", "origin", "main")
	git(t, base, "clone", "-q", upstream, clone)
	pool, err := workspace.NewPool(workspace.Config{Roots: []string{clone}})
	if err != nil {
		t.Fatal(err)
	}
	l := newLauncherIn(t, launcherDir, pool)
	commit := func(file, msg string) string {
		return fmt.Sprintf("echo %s > %s && git add %s && git -c user.name=w -c user.email=w@x commit -q -m %s && echo committed-%s", msg, file, file, msg, msg)
	}
	l.srv.Script("WSJOB", llmtest.ToolUse("Bash", map[string]any{"command": commit("one.txt", "one")}), llmtest.Text("WS-FIRST"),
		llmtest.ToolUse("Bash", map[string]any{"command": "test -f one.txt && " + commit("two.txt", "two")}), llmtest.Text("WS-SECOND"))
	var mu sync.Mutex
	var sent bool
	var agentID string
	l.srv.Script("MAIN", llmtest.ToolUse("Agent", map[string]any{"description": "ws job", "prompt": "WSJOB commit a file", "subagent_type": "far"}),
		llmtest.Text("launched"))
	l.srv.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
		mu.Lock()
		defer mu.Unlock()
		if last := r.LastUserText(); !sent && taskIDRe.MatchString(last) {
			sent, agentID = true, taskIDRe.FindStringSubmatch(last)[1]
			return llmtest.ToolUse("SendMessage", map[string]any{"to": agentID, "message": "commit another file"})
		}
		return llmtest.Text("ok")
	})
	l.run(t, "MAIN go")
	mu.Lock()
	id := agentID
	mu.Unlock()
	if id == "" {
		t.Fatal("main never heard of the remote agent")
	}
	far := l.srv.RequestsFor("WSJOB")
	if len(far) != 4 {
		t.Fatalf("the worker's model got %d requests, want 4", len(far))
	}
	if got := far[3].LastToolResults(); len(got) != 1 || !strings.Contains(got[0].ResultText(), "committed-two") {
		t.Fatalf("the continued run's commit: %v", got)
	}
	branch := "worktree-agent-" + id
	if got := git(t, launcherDir, "log", "--format=%s", branch); got != "two\none\ninitial" {
		t.Fatalf("the branch %s holds commits %q, want two on one on initial", branch, got)
	}
	if got := git(t, launcherDir, "show", branch+":one.txt"); got != "one" {
		t.Fatalf("one.txt on the branch: %q", got)
	}
	info, ok := l.rt.Task(id)
	if !ok || info.Status != task.Completed {
		t.Fatalf("task %+v", info)
	}
}
