package remotecmd_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
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
			for _, part := range strings.Split(b.Text, "<task-notification>")[1:] {
				out = append(out, part)
			}
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
