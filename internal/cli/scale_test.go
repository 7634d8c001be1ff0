package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// fdCount is how many descriptors process pid has open.
func fdCount(pid int) int {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return 0
	}
	return len(ents)
}

// TestManyBackgroundAgentsUnderLowDescriptorLimit: a thousand background
// agents (300 under -race), four running at once, under `ulimit -n 256`
// (CADRE_TEST_FDLIMIT sets another limit: at 16 the main agent's own
// transcript cannot be opened and the run fails, and every task is still
// reported once). Every one
// completes or fails visibly, each is notified exactly once, the result
// counts them all, and the descriptors cadre holds stay bounded by the
// running cap, not the total.
func TestManyBackgroundAgentsUnderLowDescriptorLimit(t *testing.T) {
	t.Parallel()
	total, running := 1000, 4
	if raceEnabled {
		total = 300 // the same shape, in the time a race run allows
	}
	s, env := server(t)
	calls := make([]llmtest.Call, total)
	for i := range calls {
		calls[i] = bgAgentCall(i + 1)
	}
	s.Script("MAIN", llmtest.ToolUses(calls...))
	s.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn { return llmtest.Text("noted") })
	for i := 1; i <= total; i++ {
		s.Script(fmt.Sprintf("BGCHILD-%d:", i), llmtest.Text(fmt.Sprintf("done %d", i)))
	}
	cmd, out, errb, _ := cadreCmd(t, env, "", "-p", "MAIN start many", "--output-format", "stream-json", "--verbose",
		"--settings", fmt.Sprintf(`{"maxConcurrentAgents":%d,"maxTotalAgents":%d}`, running, total))
	if v := os.Getenv("CADRE_TEST_FDLIMIT"); v != "" {
		cmd.Env = append(cmd.Env, "FDLIMIT="+v)
	}
	cmd.Args = append([]string{"bash", "-c", `ulimit -n ${FDLIMIT:-256} && exec "$0" "$@"`, cmd.Path}, cmd.Args[1:]...)
	cmd.Path = "/bin/bash"
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	peak := 0
	var err error
wait:
	for {
		select {
		case err = <-exited:
			break wait
		default:
			peak = max(peak, fdCount(cmd.Process.Pid))
			syscall.Nanosleep(&syscall.Timespec{Nsec: 1e6}, nil) // a sample a millisecond
		}
	}
	if _, exitErr := err.(*exec.ExitError); err != nil && !exitErr {
		t.Fatalf("%v\nstderr %s", err, errb)
	}
	started, notified, stopped := map[string]bool{}, map[string]int{}, map[string]bool{}
	var result map[string]any
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %.200q: %v", sc.Text(), err)
		}
		id, _ := ev["task_id"].(string)
		switch {
		case ev["subtype"] == "task_started":
			started[id] = true
		case ev["subtype"] == "task_notification":
			notified[id]++
			stopped[id] = ev["status"] == "stopped"
			if st := ev["status"]; st != "completed" && st != "failed" && st != "stopped" {
				t.Errorf("task %s ended %v", id, st)
			}
		case ev["type"] == "result":
			result = ev
		}
	}
	if result == nil {
		t.Fatalf("no result (%v)\nstderr %s\n%.3000s", err, errb, out)
	}
	if (err != nil) != (result["is_error"] == true) {
		t.Fatalf("exit %v with result %v", err, result["subtype"])
	}
	// Every task spawned is heard of exactly once: it completed or failed
	// (a write it could not make fails it), or — only when the run itself
	// failed — it was stopped before the result, queued ones unstarted.
	if len(notified) != total {
		t.Fatalf("%d started, %d notified of %d; result %v %v\nstderr %s", len(started), len(notified), total, result["subtype"], result["result"], errb)
	}
	for id := range started {
		if notified[id] != 1 {
			var lines []string
			for _, l := range strings.Split(out.String(), "\n") {
				if strings.Contains(l, id) && strings.Contains(l, "task_") {
					lines = append(lines, l[:min(len(l), 400)])
				}
			}
			t.Fatalf("task %s started, notified %d times:\n%s", id, notified[id], strings.Join(lines, "\n"))
		}
	}
	for id, n := range notified {
		if n != 1 || (!started[id] && !stopped[id]) || (stopped[id] && result["is_error"] != true) {
			t.Fatalf("task %s notified %d times (started %v, stopped %v, run failed %v)", id, n, started[id], stopped[id], result["is_error"])
		}
	}
	// The run's counts (over all its turns) hold every task.
	stats, _ := result["subagent_stats"].(map[string]any)
	if stats == nil {
		t.Fatalf("no subagent_stats in %v", result)
	}
	ended := stats["completed"].(float64) + stats["failed"].(float64)
	for _, n := range stats["killed"].(map[string]any) {
		ended += n.(float64)
	}
	if ended != float64(total) || stats["spawned"].(float64) != float64(len(started)) {
		t.Fatalf("result stats %v (%d started)", stats, len(started))
	}
	// The process's own descriptors (runtime, stdio, listeners, the task
	// journal, at most 16 open transcripts) plus a few per running agent.
	if bound := 48 + 6*running; peak > bound {
		t.Fatalf("peak of %d descriptors, bound %d", peak, bound)
	}
	t.Logf("peak %d descriptors, result %v, stats %v", peak, result["subtype"], stats)
}

// TestFailedRunReportsItsLiveTasks: a print run whose main agent fails
// while background tasks run or wait for a slot stops them and reports
// each once (task_notification, stopped) before its result, which counts
// them: no task is started and never heard of again.
func TestFailedRunReportsItsLiveTasks(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	s.Script("MAIN", llmtest.ToolUses(bgAgentCall(1), bgAgentCall(2), bgAgentCall(3)), llmtest.HTTPError(400, "bad request"))
	for i := 1; i <= 3; i++ {
		s.Script(fmt.Sprintf("BGCHILD-%d:", i), llmtest.ToolUse("Bash", map[string]any{"command": "sleep 600"}), llmtest.Text("done"))
	}
	p := runCadre(t, env, "", "-p", "MAIN go", "--output-format", "stream-json", "--verbose", "--permission-mode", "bypassPermissions",
		"--settings", `{"maxConcurrentAgents":1}`)
	if p.code == 0 {
		t.Fatalf("the run succeeded:\n%s", p.stdout)
	}
	started, notified := map[string]bool{}, map[string]int{}
	var result map[string]any
	sc := bufio.NewScanner(strings.NewReader(p.stdout))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %.200q: %v", sc.Text(), err)
		}
		id, _ := ev["task_id"].(string)
		switch {
		case ev["subtype"] == "task_started":
			started[id] = true
		case ev["subtype"] == "task_notification":
			if result != nil {
				t.Fatalf("notification after the result: %s", sc.Text())
			}
			notified[id]++
		case ev["type"] == "result":
			result = ev
		}
	}
	if len(started) == 0 || result == nil {
		t.Fatalf("started %v, result %v\n%s", started, result, p.stdout)
	}
	for id := range started {
		if notified[id] != 1 {
			t.Fatalf("task %s notified %d times\n%s", id, notified[id], p.stdout)
		}
	}
	sub := result["cadre"].(map[string]any)["subagents"].(map[string]any)
	if sub["spawned"] != 3.0 || sub["completed"].(float64)+sub["failed"].(float64)+sub["killed"].(float64) != 3 {
		t.Fatalf("counts %v", sub)
	}
}
