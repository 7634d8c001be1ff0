package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// SIGTERM ends a run with exit 143 and a result that keeps the numbers
// seen so far.
func TestSIGTERMExits143WithAResult(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	s.Script("", llmtest.ToolUse("Bash", map[string]any{"command": "sleep 30"}), llmtest.Text("never"))
	cmd, out, errb, home := cadreCmd(t, env, "", "-p", "sleep a while", "--dangerously-skip-permissions", "--output-format", "json")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	transcriptText := func() string {
		files, _ := filepath.Glob(filepath.Join(home, "state", "cadre", "projects", "*", "*.jsonl"))
		if len(files) != 1 {
			return ""
		}
		b, _ := os.ReadFile(files[0])
		return string(b)
	}
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(transcriptText(), `"tool_use"`) {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatal("the tool call never reached the transcript")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != ExitTerminated {
			t.Fatalf("exit %v stderr %s", err, errb)
		}
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatal("cadre did not exit after SIGTERM")
	}
	res := resultOf(t, out.String())
	if res["num_turns"] != float64(1) || res["terminal_reason"] != "aborted_streaming" || res["is_error"] != true {
		t.Fatalf("result %v", res)
	}
	if u := res["usage"].(map[string]any); u["output_tokens"] == float64(0) {
		t.Fatalf("usage lost: %v", u)
	}
}
