package remotecmd_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/task"
)

// launcherHome writes the user's settings pointing remote.temporal at
// queue and returns the home directory.
func launcherHome(t *testing.T, queue string) string {
	t.Helper()
	home := t.TempDir()
	settings := `{"remote": {"temporal": {"address": "` + server.Address + `", "namespace": "` + server.Namespace + `", "taskQueue": "` + queue + `"}}}`
	if err := os.MkdirAll(filepath.Join(home, ".config", "cadre"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".config", "cadre", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	return home
}

// notifications are the task notifications the main agent read in its
// last request to srv under key.
func notifications(srv *llmtest.Server, key string) []string {
	reqs := srv.RequestsFor(key)
	last := reqs[len(reqs)-1]
	var out []string
	for _, m := range last.Messages {
		for _, b := range m.Content {
			if b.Type != llm.BlockText {
				continue
			}
			out = append(out, strings.Split(b.Text, "<task-notification>")[1:]...)
		}
	}
	return out
}

// A remote agent is held to its budget on the worker: its definition's
// reservation (usd 1, 3 turns, under the session's usd 10) travels in
// the spawn request; the one that never stops is stopped at its third
// answer (its third tool call is not made) with budget_exhausted and a
// partial report, the one that answers at once spends one turn and what
// it did not spend of its usd 1 goes back to the session — each
// notification says what was spent against what.
func TestRemoteAgentHeldToItsBudget(t *testing.T) {
	dial(t) // skips without a server
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	queue := unique("budget")
	startWorker(t, queue, srv, "worker-key")
	srv.ScriptFunc("SPEND-A", func(r *llmtest.Request) llmtest.Turn {
		return llmtest.ToolUses(llmtest.Call{Name: "Bash", Input: map[string]any{"command": "echo a"}})
	})
	srv.Script("SPEND-B", llmtest.Text("B is done at once"))
	srv.ScriptFunc("LAUNCH", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.ToolUses(
				llmtest.Call{Name: "Agent", Input: map[string]any{"description": "a", "prompt": "SPEND-A go", "subagent_type": "spender"}},
				llmtest.Call{Name: "Agent", Input: map[string]any{"description": "b", "prompt": "SPEND-B go", "subagent_type": "spender"}})
		}
		return llmtest.Text("LAUNCHER-ANSWER")
	})
	home := launcherHome(t, queue)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".claude", "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	def := "---\nname: spender\ndescription: spends its budget\nbudget:\n  usd: 1\n  turns: 3\n---\nDo the task.\n"
	if err := os.WriteFile(filepath.Join(dir, ".claude", "agents", "spender.md"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cadreBin, "-p", "--remote", "--max-budget-usd", "10", "LAUNCH two agents")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME=", "ANTHROPIC_BASE_URL="+srv.URL(), "ANTHROPIC_API_KEY=launcher-key",
		"CADRE_REMOTE_BIN="+bin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("cadre -p --remote: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	if got := len(srv.RequestsFor("SPEND-A")); got != 3 {
		t.Fatalf("the agent without end made %d model requests on the worker, want its 3 turns", got)
	}
	if keyOf(srv.RequestsFor("SPEND-A")[0]) != "worker-key" {
		t.Fatal("SPEND-A did not run on the worker")
	}
	notes := notifications(srv, "LAUNCH")
	if len(notes) != 2 {
		t.Fatalf("%d notifications: %q", len(notes), notes)
	}
	var a, b string
	for _, n := range notes {
		switch {
		case strings.Contains(n, "B is done at once"):
			b = n
		default:
			a = n
		}
	}
	if !strings.Contains(a, "budget_exhausted") || !strings.Contains(a, "3 turns of 3") || !strings.Contains(a, "partial report") {
		t.Fatalf("the exhausted agent's notification: %s", a)
	}
	if !strings.Contains(b, "1 turns of 3") || !strings.Contains(b, "returned to the parent usd 0.9") {
		t.Fatalf("the quick agent's notification: %s", b)
	}
}

// A remote agent's wall time is a deadline on the worker: the tool call
// it is in when the time runs out (a sleep far longer than the budget) is
// cancelled and its process killed, and the agent ends budget_exhausted,
// saying its wall-time budget ran out, with what it was doing.
func TestRemoteAgentWallTimeIsADeadline(t *testing.T) {
	c := dial(t)
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	queue := unique("wall")
	dir := t.TempDir()
	srv.Script("WALL", bash("echo $$ > bash.pid; sleep 300 && echo finished > late.txt"), llmtest.Text("never reached"))
	startWorker(t, queue, srv, "test")
	x := newExecutor(t, c, queue)
	req := request(unique("agent"), dir, "WALL sleep long")
	req.Budget = executor.Budget{WallTime: 3 * time.Second}
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
	if res.Status != task.BudgetExhausted || !strings.Contains(res.Text, "wall-time") || !strings.Contains(res.Text, "Bash") {
		t.Fatalf("status %s, text %q, error %q", res.Status, res.Text, res.Error)
	}
	if _, err := os.Stat(filepath.Join(dir, "late.txt")); err == nil {
		t.Fatal("the call ran to its end past the deadline")
	}
	// The call had ended when the agent did (its workflow waits for its
	// cancelled calls): the shell is gone.
	pid, err := os.ReadFile(filepath.Join(dir, "bash.pid"))
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.ReadFile("/proc/" + strings.TrimSpace(string(pid)) + "/stat"); err == nil && !strings.Contains(string(st), ") Z ") {
		t.Fatalf("the cancelled call's shell still runs: %s", st)
	}
	if got := len(srv.RequestsFor("WALL")); got != 1 {
		t.Fatalf("%d model requests after the deadline, want none (1 in all)", got)
	}
}

// A remote agent's reservation survives its worker: it is in the
// workflow's input and its spend is recomputed from the recorded answers,
// so after a kill -9 mid-run the agent continues on another worker and
// stops at its 4th turn in all (the answer in flight at the kill is asked
// again and counted once), not 4 more.
func TestRemoteBudgetSurvivesAKilledWorker(t *testing.T) {
	c := dial(t)
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	queue := unique("budgetkill")
	dir := t.TempDir()
	entered, released := make(chan struct{}), make(chan struct{})
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(released) }) }
	t.Cleanup(release)
	var n atomic.Int32
	srv.ScriptFunc("KEEPGOING", func(*llmtest.Request) llmtest.Turn {
		if n.Add(1) == 2 { // on the worker about to be killed
			close(entered)
			<-released
		}
		return bash("echo call >> calls.log")
	})
	a := startWorker(t, queue, srv, "test")
	x := newExecutor(t, c, queue)
	req := request(unique("agent"), dir, "KEEPGOING until stopped")
	req.Budget = executor.Budget{Turns: 4}
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
	if res.Status != task.BudgetExhausted || res.Turns != 4 || res.Budget == nil || res.Budget.Spent.Turns != 4 {
		t.Fatalf("status %s, %d turns, spend %+v, error %q", res.Status, res.Turns, res.Budget, res.Error)
	}
	if got := len(srv.RequestsFor("KEEPGOING")); got != 5 {
		t.Fatalf("%d model requests, want 5 (4 turns, the one in flight at the kill made twice)", got)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "calls.log"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(raw), "call"); got != 3 {
		t.Fatalf("%d calls made, want 3 (the 4th answer's call is not made)", got)
	}
}
