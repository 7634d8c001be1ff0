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

// The README's set-up, end to end: a dev server, two `cadre-remote
// worker` processes, and `cadre -p --remote` with remote.temporal in the
// user's settings. The launcher's sub-agents run on the workers (their
// model gets the children's prompts); the main agent hears of each once,
// and the run ends with its answer.
func TestCadreRemoteFlagRunsSubagentsOnWorkers(t *testing.T) {
	dial(t) // skips without a server
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	queue := unique("launcher")
	startWorker(t, queue, srv, "worker-key")
	startWorker(t, queue, srv, "worker-key")
	srv.Script("FAR-A", llmtest.Text("FAR-A is done"))
	srv.Script("FAR-B", llmtest.Text("FAR-B is done"))
	srv.ScriptFunc("LAUNCH", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.ToolUses(
				llmtest.Call{Name: "Agent", Input: map[string]any{"description": "a", "prompt": "FAR-A look"}},
				llmtest.Call{Name: "Agent", Input: map[string]any{"description": "b", "prompt": "FAR-B look"}})
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
	cmd := exec.Command(cadreBin, "-p", "--remote", "LAUNCH two agents")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME=", "ANTHROPIC_BASE_URL="+srv.URL(), "ANTHROPIC_API_KEY=launcher-key",
		"CADRE_REMOTE_BIN="+bin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("cadre -p --remote: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "LAUNCHER-ANSWER") {
		t.Fatalf("stdout %q", stdout.String())
	}
	for _, key := range []string{"FAR-A", "FAR-B"} {
		reqs := srv.RequestsFor(key)
		if len(reqs) != 1 {
			t.Fatalf("%s reached the model %d times", key, len(reqs))
		}
		// The workers' key, not the launcher's: it ran on a worker.
		if got := keyOf(reqs[0]); got != "worker-key" {
			t.Fatalf("%s's model request came with key %q, not a worker's", key, got)
		}
	}
	if got := keyOf(srv.RequestsFor("LAUNCH")[0]); got != "launcher-key" {
		t.Fatalf("the launcher's request came with key %q", got)
	}
	reqs := srv.RequestsFor("LAUNCH")
	last := reqs[len(reqs)-1]
	var notes int
	var text string
	for _, m := range last.Messages {
		for _, b := range m.Content {
			if b.Type == llm.BlockText {
				notes += strings.Count(b.Text, "<task-notification>")
				text += b.Text
			}
		}
	}
	if notes != 2 || !strings.Contains(text, "FAR-A is done") || !strings.Contains(text, "FAR-B is done") {
		t.Fatalf("the main agent read %d notifications: %s", notes, text)
	}
}

// keyOf is the provider key a model request came with.
func keyOf(r *llmtest.Request) string {
	if k := r.Header.Get("X-Api-Key"); k != "" {
		return k
	}
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}
