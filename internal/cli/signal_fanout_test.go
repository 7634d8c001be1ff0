package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/transcript"
)

// SIGINT or SIGTERM in the middle of a sub-agent fan-out: the built
// binary exits with 130 or 143, every killed sub-agent gets its
// task_notification, the result keeps turns, usage, denials, sub-agent
// counts and the transcript path, and the transcript's last entry records
// the cancellation.
func TestSignalMidFanOutKeepsEveryNumber(t *testing.T) {
	for _, c := range []struct {
		name string
		sig  syscall.Signal
		code int
	}{{"SIGINT", syscall.SIGINT, ExitInterrupted}, {"SIGTERM", syscall.SIGTERM, ExitTerminated}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s, env := server(t)
			inflight := make(chan struct{}, 2)
			agent := func(prompt string) llmtest.Call {
				return llmtest.Call{Name: "Agent", Input: map[string]any{"description": "part", "prompt": prompt, "subagent_type": "general-purpose"}}
			}
			s.Script("FANOUT",
				// Asked in default mode with nobody to ask: denied.
				llmtest.ToolUse("Write", map[string]any{"file_path": "/tmp/cadre-never-written", "content": "x"}),
				llmtest.ToolUses(agent("SLOW-A: wait"), agent("SLOW-B: wait"), agent("QUICK: answer")),
				llmtest.Text("never"))
			s.Script("QUICK", llmtest.Text("quick answer"))
			for _, key := range []string{"SLOW-A", "SLOW-B"} {
				s.ScriptFunc(key, func(*llmtest.Request) llmtest.Turn {
					inflight <- struct{}{}
					return llmtest.Text("too late").WithDelay(10 * time.Minute)
				})
			}
			cmd, _, errb, home := cadreCmd(t, env, "", "-p", "FANOUT: split the work", "--output-format", "stream-json", "--verbose")
			cmd.Stdout = nil
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			sc := bufio.NewScanner(stdout)
			sc.Buffer(make([]byte, 1<<20), 16<<20)
			var lines []map[string]any
			signalled := false
			for sc.Scan() {
				var m map[string]any
				if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
					t.Fatalf("line %q: %v", sc.Text(), err)
				}
				lines = append(lines, m)
				if !signalled && m["subtype"] == "task_notification" && m["status"] == "completed" {
					// The quick child is done; signal once both slow ones
					// have their request in flight.
					<-inflight
					<-inflight
					if err := cmd.Process.Signal(c.sig); err != nil {
						t.Fatal(err)
					}
					signalled = true
				}
			}
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				ee, ok := err.(*exec.ExitError)
				if !ok || ee.ExitCode() != c.code {
					t.Fatalf("exit %v, want %d; stderr %s", err, c.code, errb)
				}
			case <-time.After(time.Minute):
				_ = cmd.Process.Kill()
				t.Fatal("cadre did not exit after the signal")
			}
			if !signalled {
				t.Fatalf("the fan-out never got going: %v\nstderr %s", lines, errb)
			}
			stopped := 0
			var res map[string]any
			for _, m := range lines {
				if m["subtype"] == "task_notification" && m["status"] == "stopped" {
					stopped++
				}
				if m["type"] == "result" {
					res = m
				}
			}
			if stopped != 2 {
				t.Fatalf("%d stopped task_notifications, want 2", stopped)
			}
			if res == nil || lines[len(lines)-1]["type"] != "result" {
				t.Fatal("no result last")
			}
			stats := res["subagent_stats"].(map[string]any)
			killed := stats["killed"].(map[string]any)
			denials, _ := res["permission_denials"].([]any)
			usage := res["usage"].(map[string]any)
			extra := res["cadre"].(map[string]any)
			if res["is_error"] != true || res["terminal_reason"] != "aborted_streaming" || res["num_turns"] != float64(2) ||
				usage["output_tokens"] == float64(0) || len(denials) != 1 || stats["spawned"] != float64(3) ||
				stats["completed"] != float64(1) || killed["user"] != float64(2) || extra["transcript_path"] == nil {
				t.Fatalf("result lost numbers: %v", res)
			}
			if cost, _ := res["total_cost_usd"].(float64); cost <= 0 {
				t.Fatalf("cost %v", res["total_cost_usd"])
			}
			// The whole run's usage counts the child that finished: more
			// than the main agent's own.
			mu, _ := res["modelUsage"].(map[string]any)["claude-sonnet-4-5"].(map[string]any)
			if d, _ := res["duration_ms"].(float64); d <= 0 || mu == nil || mu["outputTokens"].(float64) <= usage["output_tokens"].(float64) {
				t.Fatalf("duration %v, modelUsage %v, main usage %v", res["duration_ms"], res["modelUsage"], usage)
			}
			path := extra["transcript_path"].(string)
			if rel, err := filepath.Rel(filepath.Join(home, "state"), path); err != nil || filepath.IsAbs(rel) || rel[:2] == ".." {
				t.Fatalf("transcript %s outside the state dir", path)
			}
			if _, err := os.Stat(path); err != nil {
				t.Fatal(err)
			}
			entries, err := transcript.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			end := transcript.LastRunEnd(entries)
			if end == nil || !end.Cancelled || end.NumTurns != 2 || end.Subagents.Killed != 2 || end.Subagents.Completed != 1 {
				t.Fatalf("run_end %+v", end)
			}
		})
	}
}
