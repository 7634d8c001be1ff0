package remotecmd_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// A remote agent asked for a typed result (the Agent call's
// output_schema) answers through the StructuredOutput tool on the worker,
// is told why its first answer does not match, and its matching JSON
// reaches the launcher's main agent in the notification and the
// stream-json task event.
func TestRemoteAgentTypedResultReachesTheLauncher(t *testing.T) {
	dial(t) // skips without a server
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	queue := unique("typed")
	startWorker(t, queue, srv, "worker-key")
	srv.Script("TYPED-FAR",
		llmtest.ToolUse("StructuredOutput", map[string]any{"files": "many"}),
		llmtest.ToolUse("StructuredOutput", map[string]any{"files": 7}),
		llmtest.Text("never reached"))
	schema := map[string]any{"type": "object", "properties": map[string]any{"files": map[string]any{"type": "integer"}}, "required": []string{"files"}}
	srv.ScriptFunc("LAUNCH", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.ToolUses(llmtest.Call{Name: "Agent", Input: map[string]any{"description": "count", "prompt": "TYPED-FAR count files", "output_schema": schema}})
		}
		return llmtest.Text("LAUNCHER-ANSWER")
	})
	home := launcherHome(t, queue)
	cmd := exec.Command(cadreBin, "-p", "--remote", "--output-format", "stream-json", "--verbose", "LAUNCH a typed agent")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME=", "ANTHROPIC_BASE_URL="+srv.URL(), "ANTHROPIC_API_KEY=launcher-key",
		"CADRE_REMOTE_BIN="+bin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("cadre -p --remote: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	reqs := srv.RequestsFor("TYPED-FAR")
	if len(reqs) != 2 || keyOf(reqs[0]) != "worker-key" {
		t.Fatalf("%d model requests of the typed agent (want 2, on the worker)", len(reqs))
	}
	if told := reqs[1].LastToolResults(); len(told) != 1 || !told[0].IsError || !strings.Contains(told[0].ResultText(), "/files") {
		t.Fatalf("the mismatch was not told with its path: %+v", told)
	}
	notes := notifications(srv, "LAUNCH")
	if len(notes) != 1 || !strings.Contains(notes[0], "<structured-output>\n{\"files\":7}\n</structured-output>") {
		t.Fatalf("the notification: %q", notes)
	}
	var found bool
	for line := range strings.SplitSeq(stdout.String(), "\n") {
		if !strings.Contains(line, "structured_output") {
			continue
		}
		var v map[string]any
		if json.Unmarshal([]byte(line), &v) == nil && strings.Contains(line, `"files":7`) {
			found = true
		}
	}
	if !found {
		t.Fatalf("no stream-json event carries the structured output:\n%s", stdout.String())
	}
}
