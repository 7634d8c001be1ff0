package remotecmd_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/internal/remote/agentwf"
	"github.com/cadre-dev/cadre/internal/remote/workspace"
	"github.com/cadre-dev/cadre/internal/worktree"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/task"
)

// git runs git in dir with an identity of its own (the tests run with
// no global one) and returns its trimmed output.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=T", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// launcherRepo is a repository with one commit, and clones of it — one
// per worker — each in a directory of its own.
func launcherRepo(t *testing.T, clones int) (string, []string) {
	t.Helper()
	repo := filepath.Join(t.TempDir(), "launcher")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "init", "-q")
	if err := os.WriteFile(filepath.Join(repo, "README"), []byte("launcher\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "add", "README")
	git(t, repo, "commit", "-qm", "launcher's first commit")
	var out []string
	for range clones {
		d := filepath.Join(t.TempDir(), "clone")
		git(t, filepath.Dir(d), "clone", "-q", repo, d)
		out = append(out, d)
	}
	return repo, out
}

// The workspace round trip, end to end: `cadre -p --remote` in a
// repository, two workers each with its own clone (--repo). The remote
// child's tool call writes a file and commits it — in a worktree of a
// worker's clone, at the launcher's commit — and its work comes back as
// the branch worktree-agent-<id> of the launcher's repository, holding
// that commit, while the launcher's own tree is untouched.
func TestRemoteChildWorkLandsAsBranchInLauncherRepo(t *testing.T) {
	dial(t) // skips without a server
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	queue := unique("ws")
	repo, clones := launcherRepo(t, 2)
	startWorker(t, queue, srv, "worker-key", "--repo", clones[0], "--worker-id", "one")
	startWorker(t, queue, srv, "worker-key", "--repo", clones[1], "--worker-id", "two")
	srv.ScriptFunc("WSWRITE", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return bash("pwd > where.txt && git add where.txt && git -c user.name=W -c user.email=w@example.com commit -qm 'remote agent commit' && echo committed")
		}
		return llmtest.Text("WSWRITE done")
	})
	srv.ScriptFunc("LAUNCH", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.ToolUses(llmtest.Call{Name: "Agent", Input: map[string]any{"description": "w", "prompt": "WSWRITE write and commit"}})
		}
		return llmtest.Text("LAUNCHER-ANSWER")
	})
	home := t.TempDir()
	settings := `{"remote": {"temporal": {"address": "` + server.Address + `", "namespace": "` + server.Namespace + `", "taskQueue": "` + queue + `"}}}`
	if err := os.MkdirAll(filepath.Join(home, ".config", "cadre"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".config", "cadre", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	head := git(t, repo, "rev-parse", "HEAD")
	cmd := exec.Command(cadreBin, "-p", "--remote", "--dangerously-skip-permissions", "LAUNCH one agent")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME=", "ANTHROPIC_BASE_URL="+srv.URL(), "ANTHROPIC_API_KEY=launcher-key",
		"CADRE_REMOTE_BIN="+bin, "GIT_CONFIG_GLOBAL=/dev/null")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("cadre -p --remote: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "LAUNCHER-ANSWER") {
		t.Fatalf("stdout %q\nstderr: %s", stdout.String(), stderr.String())
	}
	reqs := srv.RequestsFor("WSWRITE")
	if len(reqs) != 2 || keyOf(reqs[0]) != "worker-key" {
		t.Fatalf("the child made %d model requests (want 2, on a worker)", len(reqs))
	}
	if tr := reqs[1].LastToolResults(); len(tr) != 1 || tr[0].IsError || !strings.Contains(tr[0].ResultText(), "committed") {
		t.Fatalf("the child's tool call did not commit: %+v", tr)
	}
	branches := strings.Fields(git(t, repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/worktree-agent-*"))
	if len(branches) != 1 {
		t.Fatalf("branches worktree-agent-* in the launcher's repo: %q, want one\nstderr: %s", branches, stderr.String())
	}
	b := branches[0]
	if got := git(t, repo, "log", "-1", "--format=%s", b); got != "remote agent commit" {
		t.Fatalf("branch %s ends with %q, not the remote agent's commit", b, got)
	}
	if got := git(t, repo, "rev-parse", b+"~1"); got != head {
		t.Fatalf("branch %s's commit sits on %s, not on the launcher's HEAD %s", b, got, head)
	}
	where := git(t, repo, "show", b+":where.txt")
	if !strings.HasPrefix(where, clones[0]) && !strings.HasPrefix(where, clones[1]) {
		t.Fatalf("the tool ran in %s, not in a worktree of a worker's clone (%v)", where, clones)
	}
	if _, err := os.Stat(filepath.Join(repo, "where.txt")); err == nil {
		t.Fatal("the tool wrote into the launcher's own tree")
	}
	if got := git(t, repo, "rev-parse", "HEAD"); got != head {
		t.Fatalf("the launcher's HEAD moved to %s", got)
	}
}

// An agent whose worker holds its tree is killed (SIGKILL) mid-agent,
// after a tool call that changed its tree: the agent goes on on the other
// worker, in a tree restored from the snapshot its last tool call
// returned — the line that call wrote is there, the call is not made
// again — and its work, both calls' lines, comes back whole.
func TestKilledWorkspaceWorkerAgentMovesWithItsTree(t *testing.T) {
	c := dial(t)
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	queue := unique("wsmove")
	repo, clones := launcherRepo(t, 2)
	const wait = 2 * time.Second
	workers := map[string]*proc{
		"key-a": startWorker(t, queue, srv, "key-a", "--repo", clones[0], "--worker-id", "a", "--workspace-wait", wait.String()),
		"key-b": startWorker(t, queue, srv, "key-b", "--repo", clones[1], "--worker-id", "b", "--workspace-wait", wait.String()),
	}
	entered, released := make(chan string, 1), make(chan struct{})
	var releaseOnce, enterOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(released) }) }
	t.Cleanup(release)
	srv.ScriptFunc("WSMOVE", func(r *llmtest.Request) llmtest.Turn {
		switch len(r.Messages) {
		case 1:
			return bash("echo one >> calls.log")
		case 3:
			enterOnce.Do(func() { entered <- keyOf(r); <-released })
			return bash("echo two >> calls.log")
		}
		return llmtest.Text("moved and done")
	})
	src, err := workspace.Describe(context.Background(), repo)
	if err != nil {
		t.Fatal(err)
	}
	x := newExecutor(t, c, queue)
	req := request(unique("agent"), "", "WSMOVE write two lines")
	req.Workspace = &src
	h, err := x.Start(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	holder := <-entered
	workers[holder].kill9()
	release()
	res, err := h.Wait(ctx)
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	if res.Status != task.Completed || res.Text != "moved and done" || res.ToolUses != 2 {
		t.Fatalf("status %s, text %q, error %q, %d tool uses", res.Status, res.Text, res.Error, res.ToolUses)
	}
	reqs := srv.RequestsFor("WSMOVE")
	if len(reqs) != 4 {
		t.Fatalf("%d model requests, want 4 (the one in flight at the kill made again)", len(reqs))
	}
	for _, r := range reqs[2:] {
		if keyOf(r) == holder {
			t.Fatalf("a call after the kill came with the killed worker's key %s", holder)
		}
	}
	work, err := h.(interface {
		Work(context.Context) (*workspace.Result, error)
	}).Work(ctx)
	if err != nil || work == nil || !work.Changed() {
		t.Fatalf("work %+v, error %v", work, err)
	}
	m, err := worktree.New(worktree.Config{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := workspace.Land(ctx, m, repo, req.AgentID, "session", *work, 0)
	if err != nil {
		t.Fatalf("land: %v", err)
	}
	if got := git(t, repo, "show", out.Branch+":calls.log"); got != "one\ntwo" {
		t.Fatalf("the landed calls.log holds %q, want each call's line once: one, two", got)
	}
}

// An agent whose worker holds its tree is killed (SIGKILL) while the
// only other worker has no clone to restore the tree in (no --repo): the
// agent fails saying its worker is gone once its next call has waited
// --workspace-wait in that worker's queue — it never hangs, and no
// worker runs its calls in a tree that lacks its work. The call in
// flight at the kill was not made again.
func TestKilledWorkspaceWorkerFailsTheAgentClearly(t *testing.T) {
	c := dial(t)
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	queue := unique("wskill")
	repo, clones := launcherRepo(t, 1)
	const wait = 2 * time.Second
	worker := startWorker(t, queue, srv, "key-a", "--repo", clones[0], "--worker-id", "a", "--workspace-wait", wait.String())
	entered, released := make(chan struct{}, 1), make(chan struct{})
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(released) }) }
	t.Cleanup(release)
	srv.ScriptFunc("WSKILL", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return bash("echo one >> calls.log")
		}
		select {
		case entered <- struct{}{}:
		default:
		}
		<-released
		return bash("echo lost >> calls.log")
	})
	src, err := workspace.Describe(context.Background(), repo)
	if err != nil {
		t.Fatal(err)
	}
	x := newExecutor(t, c, queue)
	req := request(unique("agent"), "", "WSKILL write a line")
	req.Workspace = &src
	h, err := x.Start(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	<-entered
	startWorker(t, queue, srv, "key-b", "--worker-id", "b")
	worker.kill9()
	release()
	res, err := h.Wait(ctx)
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	want := prompts.RemoteWorkspaceLost(agentwf.OwnQueue(queue, "a"), wait)
	if res.Status != task.Failed || res.Error != want {
		t.Fatalf("status %s, error %q; want failed with %q", res.Status, res.Error, want)
	}
	if got := len(srv.RequestsFor("WSKILL")); got != 2 {
		t.Fatalf("%d model requests, want 2 (the one in flight at the kill not made again)", got)
	}
	if res.ToolUses != 1 {
		t.Fatalf("%d tool uses, want 1", res.ToolUses)
	}
	wh, ok := h.(interface {
		Work(context.Context) (*workspace.Result, error)
	})
	if !ok {
		t.Fatal("the temporal executor's handle brings back no work")
	}
	if w, err := wh.Work(ctx); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("work %+v, error %v; want the lost worker named", w, err)
	}
}

// A worker started without --repo refuses an agent that works in the
// launcher's repository: the agent fails saying which worker and why,
// without a model call.
func TestWorkerWithoutReposRefusesWorkspaceAgents(t *testing.T) {
	c := dial(t)
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	queue := unique("norepo")
	repo, _ := launcherRepo(t, 0)
	startWorker(t, queue, srv, "key", "--worker-id", "bare")
	srv.Script("NOREPO", llmtest.Text("should not run"))
	src, err := workspace.Describe(context.Background(), repo)
	if err != nil {
		t.Fatal(err)
	}
	x := newExecutor(t, c, queue)
	req := request(unique("agent"), "", "NOREPO anything")
	req.Workspace = &src
	h, err := x.Start(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := h.Wait(ctx)
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	if want := prompts.RemoteNoRepos("bare"); res.Status != task.Failed || !strings.Contains(res.Error, want) {
		t.Fatalf("status %s, error %q; want failed with %q", res.Status, res.Error, want)
	}
	if n := len(srv.RequestsFor("NOREPO")); n != 0 {
		t.Fatalf("%d model requests, want none", n)
	}
}

// A sub-agent of an agent with a workspace works in its parent's tree on
// the same worker: what it writes (uncommitted) the parent reads after
// it, and it comes back in the parent's work, which lands in the
// launcher's repository as worktree-agent-<id> with the file committed.
func TestSubagentWorksInItsParentsRemoteTree(t *testing.T) {
	c := dial(t)
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	queue := unique("wssub")
	repo, clones := launcherRepo(t, 2)
	startWorker(t, queue, srv, "key", "--repo", clones[0], "--worker-id", "one")
	startWorker(t, queue, srv, "key", "--repo", clones[1], "--worker-id", "two")
	srv.ScriptFunc("WSPARENT", func(r *llmtest.Request) llmtest.Turn {
		switch len(r.Messages) {
		case 1:
			return llmtest.ToolUses(llmtest.Call{Name: "Agent", Input: map[string]any{"description": "child", "prompt": "WSCHILD write"}})
		case 3:
			return bash("cat sub.txt")
		}
		return llmtest.Text("parent done")
	})
	srv.Script("WSCHILD", bash("echo from-the-child > sub.txt"), llmtest.Text("child done"))
	src, err := workspace.Describe(context.Background(), repo)
	if err != nil {
		t.Fatal(err)
	}
	x := newExecutor(t, c, queue)
	req := request(unique("agent"), "", "WSPARENT delegate")
	req.Workspace = &src
	h, err := x.Start(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := h.Wait(ctx)
	if err != nil || res.Status != task.Completed {
		t.Fatalf("wait: %v %+v", err, res)
	}
	reqs := srv.RequestsFor("WSPARENT")
	if len(reqs) != 3 {
		t.Fatalf("%d parent requests, want 3", len(reqs))
	}
	if tr := reqs[2].LastToolResults(); len(tr) != 1 || !strings.Contains(tr[0].ResultText(), "from-the-child") {
		t.Fatalf("the parent did not read the child's file in its tree: %+v", tr)
	}
	work, err := h.(interface {
		Work(context.Context) (*workspace.Result, error)
	}).Work(ctx)
	if err != nil || work == nil || !work.Changed() || len(work.Bundle) == 0 {
		t.Fatalf("work %+v, error %v; want the child's file as a commit", work, err)
	}
	m, err := worktree.New(worktree.Config{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := workspace.Land(ctx, m, repo, req.AgentID, "session", *work, 0)
	if err != nil {
		t.Fatalf("land: %v", err)
	}
	if got := git(t, repo, "show", out.Branch+":sub.txt"); got != "from-the-child" {
		t.Fatalf("branch %s holds sub.txt %q", out.Branch, got)
	}
}

// A stopped agent's tree is still its work: TaskStop (Stop) cancels it
// mid-call, and what it wrote before comes back for the launcher to land.
func TestStoppedWorkspaceAgentBringsItsWorkBack(t *testing.T) {
	c := dial(t)
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	queue := unique("wsstop")
	repo, clones := launcherRepo(t, 1)
	startWorker(t, queue, srv, "key", "--repo", clones[0])
	entered, released := make(chan struct{}, 1), make(chan struct{})
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(released) }) }
	t.Cleanup(release)
	srv.ScriptFunc("WSSTOP", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return bash("echo before-the-stop > kept.txt")
		}
		select {
		case entered <- struct{}{}:
		default:
		}
		<-released
		return llmtest.Text("too late")
	})
	src, err := workspace.Describe(context.Background(), repo)
	if err != nil {
		t.Fatal(err)
	}
	x := newExecutor(t, c, queue)
	req := request(unique("agent"), "", "WSSTOP write then wait")
	req.Workspace = &src
	h, err := x.Start(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := h.Stop(ctx); err != nil {
		t.Fatalf("stop: %v", err)
	}
	release()
	res, err := h.Wait(ctx)
	if err != nil || res.Status != task.Killed {
		t.Fatalf("wait: %v %+v", err, res)
	}
	work, err := h.(interface {
		Work(context.Context) (*workspace.Result, error)
	}).Work(ctx)
	if err != nil || work == nil || !work.Changed() {
		t.Fatalf("work %+v, error %v; want the file written before the stop", work, err)
	}
	m, err := worktree.New(worktree.Config{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := workspace.Land(ctx, m, repo, req.AgentID, "session", *work, 0)
	if err != nil {
		t.Fatalf("land: %v", err)
	}
	if got := git(t, repo, "show", out.Branch+":kept.txt"); got != "before-the-stop" {
		t.Fatalf("branch %s holds kept.txt %q", out.Branch, got)
	}
}

// --max-agents holds across a worker's two queues: with a cap of 1 and
// one agent's model call in flight on the worker's own queue (where the
// calls of the agents whose trees it holds go), the worker takes no
// checkout from the shared queue either — every other agent's tree is
// made on the other worker and its call arrives there. (Before, each
// queue had the cap, and a second agent's tree could be made on the
// capped worker while its first call then waited there.)
func TestMaxAgentsCapHoldsAcrossBothQueues(t *testing.T) {
	c := dial(t)
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	queue := unique("wscap")
	repo, clones := launcherRepo(t, 2)
	released := make(chan struct{})
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(released) }) }
	t.Cleanup(release)
	arrived := make(chan *llmtest.Request, 16)
	srv.ScriptFunc("WSCAP", func(r *llmtest.Request) llmtest.Turn {
		arrived <- r
		<-released
		return llmtest.Text("capped agent done")
	})
	startWorker(t, queue, srv, "key-capped", "--repo", clones[0], "--worker-id", "capped", "--max-agents", "1")
	src, err := workspace.Describe(context.Background(), repo)
	if err != nil {
		t.Fatal(err)
	}
	x := newExecutor(t, c, queue)
	var hs []executor.Handle
	startOne := func() {
		req := request(unique("agent"), "", "WSCAP wait")
		req.Workspace = &src
		h, err := x.Start(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	startOne()
	if first := <-arrived; keyOf(first) != "key-capped" {
		t.Fatalf("the first agent's call came with key %q", keyOf(first))
	}
	startWorker(t, queue, srv, "key-free", "--repo", clones[1], "--worker-id", "free")
	const more = 4
	for range more {
		startOne()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i := range more {
		select {
		case r := <-arrived:
			if k := keyOf(r); k != "key-free" {
				t.Fatalf("call %d came with key %q while the capped worker's one slot was taken", i, k)
			}
		case <-ctx.Done():
			t.Fatalf("only %d of %d calls arrived: trees were made on the capped worker, whose calls then waited for its slot (worktrees there: %s)",
				i, more, git(t, clones[0], "worktree", "list"))
		}
	}
	if n := strings.Count(git(t, clones[0], "worktree", "list", "--porcelain"), "worktree "); n != 2 {
		t.Fatalf("the capped worker's clone has %d trees, want its own and the first agent's:\n%s", n, git(t, clones[0], "worktree", "list"))
	}
	release()
	for _, h := range hs {
		res, err := h.Wait(ctx)
		if err != nil || res.Status != task.Completed {
			t.Fatalf("wait: %v %+v", err, res)
		}
	}
}
