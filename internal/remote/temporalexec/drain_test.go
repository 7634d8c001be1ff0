package temporalexec

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/engine"
	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/anthropic"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
)

// The drain harness (issue 26 point 6): a launcher — the engine, every
// sub-agent remote (--remote), the spawn gate's running cap at 20 — starts
// N no-op agents in one turn; three workers on the real dev server run
// them. All complete, each notified once; the launcher never has more
// than the cap out at once; and the harness reports throughput (agents/s)
// and remote spawn latency (the executor's Start → the agent's first
// model request on a worker). N is CADRE_DRAIN_AGENTS, 30 by default (the
// issue's 1,000 is a benchmark run: CADRE_DRAIN_AGENTS=1000).
func TestDrainQueuedRemoteAgentsThroughThreeWorkers(t *testing.T) {
	n := 30
	if v := os.Getenv("CADRE_DRAIN_AGENTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 || n > engine.DefaultMaxTotal {
			t.Fatalf("CADRE_DRAIN_AGENTS=%q: want 1 to %d", v, engine.DefaultMaxTotal)
		}
	}
	const capRunning = 20
	c := dial(t)
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	q := queue(t)
	for range 3 {
		workerFor(t, dial(t), q, srv)
	}
	firstCall := &callTimes{at: map[string]time.Time{}}
	srv.ScriptFunc("NOOP", func(r *llmtest.Request) llmtest.Turn {
		firstCall.mark(promptOf(r), time.Now())
		return llmtest.Text("done")
	})
	srv.ScriptFunc("DRAIN-MAIN", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) > 1 {
			return llmtest.Text("noted")
		}
		calls := make([]llmtest.Call, n)
		for i := range calls {
			calls[i] = llmtest.Call{Name: "Agent", Input: map[string]any{"description": fmt.Sprintf("noop %d", i), "prompt": fmt.Sprintf("NOOP %d: reply done", i)}}
		}
		return llmtest.ToolUses(calls...)
	})
	x, err := New(Config{Client: c, TaskQueue: q})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x.Close)
	counted := &countingExecutor{x: x, started: map[string]time.Time{}}

	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	m, err := anthropic.New(anthropic.Config{APIKey: "test", BaseURL: srv.URL(), HTTPClient: &http.Client{Transport: tr}, RetryBase: 1, RetryMax: 2})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := engine.New(engine.Config{Model: m, ModelID: "claude-sonnet-4-5", Cwd: t.TempDir(), StateDir: t.TempDir(),
		Permissions: engine.AllowAll(), Limits: engine.Limits{MaxRunning: capRunning},
		Remote: engine.Remote{Executor: counted, All: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close() })

	start := time.Now()
	drain(t, rt.Run(context.Background(), "DRAIN-MAIN go"))
	for rt.RunningTasks() > 0 || rt.PendingNotifications() {
		drain(t, rt.RunNotifications(context.Background()))
	}
	wall := time.Since(start)

	tasks := rt.Tasks()
	if len(tasks) != n {
		t.Fatalf("%d tasks, want %d", len(tasks), n)
	}
	for _, info := range tasks {
		if info.Status != task.Completed {
			t.Fatalf("task %s ended %s", info.ID, info.Status)
		}
	}
	var notified int
	for _, r := range srv.RequestsFor("DRAIN-MAIN") {
		notified = 0
		for _, msg := range r.Messages {
			for _, b := range msg.Content {
				if b.Type == llm.BlockText {
					notified += strings.Count(b.Text, "<task-notification>")
				}
			}
		}
	}
	if notified != n {
		t.Fatalf("the main agent read %d notifications, want %d (one per agent)", notified, n)
	}
	if peak := counted.peakOut(); peak > capRunning || peak == 0 {
		t.Fatalf("%d remote agents out at once, cap %d", peak, capRunning)
	}
	lat := spawnLatencies(counted, firstCall)
	if len(lat) != n {
		t.Fatalf("%d spawn latencies for %d agents", len(lat), n)
	}
	slices.Sort(lat)
	t.Logf("drain: %d remote no-op agents, 3 workers, cap %d: %.2fs wall, %.1f agents/s; spawn latency (Start -> first model request) p50 %v p95 %v max %v; peak out %d",
		n, capRunning, wall.Seconds(), float64(n)/wall.Seconds(), lat[len(lat)/2], lat[len(lat)*95/100], lat[len(lat)-1], counted.peakOut())
}

func drain(t *testing.T, evs iter.Seq2[run.Event, error]) {
	t.Helper()
	for _, err := range evs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// promptOf is the first user message's text of a request: the agent's
// prompt.
func promptOf(r *llmtest.Request) string {
	for _, msg := range r.Messages {
		if msg.Role == llm.RoleUser {
			return msg.Text()
		}
	}
	return ""
}

// callTimes keeps the first time each prompt reached the model.
type callTimes struct {
	mu sync.Mutex
	at map[string]time.Time
}

func (c *callTimes) mark(prompt string, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.at[prompt]; !ok {
		c.at[prompt] = at
	}
}

// spawnLatencies pairs each Start with its agent's first model request.
func spawnLatencies(x *countingExecutor, first *callTimes) []time.Duration {
	x.mu.Lock()
	defer x.mu.Unlock()
	first.mu.Lock()
	defer first.mu.Unlock()
	var out []time.Duration
	for prompt, at := range x.started {
		for p, f := range first.at {
			if strings.Contains(p, prompt) {
				out = append(out, f.Sub(at))
				break
			}
		}
	}
	return out
}

// countingExecutor counts the remote agents out (started, result not yet
// taken) and when each was started.
type countingExecutor struct {
	x *Executor

	mu      sync.Mutex
	out     int
	peak    int
	started map[string]time.Time // by prompt
}

func (c *countingExecutor) Start(ctx context.Context, req executor.SpawnRequest) (executor.Handle, error) {
	c.mu.Lock()
	c.out++
	c.peak = max(c.peak, c.out)
	c.started[req.Prompt] = time.Now()
	c.mu.Unlock()
	h, err := c.x.Start(ctx, req)
	if err != nil {
		c.done()
		return nil, err
	}
	return &countedHandle{Handle: h, c: c}, nil
}

func (c *countingExecutor) done() {
	c.mu.Lock()
	c.out--
	c.mu.Unlock()
}

func (c *countingExecutor) peakOut() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.peak
}

// countedHandle gives its agent's place back once its result is taken.
type countedHandle struct {
	executor.Handle
	c    *countingExecutor
	once sync.Once
}

func (h *countedHandle) Wait(ctx context.Context) (*run.SubagentResult, error) {
	res, err := h.Handle.Wait(ctx)
	h.once.Do(h.c.done)
	return res, err
}
