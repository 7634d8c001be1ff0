package temporalexec

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"

	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/internal/engine/executor/executortest"
	"github.com/cadre-dev/cadre/internal/remote/agentwf"
	"github.com/cadre-dev/cadre/internal/remote/temporaltest"
	"github.com/cadre-dev/cadre/llm/anthropic"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/tool"
	"github.com/cadre-dev/cadre/tool/builtin"
)

// server is the dev server the package's tests share (nil when absent;
// serverErr says why).
var (
	server    *temporaltest.Server
	serverErr error
)

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	server, serverErr = temporaltest.Start(ctx, "")
	cancel()
	code := m.Run()
	if server != nil {
		server.Stop()
	}
	os.Exit(code)
}

// dial returns a client of the shared server, or skips t.
func dial(t *testing.T) client.Client {
	t.Helper()
	temporaltest.Skip(t, serverErr)
	c, err := client.Dial(client.Options{HostPort: server.Address, Namespace: server.Namespace, Logger: log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))})
	if err != nil {
		t.Fatalf("dial the dev server: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

var queues atomic.Int64

// queue returns a task queue of t's own.
func queue(t *testing.T) string {
	return fmt.Sprintf("cadre-test-%d-%d", os.Getpid(), queues.Add(1))
}

type boomIn struct{}

// workerFor starts a worker on queue whose model is srv.
func workerFor(t *testing.T, c client.Client, queue string, srv *llmtest.Server) {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	m, err := anthropic.New(anthropic.Config{APIKey: "test", BaseURL: srv.URL(), HTTPClient: &http.Client{Transport: tr}, RetryBase: 1, RetryMax: 2})
	if err != nil {
		t.Fatal(err)
	}
	boom := tool.Func(tool.FuncConfig{Name: "Boom", Description: "explodes"}, func(context.Context, *tool.Env, boomIn) (tool.Output, error) {
		panic("kaboom")
	})
	w := agentwf.NewWorker(c, agentwf.WorkerOptions{TaskQueue: queue, Activities: &agentwf.Activities{Model: m, Tools: append(builtin.Tools(builtin.Config{}), boom, hugeTool())}})
	if err := w.Start(); err != nil {
		t.Fatalf("start worker: %v", err)
	}
	t.Cleanup(w.Stop)
}

// request is a general-purpose child that may use every tool unasked.
func request(dir string, c executortest.Child, id string) executor.SpawnRequest {
	return executor.SpawnRequest{
		AgentID: id, ParentID: "main", RootID: "session", ToolUseID: c.ToolUseID, Depth: 1, Background: c.Background, Description: c.Description,
		Definition: executor.Definition{Name: "general-purpose", Path: "builtin:general-purpose", SystemPrefix: "You are a sub-agent.", System: "Do the task."},
		Prompt:     c.Prompt,
		Ceiling:    executor.Ceiling{Tools: []string{"Bash", "Read", "Write", "Edit", "Glob", "Grep", "Agent", "Boom"}},
		Model:      executor.Model{ID: "claude-sonnet-4-5", Rule: run.ModelRule("default")},
		Mode:       permission.ModeBypassPermissions,
		Cwd:        dir,
	}
}

var agents atomic.Int64

func newHarness(t *testing.T) *executortest.Harness {
	c := dial(t)
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	q := queue(t)
	workerFor(t, c, q, srv)
	var mu sync.Mutex
	var notes []task.Notification
	x, err := New(Config{Client: c, TaskQueue: q, Notify: func(n task.Notification) {
		mu.Lock()
		defer mu.Unlock()
		notes = append(notes, n)
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x.Close)
	dir := t.TempDir()
	return &executortest.Harness{
		Executor: x,
		Model:    srv,
		Request: func(t *testing.T, ch executortest.Child) executor.SpawnRequest {
			return request(dir, ch, fmt.Sprintf("a%d-%d", os.Getpid(), agents.Add(1)))
		},
		Notifications: func(*testing.T) []task.Notification {
			mu.Lock()
			defer mu.Unlock()
			return append([]task.Notification(nil), notes...)
		},
		Live: func(t *testing.T) int {
			n, err := x.Live(context.Background())
			if err != nil {
				t.Fatalf("live: %v", err)
			}
			return n
		},
		PanicTool: "Boom",
	}
}

// The Temporal executor passes the executor conformance suite against a
// real dev server, with a worker in this process.
func TestTemporalExecutorConformance(t *testing.T) {
	executortest.Run(t, newHarness)
}

// With no worker on its queue, Start says so after its bounded wait
// instead of leaving the child queued silently; with one, it starts.
func TestStartWithoutWorkerSaysSo(t *testing.T) {
	c := dial(t)
	q := queue(t)
	x, err := New(Config{Client: c, TaskQueue: q, WorkerWait: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x.Close)
	req := request(t.TempDir(), executortest.Child{Prompt: "NOWORKER hello", Description: "d", ToolUseID: "toolu_nw"}, fmt.Sprintf("nw%d-%d", os.Getpid(), agents.Add(1)))
	_, err = x.Start(context.Background(), req)
	if !errors.Is(err, ErrNoWorker) || !strings.Contains(err.Error(), q) {
		t.Fatalf("start with no worker: %v", err)
	}
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	srv.Script("NOWORKER", llmtest.Text("a worker came"))
	workerFor(t, c, q, srv)
	x2, err := New(Config{Client: c, TaskQueue: q})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x2.Close)
	h, err := x2.Start(context.Background(), req)
	if err != nil {
		t.Fatalf("start with a worker: %v", err)
	}
	if res, err := h.Wait(context.Background()); err != nil || res.Text != "a worker came" {
		t.Fatalf("wait: %v %+v", err, res)
	}
}
