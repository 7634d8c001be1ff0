package remotecmd_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/pflag"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"google.golang.org/protobuf/proto"

	"github.com/cadre-dev/cadre/internal/cli/workercmd"
	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/internal/remote/remotecmd"
	"github.com/cadre-dev/cadre/internal/remote/temporalexec"
	"github.com/cadre-dev/cadre/internal/remote/temporaltest"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/task"
)

var (
	server    *temporaltest.Server
	serverErr error
	// bin is the cadre-remote binary built for the tests; cadreBin the
	// cadre binary, beside it.
	bin, cadreBin string
)

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "cadre-remote-test-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin = filepath.Join(dir, "cadre-remote")
	cadreBin = filepath.Join(dir, "cadre")
	if out, err := exec.Command("go", "build", "-o", dir, "github.com/cadre-dev/cadre/cmd/cadre-remote", "github.com/cadre-dev/cadre/cmd/cadre").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build cadre-remote and cadre: %v\n%s", err, out)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	server, serverErr = temporaltest.Start(ctx, "")
	cancel()
	if server != nil {
		defer server.Stop()
	}
	return m.Run()
}

func dial(t *testing.T) client.Client {
	t.Helper()
	temporaltest.Skip(t, serverErr)
	c, err := client.Dial(client.Options{HostPort: server.Address, Namespace: server.Namespace,
		Logger: log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))})
	if err != nil {
		t.Fatalf("dial the dev server: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

var seq atomic.Int64

func unique(prefix string) string { return fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), seq.Add(1)) }

// proc is a cadre-remote worker process.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
	log  *bytes.Buffer
	mu   *sync.Mutex
}

type lockedBuf struct {
	mu  *sync.Mutex
	buf *bytes.Buffer
}

func (b lockedBuf) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// startWorker starts `cadre-remote worker` on queue with its model at
// srv and key as its provider key, and waits until it serves.
func startWorker(t *testing.T, queue string, srv *llmtest.Server, key string, extra ...string) *proc {
	t.Helper()
	return startWorkerWith(t, bin, queue, srv, key, extra...)
}

// startWorkerWith is startWorker with the binary to run (cadre-remote, or
// cadre, whose worker command runs cadre-remote).
func startWorkerWith(t *testing.T, binary, queue string, srv *llmtest.Server, key string, extra ...string) *proc {
	t.Helper()
	return startWorkerEnv(t, binary, queue, srv, key, nil, extra...)
}

// startWorkerEnv is startWorkerWith with variables added to the worker's
// environment.
func startWorkerEnv(t *testing.T, binary, queue string, srv *llmtest.Server, key string, env []string, extra ...string) *proc {
	t.Helper()
	args := append([]string{"worker", "--address", server.Address, "--namespace", server.Namespace, "--task-queue", queue}, extra...)
	cmd := exec.Command(binary, args...)
	cmd.Env = append(append(os.Environ(), "ANTHROPIC_BASE_URL="+srv.URL(), "ANTHROPIC_API_KEY="+key, "HOME="+t.TempDir()), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &proc{cmd: cmd, done: make(chan struct{}), log: &bytes.Buffer{}, mu: &sync.Mutex{}}
	cmd.Stdout, cmd.Stderr = lockedBuf{p.mu, p.log}, lockedBuf{p.mu, p.log}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start worker: %v", err)
	}
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
		if t.Failed() {
			t.Logf("worker %s, the end of its output:\n%s", key, tail(p.output(), 60))
		}
	})
	for !strings.Contains(p.output(), "serving task queue") {
		select {
		case <-p.done:
			t.Fatalf("the worker exited: %s", p.output())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return p
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// kill9 kills the worker as a crash would.
func (p *proc) kill9() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

func request(id, dir, prompt string) executor.SpawnRequest {
	return executor.SpawnRequest{
		AgentID: id, ParentID: "main", RootID: "session", ToolUseID: "toolu_" + id, Depth: 1, Description: "remote test",
		Definition: executor.Definition{Name: "general-purpose", SystemPrefix: "You are a sub-agent.", System: "Do the task."},
		Prompt:     prompt,
		Ceiling:    executor.Ceiling{Tools: []string{"Bash", "Read", "Agent"}},
		Model:      executor.Model{ID: "claude-sonnet-4-5"},
		Mode:       permission.ModeBypassPermissions,
		Cwd:        dir,
	}
}

func newExecutor(t *testing.T, c client.Client, queue string) *temporalexec.Executor {
	t.Helper()
	x, err := temporalexec.New(temporalexec.Config{Client: c, TaskQueue: queue})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x.Close)
	return x
}

func bash(cmd string) llmtest.Turn { return llmtest.ToolUse("Bash", map[string]string{"command": cmd}) }

// A worker killed with SIGKILL while its agent waits for the model: the
// agent continues on another worker from its last completed call — the
// tool call made before the kill is not made again (each call appends a
// line to a log), the call in flight is redone once, and the result is
// whole.
func TestKilledWorkerAgentContinuesElsewhere(t *testing.T) {
	c := dial(t)
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	queue := unique("q")
	dir := t.TempDir()
	entered, released := make(chan struct{}), make(chan struct{})
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(released) }) }
	t.Cleanup(release)
	var n atomic.Int32
	srv.ScriptFunc("RECOVER", func(*llmtest.Request) llmtest.Turn {
		switch n.Add(1) {
		case 1:
			return bash("echo one >> calls.log")
		case 2: // on the worker about to be killed: never answered to it
			close(entered)
			<-released
			return bash("echo lost >> calls.log")
		case 3:
			return bash("echo two >> calls.log")
		}
		return llmtest.Text("recovered after the kill")
	})
	a := startWorker(t, queue, srv, "test")
	x := newExecutor(t, c, queue)
	req := request(unique("agent"), dir, "RECOVER write two lines")
	h, err := x.Start(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	<-entered
	startWorker(t, queue, srv, "test")
	a.kill9()
	release()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := h.Wait(ctx)
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	if res.Status != task.Completed || res.Text != "recovered after the kill" {
		t.Fatalf("status %s, text %q, error %q", res.Status, res.Text, res.Error)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "calls.log"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(raw)); strings.Join(got, ",") != "one,two" {
		t.Fatalf("the calls' log holds %q, want each call once: one, two", got)
	}
	if got := len(srv.RequestsFor("RECOVER")); got != 4 {
		t.Fatalf("%d model requests, want 4 (the one in flight at the kill made twice)", got)
	}
	if res.Turns != 3 || res.ToolUses != 2 {
		t.Fatalf("%d turns and %d tool uses, want 3 and 2", res.Turns, res.ToolUses)
	}
}

// The worker's provider key is its own: the model gets it, and nothing
// the server keeps — the workflow's history, the server's database —
// holds it. The same search finds the prompt, so it can find what is there.
func TestProviderKeyNeverInHistory(t *testing.T) {
	c := dial(t)
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	queue := unique("q")
	key := unique("sk-ant-worker-secret")
	startWorker(t, queue, srv, key)
	srv.Script("KEYCHECK", bash("echo hello"), llmtest.Text("key check done"))
	x := newExecutor(t, c, queue)
	req := request(unique("agent"), t.TempDir(), "KEYCHECK say hello")
	h, err := x.Start(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.Wait(context.Background())
	if err != nil || res.Status != task.Completed {
		t.Fatalf("wait: %v %+v", err, res)
	}
	reqs := srv.RequestsFor("KEYCHECK")
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if got := reqs[0].Header.Get("X-Api-Key") + reqs[0].Header.Get("Authorization"); !strings.Contains(got, key) {
		t.Fatalf("the model got credentials %q, want the worker's key", got)
	}
	var history []byte
	it := c.GetWorkflowHistory(context.Background(), req.AgentID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatalf("history: %v", err)
		}
		b, err := proto.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		history = append(history, b...)
	}
	if !bytes.Contains(history, []byte("KEYCHECK say hello")) || !bytes.Contains(history, []byte("key check done")) {
		t.Fatal("the history lacks the prompt or the report: the search would find nothing")
	}
	if bytes.Contains(history, []byte(key)) {
		t.Fatal("the provider key is in the workflow's history")
	}
	db, err := os.ReadFile(server.DBPath())
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(db, []byte(key)) {
		t.Fatal("the provider key is in the server's database")
	}
}

// `cadre worker --help` lists the flags cadre-remote worker parses, no
// more and no fewer.
func TestCadreWorkerHelpListsTheWorkersFlags(t *testing.T) {
	t.Parallel()
	var remote, cadre []string
	remotecmd.WorkerFlags().VisitAll(func(f *flag.Flag) { remote = append(remote, f.Name) })
	workercmd.New().Flags().VisitAll(func(f *pflag.Flag) { cadre = append(cadre, f.Name) })
	slices.Sort(remote)
	slices.Sort(cadre)
	if len(remote) < 10 || !slices.Equal(remote, cadre) {
		t.Fatalf("cadre-remote worker parses %v, cadre worker --help lists %v", remote, cadre)
	}
}

// `cadre worker` runs cadre-remote (found beside cadre) in its place, and
// SIGTERM stops it cleanly: it exits 0 and hands the call it was running
// back, so the agent finishes on another worker with every completed
// tool call made once.
func TestCadreWorkerSIGTERMHandsTheAgentBack(t *testing.T) {
	c := dial(t)
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	queue := unique("q")
	dir := t.TempDir()
	entered, released := make(chan struct{}), make(chan struct{})
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(released) }) }
	t.Cleanup(release)
	var n atomic.Int32
	srv.ScriptFunc("TERM", func(*llmtest.Request) llmtest.Turn {
		switch n.Add(1) {
		case 1:
			return bash("echo one >> calls.log")
		case 2: // on the worker being stopped
			close(entered)
			<-released
			return bash("echo lost >> calls.log")
		case 3:
			return bash("echo two >> calls.log")
		}
		return llmtest.Text("finished elsewhere")
	})
	a := startWorkerWith(t, cadreBin, queue, srv, "test")
	x := newExecutor(t, c, queue)
	req := request(unique("agent"), dir, "TERM write two lines")
	h, err := x.Start(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	<-entered
	startWorker(t, queue, srv, "test")
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-a.done
	if code := a.cmd.ProcessState.ExitCode(); code != 0 || !strings.Contains(a.output(), "cadre-remote worker: stopped") {
		t.Fatalf("the stopped worker exited %d: %s", code, a.output())
	}
	release()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := h.Wait(ctx)
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	if res.Status != task.Completed || res.Text != "finished elsewhere" {
		t.Fatalf("status %s, text %q, error %q", res.Status, res.Text, res.Error)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "calls.log"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(raw)); strings.Join(got, ",") != "one,two" {
		t.Fatalf("the calls' log holds %q, want each call once: one, two", got)
	}
}

// --max-agents caps what a worker works on: with a cap of 1 and its one
// agent waiting for the model, the other agents' calls all go to the
// other worker (each worker's provider key tells them apart).
func TestMaxAgentsCapsAWorker(t *testing.T) {
	c := dial(t)
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	queue := unique("q")
	released := make(chan struct{})
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(released) }) }
	t.Cleanup(release)
	arrived := make(chan *llmtest.Request, 16)
	srv.ScriptFunc("CAPPED", func(r *llmtest.Request) llmtest.Turn {
		arrived <- r
		<-released
		return llmtest.Text("capped agent done")
	})
	startWorker(t, queue, srv, "key-capped", "--max-agents", "1")
	x := newExecutor(t, c, queue)
	var hs []executor.Handle
	startOne := func() {
		h, err := x.Start(context.Background(), request(unique("agent"), t.TempDir(), "CAPPED wait"))
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	startOne()
	first := <-arrived
	startWorker(t, queue, srv, "key-free")
	const more = 4
	for range more {
		startOne()
	}
	keys := map[string]int{}
	keys[first.Header.Get("X-Api-Key")+first.Header.Get("Authorization")]++
	for range more {
		r := <-arrived
		keys[r.Header.Get("X-Api-Key")+r.Header.Get("Authorization")]++
	}
	var capped, free int
	for k, n := range keys {
		switch {
		case strings.Contains(k, "key-capped"):
			capped += n
		case strings.Contains(k, "key-free"):
			free += n
		}
	}
	if capped != 1 || free != more {
		t.Fatalf("calls in flight: %d on the capped worker (want 1), %d on the other (want %d): %v", capped, free, more, keys)
	}
	release()
	for _, h := range hs {
		res, err := h.Wait(context.Background())
		if err != nil || res.Status != task.Completed {
			t.Fatalf("wait: %v %+v", err, res)
		}
	}
}

// The dev server killed (SIGKILL) and restarted on the same database
// while an agent waits for the model: the agent goes on and finishes,
// each tool call made once.
func TestServerRestartAgentContinues(t *testing.T) {
	temporaltest.Skip(t, serverErr)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	own, err := temporaltest.Start(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(own.Stop)
	c, err := client.Dial(client.Options{HostPort: own.Address, Namespace: own.Namespace,
		Logger: log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	entered, released := make(chan struct{}), make(chan struct{})
	var once, releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(released) }) }
	t.Cleanup(release)
	// The script answers by what the conversation holds, so a call redone
	// after the restart gets the same answer.
	srv.ScriptFunc("RESTART", func(r *llmtest.Request) llmtest.Turn {
		results := 0
		for _, m := range r.Messages {
			for _, b := range m.Content {
				if b.Type == "tool_result" {
					results++
				}
			}
		}
		switch results {
		case 0:
			return bash("echo one >> calls.log")
		case 1:
			once.Do(func() { close(entered) })
			<-released
			return bash("echo two >> calls.log")
		}
		return llmtest.Text("survived the restart")
	})
	queue := unique("q")
	args := []string{"worker", "--address", own.Address, "--namespace", own.Namespace, "--task-queue", queue}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "ANTHROPIC_BASE_URL="+srv.URL(), "ANTHROPIC_API_KEY=test", "HOME="+t.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &proc{cmd: cmd, done: make(chan struct{}), log: &bytes.Buffer{}, mu: &sync.Mutex{}}
	cmd.Stdout, cmd.Stderr = lockedBuf{p.mu, p.log}, lockedBuf{p.mu, p.log}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(p.kill9)
	dir := t.TempDir()
	x := newExecutor(t, c, queue)
	h, err := x.Start(ctx, request(unique("agent"), dir, "RESTART write two lines"))
	if err != nil {
		t.Fatal(err)
	}
	<-entered
	own.Kill()
	if err := own.Restart(ctx); err != nil {
		t.Fatalf("restart the server: %v", err)
	}
	release()
	res, err := h.Wait(ctx)
	if err != nil {
		t.Fatalf("wait: %v (worker: %s)", err, p.output())
	}
	if res.Status != task.Completed || res.Text != "survived the restart" {
		t.Fatalf("status %s, text %q, error %q", res.Status, res.Text, res.Error)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "calls.log"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(raw)); strings.Join(got, ",") != "one,two" {
		t.Fatalf("the calls' log holds %q, want each call once: one, two", got)
	}
}

// A queue of remote agents drains through three workers capped by
// --max-agents: every agent completes, each with exactly one model call,
// and never more calls are in flight than the workers' caps allow (a
// bound only: the calls here answer at once; that the cap holds back
// calls is TestMaxAgentsCapsAWorker's). CADRE_REMOTE_DRAIN sets how many agents (default 40; the issue's
// figure is 1000); the throughput is logged.
func TestDrainQueueUnderTheCap(t *testing.T) {
	c := dial(t)
	n := 40
	if v := os.Getenv("CADRE_REMOTE_DRAIN"); v != "" {
		if _, err := fmt.Sscan(v, &n); err != nil || n < 1 {
			t.Fatalf("CADRE_REMOTE_DRAIN=%q is not a positive count", v)
		}
	}
	const workers, perWorker = 3, 2
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	var inFlight, most atomic.Int32
	srv.ScriptFunc("DRAIN", func(*llmtest.Request) llmtest.Turn {
		now := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := most.Load()
			if now <= m || most.CompareAndSwap(m, now) {
				break
			}
		}
		return llmtest.Text("drained")
	})
	queue := unique("q")
	for range workers {
		startWorker(t, queue, srv, "test", "--max-agents", fmt.Sprint(perWorker))
	}
	x := newExecutor(t, c, queue)
	start := time.Now()
	hs := make([]executor.Handle, n)
	for i := range hs {
		req := request(unique("drain"), t.TempDir(), "DRAIN no-op")
		req.Background = true
		h, err := x.Start(context.Background(), req)
		if err != nil {
			t.Fatalf("start agent %d: %v", i, err)
		}
		hs[i] = h
	}
	for i, h := range hs {
		res, err := h.Wait(context.Background())
		if err != nil || res.Status != task.Completed || res.Text != "drained" {
			t.Fatalf("agent %d: %v %+v", i, err, res)
		}
	}
	elapsed := time.Since(start)
	if got := len(srv.RequestsFor("DRAIN")); got != n {
		t.Fatalf("%d model calls for %d agents, want one each", got, n)
	}
	if m := most.Load(); m > workers*perWorker {
		t.Fatalf("%d calls in flight at once, over the workers' caps (%d)", m, workers*perWorker)
	}
	t.Logf("%d remote agents through %d workers capped at %d each: %s, %.1f agents/s, at most %d calls at once",
		n, workers, perWorker, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), most.Load())
}
