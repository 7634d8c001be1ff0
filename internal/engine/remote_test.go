package engine

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/internal/engine/executor/executortest"
	"github.com/cadre-dev/cadre/internal/remote/workspace"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
)

// workerExecutor stands for a remote executor in these tests: a request
// is run from its data alone (prompt, description, call) by another
// runtime — the "worker", with its own scripted model and directory — as
// an Agent call of that runtime's main agent, under an id of the
// worker's own; the handle maps it back to the request's. With pool set,
// the child gets a fresh worktree of the worker's clone at the request's
// commit, and its work comes back through WorkHandle.
type workerExecutor struct {
	t    *testing.T
	w    *executortest.Harness
	pool *workspace.Pool

	// started gets the id of each request once its child runs.
	started chan string

	mu   sync.Mutex
	reqs []executor.SpawnRequest
	ids  map[string]string // worker's id -> request's id
}

func newWorkerExecutor(t *testing.T) *workerExecutor {
	return &workerExecutor{t: t, w: newLocalHarness(t), ids: map[string]string{}, started: make(chan string, 64)}
}

func (x *workerExecutor) Start(ctx context.Context, req executor.SpawnRequest) (executor.Handle, error) {
	x.mu.Lock()
	x.reqs = append(x.reqs, req)
	x.mu.Unlock()
	var co *workspace.Checkout
	if x.pool != nil && req.Workspace != nil {
		var err error
		if co, err = x.pool.Checkout(ctx, *req.Workspace, req.AgentID, req.RootID); err != nil {
			return nil, err
		}
	}
	wreq := x.w.Request(x.t, executortest.Child{Prompt: req.Prompt, Description: req.Description, Background: req.Background, ToolUseID: req.ToolUseID})
	hd, err := x.w.Executor.Start(context.WithoutCancel(ctx), wreq)
	if err != nil {
		return nil, err
	}
	x.mu.Lock()
	x.ids[wreq.AgentID] = req.AgentID
	x.mu.Unlock()
	x.started <- req.AgentID
	return &workerHandle{hd: hd, id: req.AgentID, wid: wreq.AgentID, co: co}, nil
}

// requests returns the requests Start was given.
func (x *workerExecutor) requests() []executor.SpawnRequest {
	x.mu.Lock()
	defer x.mu.Unlock()
	return append([]executor.SpawnRequest(nil), x.reqs...)
}

// harness is the conformance harness of the executor: requests are plain
// data made here, as a launcher makes them, not children built in the
// worker's process.
func (x *workerExecutor) harness() *executortest.Harness {
	return &executortest.Harness{
		Executor: x,
		Model:    x.w.Model,
		Request: func(t *testing.T, c executortest.Child) executor.SpawnRequest {
			return executor.SpawnRequest{AgentID: newAgentID(), ParentID: "main", RootID: "launcher", ToolUseID: c.ToolUseID, Depth: 1,
				Background: c.Background, Description: c.Description, Prompt: c.Prompt,
				Definition: executor.Definition{Name: "general-purpose"}, Isolation: executor.Isolation{Kind: agentdef.IsolationRemote}}
		},
		Notifications: func(t *testing.T) []task.Notification {
			notes := x.w.Notifications(t)
			x.mu.Lock()
			defer x.mu.Unlock()
			for i := range notes {
				if id, ok := x.ids[notes[i].TaskID]; ok {
					notes[i].TaskID = id
				}
			}
			return notes
		},
		Live:      x.w.Live,
		PanicTool: x.w.PanicTool,
	}
}

// workerHandle is a worker's child seen under the request's id.
type workerHandle struct {
	hd      executor.Handle
	id, wid string
	co      *workspace.Checkout
}

func (h *workerHandle) mapEvent(ev run.Event) run.Event {
	if ev.AgentID == h.wid {
		ev.AgentID = h.id
	}
	if ev.Task != nil && ev.Task.AgentID == h.wid {
		t := *ev.Task
		t.AgentID = h.id
		ev.Task = &t
	}
	if ev.Subagent != nil && ev.Subagent.AgentID == h.wid {
		s := *ev.Subagent
		s.AgentID = h.id
		ev.Subagent = &s
	}
	return ev
}

func (h *workerHandle) Events() iter.Seq2[run.Event, error] {
	return func(yield func(run.Event, error) bool) {
		for ev, err := range h.hd.Events() {
			if !yield(h.mapEvent(ev), err) {
				return
			}
		}
	}
}

func (h *workerHandle) Send(ctx context.Context, m executor.Message) (executor.Delivery, error) {
	d, err := h.hd.Send(ctx, m)
	var ref *executor.RefusedError
	if errors.As(err, &ref) {
		return d, &executor.RefusedError{AgentID: h.id, Reason: ref.Reason}
	}
	return d, err
}

func (h *workerHandle) Stop(ctx context.Context) error { return h.hd.Stop(ctx) }

func (h *workerHandle) Wait(ctx context.Context) (*run.SubagentResult, error) {
	res, err := h.hd.Wait(ctx)
	if res != nil {
		r := *res
		r.AgentID = h.id
		res = &r
	}
	return res, err
}

func (h *workerHandle) Work(ctx context.Context) (*workspace.Result, error) {
	if h.co == nil {
		return nil, nil
	}
	res, err := h.co.Finish(ctx)
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// The stand-in remote executor passes the conformance suite, as the real
// one must: the launcher's routing below is tested against an executor
// that keeps the seam's promises.
func TestRemoteStandInPassesConformance(t *testing.T) {
	t.Parallel()
	executortest.Run(t, func(t *testing.T) *executortest.Harness { return newWorkerExecutor(t).harness() })
}

// remoteAgentDef is a definition whose agents run remotely.
func remoteAgentDef() *agentdef.Definition {
	return &agentdef.Definition{Name: "far", Description: "runs elsewhere", Body: "You run elsewhere.", Isolation: agentdef.IsolationRemote, Path: "test:far"}
}

// `isolation: remote` without a remote executor starts nothing and says
// how to configure one.
func TestRemoteIsolationWithoutExecutorIsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", map[string]any{"description": "far", "prompt": "FAR-1 look", "subagent_type": "far"}), llmtest.Text("ok"))
	cfg := h.config()
	cfg.Agents = []*agentdef.Definition{remoteAgentDef()}
	_, _, rt := mustRun(t, cfg, "MAIN go")
	t.Cleanup(func() { _ = rt.Close() })
	out := h.toolResults("MAIN")
	if len(out) != 1 || !strings.Contains(out[0], "remote.temporal") || !strings.Contains(out[0], "No agent was started") {
		t.Fatalf("tool results %q, want the refusal naming remote.temporal", out)
	}
	if len(rt.Tasks()) != 0 {
		t.Fatalf("tasks %+v", rt.Tasks())
	}
	cfg.Remote.All = true
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "remote.temporal") {
		t.Fatalf("New with Remote.All and no executor: %v", err)
	}
}

// A remote agent goes through the launcher's spawn path and lifecycle
// and runs on the remote executor: started in the background though its
// call did not ask, with the isolation and the launcher's commit in its
// request; its task in the registry with the progress its remote events
// carry; its completion one notification; its slot given back. Its
// commit made on the worker, in the worker's own clone, lands in the
// launcher's repository as worktree-agent-<id>.
func TestRemoteAgentRunsOnTheExecutorAndItsWorkLands(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	base := canonicalT(t, t.TempDir())
	upstream, launcher, clone := filepath.Join(base, "up.git"), filepath.Join(base, "launcher"), filepath.Join(base, "worker-clone")
	gitRun(t, base, "init", "-q", "--bare", "-b", "main", upstream)
	gitRun(t, base, "clone", "-q", upstream, launcher)
	if err := os.WriteFile(filepath.Join(launcher, "README.md"), []byte("# p\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(t, launcher, "add", "-A")
	gitRun(t, launcher, "commit", "-q", "-m", "initial")
	gitRun(t, launcher, "push", "-q", "origin", "main")
	gitRun(t, base, "clone", "-q", upstream, clone)

	x := newWorkerExecutor(t)
	pool, err := workspace.NewPool(workspace.Config{Roots: []string{clone}})
	if err != nil {
		t.Fatal(err)
	}
	x.pool = pool
	// The worker's child commits a file in its tree (the only one under
	// the clone's trees directory).
	commit := fmt.Sprintf(`cd "$(ls -d %s/.cadre/worktrees/agent-*/ | head -1)" && echo remote > made-remotely.txt && git add made-remotely.txt && git -c user.name=w -c user.email=w@x commit -q -m "remote work" && echo committed`, clone)
	x.w.Model.Script("FAR-2", llmtest.ToolUse("Bash", map[string]any{"command": commit}), llmtest.Text("REMOTE-DONE"))

	h.srv.Script("MAIN", llmtest.ToolUse("Agent", map[string]any{"description": "far", "prompt": "FAR-2 work", "subagent_type": "far"}),
		llmtest.Text("launched"), llmtest.Text("heard back"))
	cfg := h.config()
	cfg.Cwd = launcher
	cfg.Agents = []*agentdef.Definition{remoteAgentDef()}
	cfg.Remote = Remote{Executor: x}
	rt := newRuntime(t, cfg)
	evs, res, err := runAll(t, context.Background(), rt, "MAIN go")
	if err != nil || res == nil {
		t.Fatal(err)
	}
	out := h.toolResults("MAIN")
	if len(out) != 1 || !strings.Contains(out[0], "async_launched") {
		t.Fatalf("the Agent call got %q, want async_launched (remote agents run in the background)", out)
	}
	evs = append(evs, drainNotifications(t, rt)...)
	reqs := x.requests()
	if len(reqs) != 1 {
		t.Fatalf("the remote executor got %d requests", len(reqs))
	}
	req := reqs[0]
	head := gitRun(t, launcher, "rev-parse", "HEAD")
	if req.Isolation.Kind != agentdef.IsolationRemote || !req.Background || req.Workspace == nil || req.Workspace.Commit != head {
		t.Fatalf("request isolation %+v background %v workspace %+v, want remote, background, at %s", req.Isolation, req.Background, req.Workspace, head)
	}
	if !strings.Contains(req.Definition.System, "You run elsewhere.") || req.Definition.SystemPrefix == "" {
		t.Fatalf("the request carries no rendered system prompt: %q / %q", req.Definition.SystemPrefix, req.Definition.System)
	}
	if n := len(x.w.Model.RequestsFor("FAR-2")); n != 2 {
		t.Fatalf("the worker's model got %d requests for the child", n)
	}
	var completed int
	for _, ev := range evs {
		if ev.Type == run.EventTaskCompleted && ev.AgentID == req.AgentID {
			completed++
			if ev.Subagent.Status != task.Completed || ev.Subagent.Worktree == nil || ev.Subagent.Worktree.Branch != "worktree-agent-"+req.AgentID {
				t.Fatalf("completion %+v (worktree %+v)", ev.Subagent, ev.Subagent.Worktree)
			}
		}
	}
	if completed != 1 {
		t.Fatalf("%d completions of %s", completed, req.AgentID)
	}
	reqsMain := h.srv.RequestsFor("MAIN")
	if n := notesIn(reqsMain[len(reqsMain)-1], req.AgentID); n != 1 {
		t.Fatalf("the remote agent was notified %d times", n)
	}
	contains(t, lastTexts(reqsMain[len(reqsMain)-1]), "REMOTE-DONE")
	tasks := rt.Tasks()
	if len(tasks) != 1 || tasks[0].ID != req.AgentID || tasks[0].Status != task.Completed || !tasks[0].Background ||
		tasks[0].Progress.ToolUses != 1 || tasks[0].Progress.LastTool != "Bash" {
		t.Fatalf("tasks %+v", tasks)
	}
	if c := rt.gate.Counts(); c.Running != 0 || c.Queued != 0 {
		t.Fatalf("gate %+v", c)
	}
	if got := gitRun(t, launcher, "show", "worktree-agent-"+req.AgentID+":made-remotely.txt"); got != "remote" {
		t.Fatalf("the landed branch holds %q", got)
	}
	// TaskOutput's text is the remote report; a message to the finished
	// remote agent continues it remotely: a new request for the same
	// agent that starts from its conversation as the launcher's
	// transcript of it holds it (remotelog.go), the message last.
	if text, ok := (taskCaller{a: &agent{run: &runState{rt: rt}}}).FinalText(req.AgentID); !ok || text != "REMOTE-DONE" {
		t.Fatalf("final text %q, %v", text, ok)
	}
	firstTip := gitRun(t, launcher, "rev-parse", "worktree-agent-"+req.AgentID)
	again := fmt.Sprintf(`cd "$(ls -d %s/.cadre/worktrees/agent-*/ | head -1)" && test -f made-remotely.txt && echo again > second.txt && git add second.txt && git -c user.name=w -c user.email=w@x commit -q -m "more remote work" && echo committed again`, clone)
	x.w.Model.Script("ONE-MORE", llmtest.ToolUse("Bash", map[string]any{"command": again}), llmtest.Text("AGAIN-DONE"))
	h.srv.Script("MAIN", llmtest.ToolUse("SendMessage", map[string]any{"to": req.AgentID, "message": "ONE-MORE thing"}), llmtest.Text("sent"), llmtest.Text("heard again"))
	if _, _, err := runAll(t, context.Background(), rt, "MAIN again"); err != nil {
		t.Fatal(err)
	}
	if sent := h.toolResults("MAIN"); len(sent) != 1 || !strings.Contains(sent[0], "was continued") {
		t.Fatalf("message to a finished remote agent: %q", sent)
	}
	drainNotifications(t, rt)
	reqsMain = h.srv.RequestsFor("MAIN")
	if n := notesIn(reqsMain[len(reqsMain)-1], req.AgentID); n != 2 {
		t.Fatalf("the remote agent was notified %d times over its two runs", n)
	}
	reqs = x.requests()
	if len(reqs) != 2 || reqs[1].AgentID != req.AgentID || reqs[1].Isolation.Kind != agentdef.IsolationRemote || !reqs[1].Background {
		t.Fatalf("the continued run's request: %+v", reqs[1:])
	}
	// It goes on in the tree its first run left: its source is the landed
	// branch, whose commits travel with it, and its new commit lands on
	// top of the same branch.
	if w := reqs[1].Workspace; w == nil || w.Commit != firstTip || len(w.Seed) == 0 {
		t.Fatalf("the continued run's workspace %+v, want the landed tip %s and its commits", w, firstTip)
	}
	if got := gitRun(t, launcher, "show", "worktree-agent-"+req.AgentID+":second.txt"); got != "again" {
		t.Fatalf("the branch after the continued run holds %q", got)
	}
	if got := gitRun(t, launcher, "rev-parse", "worktree-agent-"+req.AgentID+"^"); got != firstTip {
		t.Fatalf("the continued run's commit sits on %s, want the first run's tip %s", got, firstTip)
	}
	var conv []string
	for _, m := range reqs[1].Messages {
		for _, b := range m.Content {
			conv = append(conv, string(m.Role)+":"+b.Text+b.ResultText())
		}
	}
	joined := strings.Join(conv, "|")
	if !strings.HasPrefix(joined, "user:FAR-2 work") || !strings.Contains(joined, "committed") || !strings.Contains(joined, "assistant:REMOTE-DONE|user:") ||
		!strings.Contains(conv[len(conv)-1], "ONE-MORE thing") {
		t.Fatalf("the continued run starts from %s", joined)
	}
}

// Stopping a remote task stops it on the executor, and its end is one
// killed notification.
func TestStoppingARemoteTaskStopsItRemotely(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	x := newWorkerExecutor(t)
	x.w.Model.Script("FAR-3", llmtest.ToolUse("Bash", map[string]any{"command": "sleep 600"}), llmtest.Text("never"))
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", map[string]any{"description": "far", "prompt": "FAR-3 wait", "subagent_type": "general-purpose"}),
		llmtest.Text("launched"), llmtest.Text("heard back"))
	cfg := h.config()
	cfg.Remote = Remote{Executor: x, All: true}
	rt := newRuntime(t, cfg)
	if _, _, err := runAll(t, context.Background(), rt, "MAIN go"); err != nil {
		t.Fatal(err)
	}
	<-x.started // the child runs on the worker
	reqs := x.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	if _, err := rt.bg.reg.Stop(reqs[0].AgentID); err != nil {
		t.Fatal(err)
	}
	drainNotifications(t, rt)
	if x.w.Live(t) != 0 {
		t.Fatalf("%d agents still run on the worker", x.w.Live(t))
	}
	info, ok := rt.bg.reg.Get(reqs[0].AgentID)
	if !ok || info.Status != task.Killed {
		t.Fatalf("task %+v", info)
	}
	notes := journaledNotes(t, rt.bg.journalPath())
	if len(notes) != 1 || notes[0].TaskID != reqs[0].AgentID || notes[0].Status != task.Killed {
		t.Fatalf("notifications %+v", notes)
	}
}

func gitRun(t *testing.T, dir string, args ...string) string {
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

func canonicalT(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// With a remote executor the Agent tool offers isolation: remote, and a
// call that asks for it runs there (in the background, though it did not
// ask); a call asking for it with a cwd is refused.
func TestAgentCallAsksForRemote(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	x := newWorkerExecutor(t)
	x.w.Model.Script("FAR-4", llmtest.Text("FAR-4 done"))
	h.srv.Script("MAIN", llmtest.ToolUses(
		llmtest.Call{Name: "Agent", Input: map[string]any{"description": "far", "prompt": "FAR-4 go", "isolation": "remote"}},
		llmtest.Call{Name: "Agent", Input: map[string]any{"description": "far", "prompt": "FAR-5 go", "isolation": "remote", "cwd": h.dir}},
	), llmtest.Text("launched"), llmtest.Text("heard back"))
	cfg := h.config()
	cfg.Remote = Remote{Executor: x}
	rt := newRuntime(t, cfg)
	if _, _, err := runAll(t, context.Background(), rt, "MAIN go"); err != nil {
		t.Fatal(err)
	}
	drainNotifications(t, rt)
	first := h.srv.RequestsFor("MAIN")[0]
	var offered bool
	for _, tl := range first.Tools {
		if tl.Name == "Agent" {
			offered = strings.Contains(string(tl.InputSchema), `"enum":["worktree","remote"]`)
		}
	}
	if !offered {
		t.Fatal("the Agent tool does not offer isolation: remote")
	}
	out := h.srvToolResultsOf(t, "MAIN", 0)
	if len(out) != 2 || !strings.Contains(out[0], "async_launched") || !strings.Contains(out[1], "cwd and isolation: remote exclude each other") {
		t.Fatalf("tool results %q", out)
	}
	if reqs := x.requests(); len(reqs) != 1 || reqs[0].Prompt != "FAR-4 go" || reqs[0].Workspace != nil {
		t.Fatalf("requests %+v (outside a repository: no workspace)", reqs)
	}
}

// srvToolResultsOf returns the tool_result texts of the i+1-th request of
// key (the results of its i-th batch of calls).
func (h *harness) srvToolResultsOf(t *testing.T, key string, i int) []string {
	t.Helper()
	reqs := h.srv.RequestsFor(key)
	if len(reqs) <= i+1 {
		t.Fatalf("%d requests for %q", len(reqs), key)
	}
	var out []string
	for _, b := range reqs[i+1].LastToolResults() {
		out = append(out, b.ResultText())
	}
	return out
}

// closingExecutor records whether the session closed it.
type closingExecutor struct {
	*workerExecutor
	closed chan struct{}
}

func (c closingExecutor) Close() { close(c.closed) }

// The session closes a remote executor that has a Close method, once.
func TestSessionClosesTheRemoteExecutor(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	x := closingExecutor{newWorkerExecutor(t), make(chan struct{})}
	cfg := h.config()
	cfg.Remote = Remote{Executor: x}
	rt, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-x.closed:
	default:
		t.Fatal("the remote executor was not closed with the session")
	}
}

// idleExecutor accepts every agent and no worker ever takes one: its
// events never come, and Wait returns only once it is stopped.
type idleExecutor struct{ stopped chan struct{} }

func (x idleExecutor) Start(context.Context, executor.SpawnRequest) (executor.Handle, error) {
	return idleHandle(x), nil
}

type idleHandle idleExecutor

func (h idleHandle) Events() iter.Seq2[run.Event, error] {
	return func(yield func(run.Event, error) bool) { <-h.stopped }
}

func (h idleHandle) Send(context.Context, executor.Message) (executor.Delivery, error) {
	return executor.Queued, nil
}

func (h idleHandle) Stop(context.Context) error {
	select {
	case <-h.stopped:
	default:
		close(h.stopped)
	}
	return nil
}

func (h idleHandle) Wait(ctx context.Context) (*run.SubagentResult, error) {
	select {
	case <-h.stopped:
		return &run.SubagentResult{Status: task.Killed, Error: "stopped"}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// A remote agent no worker takes fails after the bound, saying so and
// naming what to check; it is stopped, and the run ends.
func TestRemoteAgentNoWorkerTakesFailsAfterTheBound(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	x := idleExecutor{stopped: make(chan struct{})}
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", map[string]any{"description": "far", "prompt": "FAR-6 go"}), llmtest.Text("launched"), llmtest.Text("heard back"))
	cfg := h.config()
	cfg.Remote = Remote{Executor: x, All: true, PickupWait: time.Millisecond}
	rt := newRuntime(t, cfg)
	if _, _, err := runAll(t, context.Background(), rt, "MAIN go"); err != nil {
		t.Fatal(err)
	}
	drainNotifications(t, rt)
	tasks := rt.Tasks()
	if len(tasks) != 1 || tasks[0].Status != task.Failed {
		t.Fatalf("tasks %+v", tasks)
	}
	select {
	case <-x.stopped:
	default:
		t.Fatal("the agent no worker took was not stopped")
	}
	reqs := h.srv.RequestsFor("MAIN")
	contains(t, lastTexts(reqs[len(reqs)-1]), "no worker took the remote agent")
}
