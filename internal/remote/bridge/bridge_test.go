package bridge_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"

	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/internal/engine/executor/executortest"
	"github.com/cadre-dev/cadre/internal/remote/agentwf"
	"github.com/cadre-dev/cadre/internal/remote/bridge"
	"github.com/cadre-dev/cadre/internal/remote/temporaltest"
	"github.com/cadre-dev/cadre/llm/anthropic"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/tool"
	"github.com/cadre-dev/cadre/tool/builtin"
)

var (
	server    *temporaltest.Server
	serverErr error
	bin       string
)

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "cadre-bridge-test-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin = filepath.Join(dir, "cadre-remote")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/cadre-dev/cadre/cmd/cadre-remote").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build cadre-remote: %v\n%s", err, out)
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

var seq atomic.Int64

type boomIn struct{}

// newHarness is a bridge executor (a cadre-remote bridge process) and a
// worker in this process, on a task queue of the subtest's own.
func newHarness(t *testing.T) *executortest.Harness {
	h, _ := setUp(t)
	return h
}

// newBridge starts a bridge on queue.
func newBridge(t *testing.T, queue string, notify func(task.Notification)) *bridge.Executor {
	t.Helper()
	x, err := bridge.New(bridge.Config{Bin: bin, Args: []string{"--address", server.Address, "--namespace", server.Namespace, "--task-queue", queue},
		Env: append(os.Environ(), "HOME="+t.TempDir()), Stderr: os.Stderr, Notify: notify})
	if err != nil {
		t.Fatalf("start the bridge: %v", err)
	}
	t.Cleanup(func() { _ = x.Close() })
	return x
}

// setUp is newHarness, and the harness's task queue.
func setUp(t *testing.T) (*executortest.Harness, string) {
	temporaltest.Skip(t, serverErr)
	c, err := client.Dial(client.Options{HostPort: server.Address, Namespace: server.Namespace,
		Logger: log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	queue := fmt.Sprintf("bridge-%d-%d", os.Getpid(), seq.Add(1))
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	m, err := anthropic.New(anthropic.Config{APIKey: "test", BaseURL: srv.URL(), HTTPClient: &http.Client{Transport: tr}, RetryBase: 1, RetryMax: 2})
	if err != nil {
		t.Fatal(err)
	}
	boom := tool.Func(tool.FuncConfig{Name: "Boom", Description: "explodes"}, func(context.Context, *tool.Env, boomIn) (tool.Output, error) {
		panic("kaboom")
	})
	w := agentwf.NewWorker(c, agentwf.WorkerOptions{TaskQueue: queue, Activities: &agentwf.Activities{Model: m, Tools: append(builtin.Tools(builtin.Config{}), boom)}})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	var mu sync.Mutex
	var notes []task.Notification
	x := newBridge(t, queue, func(n task.Notification) { mu.Lock(); notes = append(notes, n); mu.Unlock() })
	dir := t.TempDir()
	return &executortest.Harness{
		Executor: x,
		Model:    srv,
		Request: func(t *testing.T, ch executortest.Child) executor.SpawnRequest {
			return executor.SpawnRequest{
				AgentID: fmt.Sprintf("b%d-%d", os.Getpid(), seq.Add(1)), ParentID: "main", RootID: "session", ToolUseID: ch.ToolUseID, Depth: 1,
				Background: ch.Background, Description: ch.Description,
				Definition: executor.Definition{Name: "general-purpose", SystemPrefix: "You are a sub-agent.", System: "Do the task."},
				Prompt:     ch.Prompt,
				Ceiling:    executor.Ceiling{Tools: []string{"Bash", "Read", "Agent", "Boom"}},
				Model:      executor.Model{ID: "claude-sonnet-4-5"},
				Mode:       permission.ModeBypassPermissions,
				Cwd:        dir,
			}
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
	}, queue
}

// The bridge executor — what the cadre binary runs, with no Temporal code
// of its own — passes the executor conformance suite through a real
// cadre-remote bridge process and a real dev server.
func TestBridgeExecutorConformance(t *testing.T) {
	executortest.Run(t, newHarness)
}

// A bridge that cannot reach its server fails New with the reason.
func TestBridgeToNoServerFails(t *testing.T) {
	_, err := bridge.New(bridge.Config{Bin: bin, Args: []string{"--address", "127.0.0.1:1"}, Env: os.Environ()})
	if err == nil {
		t.Fatal("a bridge to a closed port started")
	}
}

// A launcher whose bridge is gone (the launcher was killed) leaves its
// background agent running; a new launcher attaches to it, hears its end
// once and gets its result.
func TestAttachAfterTheLauncherIsGone(t *testing.T) {
	h, queue := setUp(t)
	released := make(chan struct{})
	entered := make(chan struct{})
	var once sync.Once
	h.Model.ScriptFunc("ATTACH", func(*llmtest.Request) llmtest.Turn {
		once.Do(func() { close(entered) })
		<-released
		return llmtest.Text("finished without its launcher")
	})
	t.Cleanup(func() {
		select {
		case <-released:
		default:
			close(released)
		}
	})
	req := h.Request(t, executortest.Child{Prompt: "ATTACH outlive the launcher", Description: "outlive", Background: true, ToolUseID: "toolu_attach"})
	first := h.Executor.(*bridge.Executor)
	if _, err := first.Start(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	<-entered
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var notes []task.Notification
	second := newBridge(t, queue, func(n task.Notification) { mu.Lock(); notes = append(notes, n); mu.Unlock() })
	hd, err := second.Attach(context.Background(), req)
	if err != nil {
		t.Fatalf("attach: %v", err)
	}
	close(released)
	res, err := hd.Wait(context.Background())
	if err != nil || res.Status != task.Completed || res.Text != "finished without its launcher" {
		t.Fatalf("wait: %v %+v", err, res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(notes) != 1 || notes[0].TaskID != req.AgentID || notes[0].Status != task.Completed {
		t.Fatalf("notifications after attaching: %+v", notes)
	}
	if got := len(h.Model.RequestsFor("ATTACH")); got != 1 {
		t.Fatalf("%d model requests, want 1: the agent ran on, it was not started again", got)
	}
}
