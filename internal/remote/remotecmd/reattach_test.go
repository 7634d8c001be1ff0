package remotecmd_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// remoteHome is a HOME whose user settings name the dev server and queue,
// and hold the settings of extra (`"key": value, ` pairs) before them.
func remoteHome(t *testing.T, queue, extra string) string {
	t.Helper()
	home := t.TempDir()
	settings := `{` + extra + `"remote": {"temporal": {"address": "` + server.Address + `", "namespace": "` + server.Namespace + `", "taskQueue": "` + queue + `"}}}`
	if err := os.MkdirAll(filepath.Join(home, ".config", "cadre"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".config", "cadre", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	return home
}

// newSessionID is a random session id (a UUID).
func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// launcher is a cadre process in a process group of its own.
type launcher struct {
	cmd            *exec.Cmd
	stdout, stderr *bytes.Buffer
	done           chan struct{}
	err            error
}

// startLauncher starts cadre with args in dir, its model at srv.
func startLauncher(t *testing.T, dir, home string, srv *llmtest.Server, args ...string) *launcher {
	t.Helper()
	cmd := exec.Command(cadreBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME=", "ANTHROPIC_BASE_URL="+srv.URL(), "ANTHROPIC_API_KEY=launcher-key",
		"CADRE_REMOTE_BIN="+bin, "GIT_CONFIG_GLOBAL=/dev/null")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	l := &launcher{cmd: cmd, stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = l.stdout, l.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start cadre: %v", err)
	}
	go func() { l.err = cmd.Wait(); close(l.done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-l.done
	})
	return l
}

// wait waits for the launcher to exit and fails the test unless it
// exited 0.
func (l *launcher) wait(t *testing.T) {
	t.Helper()
	<-l.done
	if l.err != nil {
		t.Fatalf("cadre %v: %v\nstdout: %s\nstderr: %s", l.cmd.Args[1:], l.err, l.stdout, l.stderr)
	}
}

// groupLeft lists the live processes of process group pgid (zombies
// are not live: they only wait to be reaped).
func groupLeft(pgid int) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(raw)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // state, ppid, pgrp, ...
		if len(f) < 3 || f[0] == "Z" {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); g == pgid {
			out = append(out, fmt.Sprintf("%d %s", pid, s[:i+1]))
		}
	}
	return out
}

// waitGroupGone waits until process group pgid has no live process.
func waitGroupGone(t *testing.T, pgid int) {
	t.Helper()
	for len(groupLeft(pgid)) > 0 {
		time.Sleep(20 * time.Millisecond)
	}
}

var launchedRE = regexp.MustCompile(`agent_id: (\S+)\ntype: \S+\ndescription: (\S+)`)

// summaries counts each agent's notifications in req, by description.
func summaries(req *llmtest.Request, descs []string) map[string]int {
	var text strings.Builder
	for _, m := range req.Messages {
		text.WriteString(m.Text())
	}
	out := map[string]int{}
	for _, d := range descs {
		out[d] = strings.Count(text.String(), `<summary>Agent "`+d+`"`)
	}
	return out
}

// The launcher is killed with SIGKILL while its remote agents run; the
// session resumed with `cadre -p --resume` re-attaches to them. Two
// workers with a clone each, six agents, each committing a file in its
// remote worktree: three finish while the first launcher runs, one while
// no launcher runs, two after the session was resumed. No agent was
// started again and no tool call ran twice (an append-only log), the
// main agent read
// each one's notification exactly once across the two processes (counted
// in the captured requests), every agent's branch landed in the
// launcher's repository, no workflow is left open and no process of
// either launcher is left. A second resume reports nothing again. Run
// with `--resume ID` then `--continue`, and the other way round; and with
// the launcher's cap at three (maxConcurrentAgents), the slow agents
// first, so that the quick ones wait in its queue when it is killed:
// never started, they are started by the resumed session.
func TestResumeReattachesAfterTheLauncherWasKilled(t *testing.T) {
	dial(t) // skips without a server
	byID := func(session string) []string { return []string{"--resume", session} }
	latest := func(string) []string { return []string{"--continue"} }
	t.Run("resume then continue", func(t *testing.T) { reattachAfterKill(t, byID, latest, false) })
	t.Run("continue then resume", func(t *testing.T) { reattachAfterKill(t, latest, byID, false) })
	t.Run("queued at the kill", func(t *testing.T) { reattachAfterKill(t, byID, byID, true) })
}

// reattachAfterKill is TestResumeReattachesAfterTheLauncherWasKilled with
// the flags of the first and the second resume; queued caps the launcher
// so that the quick agents are still queued when it is killed.
func reattachAfterKill(t *testing.T, firstResume, secondResume func(session string) []string, queued bool) {
	c := dial(t)
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	queue := unique("reattach")
	repo, clones := launcherRepo(t, 2)
	startWorker(t, queue, srv, "worker-key", "--repo", clones[0], "--worker-id", "one")
	startWorker(t, queue, srv, "worker-key", "--repo", clones[1], "--worker-id", "two")

	quick := []string{"quick-1", "quick-2", "quick-3"}
	slow := []string{"slow-1", "slow-2", "slow-3"}
	all := append(append([]string(nil), quick...), slow...)
	extra := ""
	if queued {
		all = append(append([]string(nil), slow...), quick...)
		extra = `"maxConcurrentAgents": 3, `
	}
	// Every tool call appends a line to this log: none may run twice.
	calls := filepath.Join(t.TempDir(), "calls.log")
	entered, released := map[string]chan struct{}{}, map[string]chan struct{}{}
	var once sync.Map
	for _, d := range slow {
		entered[d], released[d] = make(chan struct{}), make(chan struct{})
	}
	var releaseMu sync.Mutex
	release := func(d string) {
		releaseMu.Lock()
		defer releaseMu.Unlock()
		select {
		case <-released[d]:
		default:
			close(released[d])
		}
	}
	t.Cleanup(func() { // before the model server closes
		for _, d := range slow {
			release(d)
		}
	})
	for _, d := range all {
		key := strings.ToUpper(d)
		srv.ScriptFunc(key, func(r *llmtest.Request) llmtest.Turn {
			if len(r.Messages) == 1 {
				return bash(fmt.Sprintf("echo %s >> %s && echo %s > %s.txt && git add %s.txt && git -c user.name=W -c user.email=w@example.com commit -qm '%s commit' && echo committed", d, calls, d, d, d, d))
			}
			if ch, ok := entered[d]; ok {
				if _, loaded := once.LoadOrStore(d, true); !loaded {
					close(ch)
				}
				<-released[d]
			}
			return llmtest.Text(key + " is done")
		})
	}
	quickSeen := make(chan struct{})
	var quickOnce sync.Once
	srv.ScriptFunc("LAUNCH", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			var calls []llmtest.Call
			for _, d := range all {
				calls = append(calls, llmtest.Call{Name: "Agent", Input: map[string]any{"description": d, "prompt": strings.ToUpper(d) + " write and commit"}})
			}
			return llmtest.ToolUses(calls...)
		}
		seen := summaries(r, quick)
		if seen["quick-1"] > 0 && seen["quick-2"] > 0 && seen["quick-3"] > 0 {
			quickOnce.Do(func() { close(quickSeen) })
		}
		return llmtest.Text("LAUNCHER-ANSWER")
	})
	home := remoteHome(t, queue, extra)
	session := newSessionID()

	// The first launcher: killed once the quick agents were reported and
	// the slow ones wait for their model.
	first := startLauncher(t, repo, home, srv, "-p", "--remote", "--dangerously-skip-permissions", "--session-id", session, "LAUNCH six agents")
	if !queued {
		select {
		case <-quickSeen:
		case <-first.done:
			t.Fatalf("the launcher ended early: %v\nstdout: %s\nstderr: %s", first.err, first.stdout, first.stderr)
		}
	}
	for _, d := range slow {
		<-entered[d]
	}
	if queued {
		for _, d := range quick {
			if n := len(srv.RequestsFor(strings.ToUpper(d))); n != 0 {
				t.Fatalf("%s ran (%d requests) though the cap should hold it in the queue", d, n)
			}
		}
	}
	pgid := first.cmd.Process.Pid
	if err := syscall.Kill(pgid, syscall.SIGKILL); err != nil { // the launcher alone, as a crash
		t.Fatal(err)
	}
	<-first.done
	waitGroupGone(t, pgid) // its bridge ends with it
	ids := map[string]string{}
	var tr []string
	for _, b := range srv.RequestsFor("LAUNCH")[1].LastToolResults() {
		tr = append(tr, b.ResultText())
		for _, m := range launchedRE.FindAllStringSubmatch(b.ResultText(), -1) {
			ids[m[2]] = m[1]
		}
	}
	if len(ids) != len(all) {
		t.Fatalf("agents launched: %v in %q", ids, tr)
	}
	// slow-1 ends while no launcher runs.
	release("slow-1")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := c.GetWorkflow(ctx, ids["slow-1"], "").Get(ctx, nil); err != nil {
		t.Fatalf("slow-1's workflow: %v", err)
	}

	// The resumed session re-attaches; the other two end after it did.
	before := len(srv.RequestsFor("LAUNCH"))
	resumed := startLauncher(t, repo, home, srv, append(append([]string{"-p"}, firstResume(session)...), "--dangerously-skip-permissions", "LAUNCH resumed")...)
	for len(srv.RequestsFor("LAUNCH")) == before {
		select {
		case <-resumed.done:
			t.Fatalf("the resumed launcher ended before its first request: %v\nstdout: %s\nstderr: %s", resumed.err, resumed.stdout, resumed.stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	release("slow-2")
	release("slow-3")
	resumed.wait(t)
	waitGroupGone(t, resumed.cmd.Process.Pid)
	if !strings.Contains(resumed.stdout.String(), "LAUNCHER-ANSWER") {
		t.Fatalf("stdout %q\nstderr: %s", resumed.stdout, resumed.stderr)
	}

	reqs := srv.RequestsFor("LAUNCH")
	last := reqs[len(reqs)-1]
	for d, n := range summaries(last, all) {
		if n != 1 {
			t.Fatalf("the main agent read %d notifications of %s, want 1 (stderr of the resumed run: %s)", n, d, resumed.stderr)
		}
	}
	lastText := ""
	for _, m := range last.Messages {
		lastText += m.Text()
	}
	for _, d := range all {
		if !strings.Contains(lastText, strings.ToUpper(d)+" is done") {
			t.Fatalf("%s's report is not in the conversation", d)
		}
	}
	if strings.Contains(lastText, "interrupted when the session stopped") || strings.Contains(lastText, "could not re-attach") {
		t.Fatalf("a remote agent was reported lost:\n%s", lastText)
	}
	for _, d := range all {
		id := ids[d]
		// Its first request once: it was not started again. (A model
		// call in flight may be made again: an activity whose heartbeat
		// was late is retried.)
		firsts := 0
		for _, r := range srv.RequestsFor(strings.ToUpper(d)) {
			if len(r.Messages) == 1 {
				firsts++
			}
		}
		if firsts != 1 {
			t.Fatalf("%s was started %d times", d, firsts)
		}
		branch := "worktree-agent-" + id
		if got := git(t, repo, "show", branch+":"+d+".txt"); got != d {
			t.Fatalf("branch %s holds %q", branch, got)
		}
		desc, err := c.DescribeWorkflow(ctx, id, "")
		if err != nil {
			t.Fatal(err)
		}
		if st := desc.RawResponse.GetWorkflowExecutionInfo().GetStatus(); st != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
			t.Fatalf("%s's workflow is %s", d, st)
		}
	}

	raw, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range all {
		if n := strings.Count(string(raw), d+"\n"); n != 1 {
			t.Fatalf("%s's tool call ran %d times:\n%s", d, n, raw)
		}
	}

	// A second resume: nothing to report, nothing running.
	before = len(srv.RequestsFor("LAUNCH"))
	again := startLauncher(t, repo, home, srv, append(append([]string{"-p"}, secondResume(session)...), "--dangerously-skip-permissions", "LAUNCH again")...)
	again.wait(t)
	waitGroupGone(t, again.cmd.Process.Pid)
	reqs = srv.RequestsFor("LAUNCH")
	if len(reqs) != before+1 {
		t.Fatalf("the second resume made %d requests, want 1 (no notification turn)", len(reqs)-before)
	}
	newest := reqs[before].Messages[len(reqs[before].Messages)-1].Text()
	if strings.Contains(newest, "<task-notification>") {
		t.Fatalf("the second resume reported again: %s", newest)
	}
	for d, n := range summaries(reqs[before], all) {
		if n != 1 {
			t.Fatalf("after the second resume the conversation holds %d notifications of %s", n, d)
		}
	}
}

// A remote agent whose workflow is gone from the server by the time the
// session is resumed (deleted while no launcher ran) ends
// with one failure notification saying it could not be re-attached; a
// second resume reports nothing again.
func TestResumeReportsAVanishedRemoteAgentOnce(t *testing.T) {
	c := dial(t) // skips without a server
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	queue := unique("vanish")
	startWorker(t, queue, srv, "worker-key")
	entered, released := make(chan struct{}), make(chan struct{})
	var enterOnce, releaseOnce sync.Once
	t.Cleanup(func() { releaseOnce.Do(func() { close(released) }) })
	srv.ScriptFunc("VANISH", func(*llmtest.Request) llmtest.Turn {
		enterOnce.Do(func() { close(entered) })
		<-released
		return llmtest.Text("VANISH is done")
	})
	srv.ScriptFunc("LAUNCH", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.ToolUses(llmtest.Call{Name: "Agent", Input: map[string]any{"description": "vanish", "prompt": "VANISH wait"}})
		}
		return llmtest.Text("LAUNCHER-ANSWER")
	})
	home, dir := remoteHome(t, queue, ""), t.TempDir()
	session := newSessionID()
	first := startLauncher(t, dir, home, srv, "-p", "--remote", "--session-id", session, "LAUNCH one agent")
	select {
	case <-entered:
	case <-first.done:
		t.Fatalf("the launcher ended early: %v\nstdout: %s\nstderr: %s", first.err, first.stdout, first.stderr)
	}
	if err := syscall.Kill(first.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-first.done
	waitGroupGone(t, first.cmd.Process.Pid)
	var id string
	for _, b := range srv.RequestsFor("LAUNCH")[1].LastToolResults() {
		if m := launchedRE.FindStringSubmatch(b.ResultText()); m != nil {
			id = m[1]
		}
	}
	if id == "" {
		t.Fatal("no agent was launched")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := c.WorkflowService().DeleteWorkflowExecution(ctx, &workflowservice.DeleteWorkflowExecutionRequest{
		Namespace: server.Namespace, WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: id}}); err != nil {
		t.Fatal(err)
	}
	for { // deletion is asynchronous
		_, err := c.DescribeWorkflow(ctx, id, "")
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}

	before := len(srv.RequestsFor("LAUNCH"))
	resumed := startLauncher(t, dir, home, srv, "-p", "--resume", session, "LAUNCH resumed")
	resumed.wait(t)
	waitGroupGone(t, resumed.cmd.Process.Pid)
	reqs := srv.RequestsFor("LAUNCH")
	last := reqs[len(reqs)-1]
	if n := summaries(last, []string{"vanish"})["vanish"]; n != 1 || len(reqs) <= before {
		t.Fatalf("the main agent read %d notifications of the vanished agent, want 1\nstderr: %s", n, resumed.stderr)
	}
	text := ""
	for _, m := range last.Messages {
		text += m.Text()
	}
	if !strings.Contains(text, `<summary>Agent "vanish" failed</summary>`) || !strings.Contains(text, "could not re-attach") {
		t.Fatalf("the notification does not say the agent could not be re-attached:\n%s", text)
	}
	if len(srv.RequestsFor("VANISH")) != 1 {
		t.Fatalf("the vanished agent was started again: %d requests", len(srv.RequestsFor("VANISH")))
	}

	before = len(srv.RequestsFor("LAUNCH"))
	again := startLauncher(t, dir, home, srv, "-p", "--resume", session, "LAUNCH again")
	again.wait(t)
	reqs = srv.RequestsFor("LAUNCH")
	if len(reqs) != before+1 || summaries(reqs[before], []string{"vanish"})["vanish"] != 1 {
		t.Fatalf("the second resume made %d requests; the vanished agent's notifications: %v", len(reqs)-before, summaries(reqs[len(reqs)-1], []string{"vanish"}))
	}
}
