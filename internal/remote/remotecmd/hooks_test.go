package remotecmd_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/task"
)

// A worker runs its own hooks (--settings), never the launcher's: its
// PreToolUse hook on Bash blocks the remote agent's call (the command
// does not run, the model reads the hook's reason), and the hook the
// launcher's definition carries does not run on the worker.
func TestWorkerHookBlocksARemoteAgentsCall(t *testing.T) {
	c := dial(t)
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	queue := unique("hooks")
	dir := t.TempDir()
	settings := filepath.Join(t.TempDir(), "worker-settings.json")
	hook := map[string]any{"hooks": map[string]any{"PreToolUse": []any{map[string]any{"matcher": "Bash",
		"hooks": []any{map[string]any{"type": "command", "command": "echo 'WORKER-POLICY: no shell here' >&2; exit 2"}}}}}}
	raw, _ := json.Marshal(hook)
	if err := os.WriteFile(settings, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	startWorker(t, queue, srv, "test", "--settings", settings)
	srv.Script("HOOKED", bash("touch ran.txt"), llmtest.Text("could not run it"))
	x := newExecutor(t, c, queue)
	req := request(unique("agent"), dir, "HOOKED try the shell")
	// The launcher's definition hooks are its own code: they stay there.
	req.Definition.Hooks = json.RawMessage(`{"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "touch ` + filepath.Join(dir, "launcher-hook-ran") + `"}]}]}`)
	req.Definition.HooksFrom = "/launcher/agents/x.md"
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
	if res.Status != task.Completed || res.Text != "could not run it" {
		t.Fatalf("status %s, text %q, error %q", res.Status, res.Text, res.Error)
	}
	for _, f := range []string{"ran.txt", "launcher-hook-ran"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Fatalf("%s exists: the blocked call or the launcher's hook ran", f)
		}
	}
	reqs := srv.RequestsFor("HOOKED")
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	told := reqs[1].LastToolResults()
	if len(told) != 1 || !told[0].IsError || !strings.Contains(told[0].ResultText(), "WORKER-POLICY: no shell here") {
		t.Fatalf("the model did not read the worker hook's reason: %+v", told)
	}
}
