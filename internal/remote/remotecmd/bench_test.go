package remotecmd_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/remote/workspace"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/task"
)

// benchRuns is how many agents each figure is taken over.
const benchRuns = 15

// quantiles formats the median and the slowest of ds.
func quantiles(ds []time.Duration) string {
	slices.Sort(ds)
	return fmt.Sprintf("median %s, p90 %s, max %s (n=%d)", ds[len(ds)/2].Round(time.Millisecond),
		ds[len(ds)*9/10].Round(time.Millisecond), ds[len(ds)-1].Round(time.Millisecond), len(ds))
}

// The figures of issue 26's BENCHMARKS.md rows, taken on a real server
// with `cadre-remote worker` processes: remote spawn latency (Start →
// the agent's first model request arriving from a worker), without and
// with a workspace (its checkout on the worker comes first), and the
// recovery time after a worker's kill -9 (the kill → the agent's next
// model request arriving from another worker), for an agent without a
// workspace (the server notices the silent worker after the heartbeat
// timeout) and for one with a workspace (then also --workspace-wait, and
// the tree is restored on another worker). A measurement, run with
// CADRE_REMOTEBENCH=1; that each recovery happens is what
// TestKilledWorkerAgentContinuesElsewhere and
// TestKilledWorkspaceWorkerAgentMovesWithItsTree check.
func TestRemoteBench(t *testing.T) {
	if os.Getenv("CADRE_REMOTEBENCH") != "1" {
		t.Skip("a measurement: CADRE_REMOTEBENCH=1 runs it")
	}
	c := dial(t)
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	queue := unique("bench")
	repo, clones := launcherRepo(t, 3)
	const wait = 2 * time.Second
	ws := []*proc{}
	for i, k := range []string{"key-a", "key-b", "key-c"} {
		ws = append(ws, startWorker(t, queue, srv, k, "--repo", clones[i], "--worker-id", k, "--workspace-wait", wait.String()))
	}
	x := newExecutor(t, c, queue)
	src, err := workspace.Describe(context.Background(), repo)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	arrived := map[string]time.Time{}
	srv.ScriptFunc("SPAWNBENCH", func(r *llmtest.Request) llmtest.Turn {
		mu.Lock()
		if _, ok := arrived[r.FirstUserText()]; !ok {
			arrived[r.FirstUserText()] = r.Arrived
		}
		mu.Unlock()
		return llmtest.Text("spawned")
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for _, withTree := range []bool{false, true} {
		var lat []time.Duration
		for i := range benchRuns {
			prompt := fmt.Sprintf("SPAWNBENCH %v %d", withTree, i)
			req := request(unique("spawn"), t.TempDir(), prompt)
			if withTree {
				req.Workspace = &src
			}
			start := time.Now()
			h, err := x.Start(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			res, err := h.Wait(ctx)
			if err != nil || res.Status != task.Completed {
				t.Fatalf("wait: %v %+v", err, res)
			}
			mu.Lock()
			lat = append(lat, arrived[prompt].Sub(start))
			mu.Unlock()
		}
		t.Logf("remote spawn latency, workspace %v: %s", withTree, quantiles(lat))
	}

	// Recovery: each round holds one agent's second model call on a
	// worker, kills that worker and starts a fresh one in its place.
	keyWorker := map[string]int{"key-a": 0, "key-b": 1, "key-c": 2}
	for _, withTree := range []bool{false, true} {
		var rec []time.Duration
		for i := range 5 {
			entered := make(chan string, 1)
			released := make(chan struct{})
			var next time.Time
			var once sync.Once
			key := fmt.Sprintf("RECBENCH-%v-%d", withTree, i)
			srv.ScriptFunc(key, func(r *llmtest.Request) llmtest.Turn {
				switch len(r.Messages) {
				case 1:
					return bash("echo one >> calls.log")
				case 3:
					held := false
					once.Do(func() { held = true })
					if held {
						entered <- keyOf(r)
						<-released
						return llmtest.Text("lost")
					}
					mu.Lock()
					if next.IsZero() {
						next = r.Arrived
					}
					mu.Unlock()
				}
				return llmtest.Text("recovered")
			})
			req := request(unique("rec"), t.TempDir(), key+" go on")
			if withTree {
				req.Workspace = &src
			}
			h, err := x.Start(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			holder := <-entered
			n := keyWorker[holder]
			ws[n].kill9()
			killed := time.Now()
			close(released)
			res, err := h.Wait(ctx)
			if err != nil || res.Status != task.Completed {
				t.Fatalf("wait: %v %+v", err, res)
			}
			mu.Lock()
			rec = append(rec, next.Sub(killed))
			mu.Unlock()
			ws[n] = startWorker(t, queue, srv, holder, "--repo", clones[n], "--worker-id", fmt.Sprintf("%s-%d", holder, i), "--workspace-wait", wait.String())
		}
		t.Logf("recovery after a worker's kill -9, workspace %v (heartbeat timeout 5s, --workspace-wait %s): %s", withTree, wait, quantiles(rec))
	}
}
