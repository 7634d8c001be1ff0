package engine

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/anthropic"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/task"
)

// TestBackgroundStress starts many background children at once with
// mixed outcomes — completed, failed (an API error), panicked (the model
// client panics under them), nested (a background grandchild of their
// own), with a background shell, stopped (TaskStop), and stopped while a
// background child of their own runs (parent cancel) — and checks, from
// the requests the model server captured, that the main agent hears of
// each exactly once; that no notification arrives before the child's
// subtree and shells ended (a nested child reports its grandchild's
// result; a shell's process is gone from /proc when the main agent reads
// the notification); that the gate and the registry end empty; that no
// process is left (through /proc); and goleak (TestMain).
func TestBackgroundStress(t *testing.T) {
	t.Parallel()
	// The figure is 1,000 children: CADRE_STRESS=1 runs that many
	// (minutes under -race on a busy machine); the suite runs 200.
	n := 200
	switch {
	case os.Getenv("CADRE_STRESS") == "1":
		n = 1000
	case testing.Short():
		n = 100
	}
	h := newHarness(t)
	kinds := []string{"ok", "fail", "nest", "stop", "panic", "shell", "cancel"}
	hold := make(chan struct{})
	release := sync.OnceFunc(func() { close(hold) })
	// A failure before the release must not leave the held requests
	// blocking the model server's Close (cleanups run last first).
	t.Cleanup(release)
	pidDir := t.TempDir()
	// The held children whose request reached the server ("stop i", or
	// "cancel i" once cancel child i's own child is in its request).
	arrived := make(chan string, n)
	var early atomic.Int64 // notifications seen before their shell ended
	var calls []llmtest.Call
	for i := range n {
		k := kinds[i%len(kinds)]
		calls = append(calls, llmtest.Call{Name: "Agent", Input: map[string]any{"description": fmt.Sprintf("%s %d", k, i),
			"prompt": fmt.Sprintf("STRESS-%s-%d: go", k, i), "subagent_type": "general-purpose", "run_in_background": true}})
	}
	h.srv.Script("MAIN", llmtest.ToolUses(calls...))
	h.srv.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
		// A shell child's notification is read only once its shell's
		// process has ended.
		for _, m := range shellNote.FindAllStringSubmatch(r.Messages[len(r.Messages)-1].Text(), -1) {
			if pidAlive(t, filepath.Join(pidDir, m[1])) {
				early.Add(1)
			}
		}
		return llmtest.Text("ok")
	})
	h.srv.ScriptFunc("STRESS", func(r *llmtest.Request) llmtest.Turn {
		var kind string
		var i int
		fmt.Sscanf(strings.Replace(strings.ReplaceAll(r.FirstUserText(), "-", " "), "cancel leaf", "cancel-leaf", 1), "STRESS %s %d", &kind, &i)
		switch kind {
		case "fail":
			return llmtest.HTTPError(400, "invalid request")
		case "stop", "cancel-leaf":
			arrived <- fmt.Sprintf("%s %d", strings.TrimSuffix(kind, "-leaf"), i)
			<-hold
			return llmtest.Text("too late")
		case "cancel":
			if len(r.Messages) == 1 {
				return llmtest.ToolUse("Agent", map[string]any{"description": "cancel-leaf", "prompt": fmt.Sprintf("STRESS-cancel-leaf-%d: go", i),
					"subagent_type": "general-purpose", "run_in_background": true})
			}
			return llmtest.Text("waiting for my child")
		case "shell":
			if len(r.Messages) == 1 {
				return llmtest.ToolUse("Bash", map[string]any{"command": fmt.Sprintf("echo $$ > %s; exec sleep 600", filepath.Join(pidDir, fmt.Sprint(i))),
					"run_in_background": true})
			}
			if res := r.LastToolResults(); len(res) == 0 || res[0].IsError {
				return llmtest.Text("SHELL FAILED")
			}
			// Its shell writes its pid before the child ends (and is killed).
			for !fileHasPid(filepath.Join(pidDir, fmt.Sprint(i))) {
				runtime.Gosched()
			}
			return llmtest.Text(fmt.Sprintf("done %d (shell %d)", i, i))
		case "leaf":
			return llmtest.Text(fmt.Sprintf("leaf %d", i))
		case "nest":
			switch len(r.Messages) {
			case 1:
				return llmtest.ToolUse("Agent", map[string]any{"description": "leaf", "prompt": fmt.Sprintf("STRESS-leaf-%d: go", i),
					"subagent_type": "general-purpose", "run_in_background": true})
			case 3:
				return llmtest.Text("waiting")
			}
			if !strings.Contains(r.LastUserText(), fmt.Sprintf("leaf %d", i)) {
				return llmtest.Text("MISSING LEAF")
			}
		}
		return llmtest.Text(fmt.Sprintf("done %d", i))
	})
	cfg := h.config()
	// Held requests (stop, cancel-leaf) wait until every child has
	// started — minutes for 1,000 under -race — so the client's header
	// timeout must not cut them first.
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	m, err := anthropic.New(anthropic.Config{APIKey: "test", BaseURL: h.srv.URL(), HTTPClient: &http.Client{Transport: tr},
		RetryBase: 1, RetryMax: 2, HeaderTimeout: time.Hour, IdleTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Model = panicky{m}
	cfg.Limits = Limits{MaxRunning: 50, MaxTotal: 10 * n}
	rt := newRuntime(t, cfg)
	evs, res, err := runAll(t, context.Background(), rt, "MAIN go")
	if err != nil || res == nil {
		t.Fatal(err)
	}
	top := map[string]string{} // id → description of the main agent's children
	for _, info := range rt.Tasks() {
		if info.Parent == "main" {
			top[info.ID] = info.Description
		}
	}
	if len(top) != n {
		t.Fatalf("%d children registered, want %d (events %d)", len(top), n, len(evs))
	}
	// A held child is stopped once its request is at the server, a
	// cancel child once its own background child's request is: one at a
	// time, as they arrive, so that the children queued behind the gate's
	// 50 running slots get theirs.
	byDesc := map[string]string{}
	held := 0
	for id, d := range top {
		byDesc[d] = id
		if strings.HasPrefix(d, "stop ") || strings.HasPrefix(d, "cancel ") {
			held++
		}
	}
	for range held {
		if err := rt.Stop(context.Background(), byDesc[<-arrived]); err != nil {
			t.Fatal(err)
		}
	}
	release()
	drainNotifications(t, rt)

	reqs := h.srv.RequestsFor("MAIN")
	last := reqs[len(reqs)-1]
	want := map[string]task.Status{"ok": task.Completed, "fail": task.Failed, "nest": task.Completed, "stop": task.Killed,
		"panic": task.Failed, "shell": task.Completed, "cancel": task.Killed}
	for id, d := range top {
		if got := notesIn(last, id); got != 1 {
			t.Fatalf("%s (%s) notified %d times", id, d, got)
		}
		info, _ := rt.Task(id)
		if info.Status != want[strings.Fields(d)[0]] {
			t.Fatalf("%s (%s) ended %s", id, d, info.Status)
		}
	}
	if strings.Contains(lastTexts(last), "SHELL FAILED") {
		t.Fatal("a background shell did not start")
	}
	if strings.Contains(lastTexts(last), "MISSING LEAF") {
		t.Fatal("a nested child finished before hearing from its own child")
	}
	if n := early.Load(); n != 0 {
		t.Fatalf("%d notifications reached the main agent while their child's shell still ran", n)
	}
	// Every grandchild ended, and none reached the main agent: a nest
	// child's was answered by it, a cancel child's died with it.
	for _, info := range rt.Tasks() {
		if info.Parent == "main" {
			continue
		}
		if notesIn(last, info.ID) != 0 || !info.Status.Terminal() {
			t.Fatalf("grandchild %+v notified %d times", info, notesIn(last, info.ID))
		}
		if strings.HasPrefix(info.Description, "cancel-leaf") && info.Status != task.Killed {
			t.Fatalf("a stopped child's own child %s ended %s", info.ID, info.Status)
		}
	}
	// No process is left: every shell's process is gone.
	shells, _ := filepath.Glob(filepath.Join(pidDir, "*"))
	if len(shells) != n/len(kinds)+btoi(n%len(kinds) > 5) {
		t.Fatalf("%d shells wrote their pid", len(shells))
	}
	for _, f := range shells {
		if pidAlive(t, f) {
			t.Fatalf("shell %s outlived its agent", f)
		}
	}
	if rt.RunningTasks() != 0 || rt.PendingNotifications() {
		t.Fatal("work left behind")
	}
	if c := rt.gate.Counts(); c.Running != 0 || c.Queued != 0 || c.Resuming != 0 {
		t.Fatalf("gate %+v", c)
	}
}

// shellNote finds shell children's notifications in a message.
var shellNote = regexp.MustCompile(`done (\d+) \(shell \d+\)`)

// fileHasPid reports whether path holds a pid yet.
func fileHasPid(path string) bool {
	b, err := os.ReadFile(path)
	return err == nil && strings.HasSuffix(string(b), "\n")
}

// pidAlive reports whether the process whose pid is in path still runs
// (a zombie counts as ended), read through /proc.
func pidAlive(t *testing.T, path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("pid file: %v", err)
		return false
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strings.TrimSpace(string(b)), "stat"))
	if err != nil {
		return false // gone
	}
	// pid (comm) state ...: the state follows the last ')'.
	rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
	return !strings.HasPrefix(strings.TrimSpace(rest), "Z")
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// panicky is a model client that panics on the requests of "panic"
// children: the runtime must turn that into a failed child.
type panicky struct{ llm.Model }

func (p panicky) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	if len(req.Messages) > 0 && strings.HasPrefix(req.Messages[0].Text(), "STRESS-panic-") {
		panic("model client crashed")
	}
	return p.Model.Stream(ctx, req)
}
