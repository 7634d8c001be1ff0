package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
)

func bgAgentCall(i int) llmtest.Call {
	return llmtest.Call{Name: "Agent", Input: map[string]any{"description": fmt.Sprintf("job %d", i), "prompt": fmt.Sprintf("BGCHILD-%d: go", i),
		"subagent_type": "general-purpose", "run_in_background": true}}
}

// countIn counts s in the text of every message of r.
func countIn(r *llmtest.Request, s string) int {
	n := 0
	for _, m := range r.Messages {
		n += strings.Count(m.Text(), s)
	}
	return n
}

// allText joins the text of every message of r.
func allText(r *llmtest.Request) string {
	var b strings.Builder
	for _, m := range r.Messages {
		b.WriteString(m.Text())
	}
	return b.String()
}

// TestHeadlessWaitsForBackgroundTasks: cadre -p does not exit while
// background children run; the main agent answers their notifications
// and the last answer is the run's result.
func TestHeadlessWaitsForBackgroundTasks(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	s.Script("MAIN", llmtest.ToolUses(bgAgentCall(1), bgAgentCall(2), bgAgentCall(3)))
	s.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
		return llmtest.Text(fmt.Sprintf("heard %d", countIn(r, "<task-notification>")))
	})
	for i := 1; i <= 3; i++ {
		s.Script(fmt.Sprintf("BGCHILD-%d", i), llmtest.ToolUse("Glob", map[string]any{"pattern": "*.none"}), llmtest.Text(fmt.Sprintf("done %d", i)))
	}
	p := runCadre(t, env, "", "-p", "MAIN start three", "--output-format", "stream-json", "--verbose")
	if p.code != 0 {
		t.Fatalf("code %d stderr %s", p.code, p.stderr)
	}
	// S-7.6 in Claude Code's names: task_started with is_backgrounded,
	// task_progress from the task registry, task_notification with the
	// report; every child message keeps parent_tool_use_id and agent_id.
	var inits, results int
	started := map[string]string{} // task id → tool-use id
	progress, notes := map[string]int{}, map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(p.stdout))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		id, _ := ev["task_id"].(string)
		if ev["type"] == "result" {
			results++
		}
		switch ev["subtype"] {
		case "init":
			// Each turn starts with its init, as Claude Code's do.
			if inits != results {
				t.Fatalf("init after %d results: %s", results, p.stdout)
			}
			inits++
		case "task_started":
			if ev["is_backgrounded"] != true {
				t.Fatalf("not backgrounded: %s", sc.Text())
			}
			started[id], _ = ev["tool_use_id"].(string)
		case "task_progress":
			u, _ := ev["usage"].(map[string]any)
			if _, ok := started[id]; !ok || ev["last_tool_name"] != "Glob" || u["tool_uses"] != 1.0 || ev["tool_use_id"] != started[id] {
				t.Fatalf("progress before its start or wrong: %s", sc.Text())
			}
			progress[id]++
		case "task_notification":
			if ev["status"] != "completed" || ev["tool_use_id"] != started[id] {
				t.Fatalf("notification: %s", sc.Text())
			}
			notes[id], _ = ev["summary"].(string)
		}
		if ev["type"] == "assistant" || ev["type"] == "user" {
			if parent, ok := ev["parent_tool_use_id"].(string); ok {
				if aid, _ := ev["agent_id"].(string); started[aid] != parent {
					t.Fatalf("child message without its agent: %s", sc.Text())
				}
			}
		}
	}
	if res := resultOf(t, p.stdout); res["result"] != "heard 3" || inits != results || inits < 2 || len(started) != 3 || len(progress) != 3 || len(notes) != 3 {
		t.Fatalf("result %v, %d inits, %d background starts, progress %v, notifications %v\n%s", res, inits, len(started), progress, notes, p.stdout)
	}
	for id, n := range progress {
		if n != 1 || !strings.HasPrefix(notes[id], "done ") {
			t.Fatalf("task %s: %d progress lines, summary %q", id, n, notes[id])
		}
	}
	reqs := s.RequestsFor("MAIN")
	for i := 1; i <= 3; i++ {
		if n := countIn(reqs[len(reqs)-1], fmt.Sprintf("done %d", i)); n != 1 {
			t.Fatalf("done %d reached the main agent %d times", i, n)
		}
	}
}

// TestResumeAfterCrashReportsInterruptedTasks: a run killed with SIGKILL
// while a background child works; --resume tells the main agent once that
// the task was interrupted.
func TestResumeAfterCrashReportsInterruptedTasks(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	arrived, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	waiting := make(chan struct{})
	taskID := regexp.MustCompile(`<task-id>(a[0-9a-f]{16})</task-id>`)
	s.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
		last := r.Messages[len(r.Messages)-1].Text()
		switch {
		case countIn(r, "finished after resume") > 0:
			return llmtest.Text(fmt.Sprintf("continued: %d", countIn(r, "finished after resume")))
		case strings.Contains(last, "CONTINUE"):
			m := taskID.FindStringSubmatch(allText(r))
			if m == nil {
				return llmtest.Text("no task id to continue")
			}
			return llmtest.ToolUse("SendMessage", map[string]any{"to": m[1], "message": "FINISH-IT now", "summary": "finish"})
		case strings.Contains(last, "RESUMED"):
			return llmtest.Text(fmt.Sprintf("interrupted %d, in total %d", strings.Count(last, "<status>killed</status>"), countIn(r, "<task-notification>")))
		case len(r.Messages) == 1:
			return llmtest.ToolUse("Agent", bgAgentCall(1).Input)
		case r.Messages[len(r.Messages)-1].Content[0].Type == llm.BlockToolResult &&
			strings.Contains(allText(r), "CONTINUE"):
			return llmtest.Text("sent: " + r.Messages[len(r.Messages)-1].Content[0].ResultText())
		default:
			close(waiting)
			return llmtest.Text("waiting for it")
		}
	})
	s.ScriptFunc("BGCHILD-1", func(r *llmtest.Request) llmtest.Turn {
		if strings.Contains(r.LastUserText(), "FINISH-IT") {
			// Continued after the crash, with its first turn read back.
			return llmtest.Text(fmt.Sprintf("finished after resume (%d messages, prompt %q)", len(r.Messages), r.FirstUserText()))
		}
		close(arrived)
		<-release
		return llmtest.Text("too late")
	})
	const id = "5b0c2d4e-1f2a-4b3c-8d4e-5f6a7b8c9d0e"
	cmd, _, _, _ := cadreCmd(t, env, "", "-p", "MAIN go", "--session-id", id)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	<-arrived
	<-waiting
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	once.Do(func() { close(release) })

	for round, want := range []string{"interrupted 1, in total 1", "interrupted 0, in total 1"} {
		again := exec.Command(cmd.Path, "-p", "--resume", id, "RESUMED")
		again.Dir, again.Env = cmd.Dir, cmd.Env
		var out, errb bytes.Buffer
		again.Stdout, again.Stderr = &out, &errb
		if err := again.Run(); err != nil {
			t.Fatalf("round %d: %v\n%s", round, err, errb.String())
		}
		if got := strings.TrimSpace(out.String()); got != want {
			t.Fatalf("round %d: %q, want %q\n%s", round, got, want, errb.String())
		}
	}

	// Continuing the interrupted task with SendMessage finishes it: the
	// run waits for it and answers its one notification.
	again := exec.Command(cmd.Path, "-p", "--resume", id, "CONTINUE it", "--settings", `{"background":"default"}`)
	again.Dir, again.Env = cmd.Dir, cmd.Env
	var out, errb bytes.Buffer
	again.Stdout, again.Stderr = &out, &errb
	if err := again.Run(); err != nil {
		t.Fatalf("continue: %v\n%s", err, errb.String())
	}
	if got := strings.TrimSpace(out.String()); got != "continued: 1" {
		t.Fatalf("continue: %q\n%s", got, errb.String())
	}
	kids := s.RequestsFor("BGCHILD-1")
	last := kids[len(kids)-1]
	contains := func(sub string) {
		if !strings.Contains(last.LastUserText(), sub) {
			t.Fatalf("continued child's last turn %q lacks %q", last.LastUserText(), sub)
		}
	}
	contains("FINISH-IT now")
	contains("BGCHILD-1: go") // its first turn, never answered, read back from its transcript
	if len(last.Messages) != 1 {
		t.Fatalf("continued child sent %d messages", len(last.Messages))
	}
	mains := s.RequestsFor("MAIN")
	if n := countIn(mains[len(mains)-1], "<task-notification>"); n != 2 {
		t.Fatalf("%d notifications in the main conversation, want the interruption and the continuation's end", n)
	}
}

// TestHeadlessReportsEveryDenial: the result of a cadre -p run that waited
// for background tasks lists every call denied during it — the main
// agent's in its first turn, and a background child's (denied because it
// cannot prompt) — each once, not only the last turn's.
func TestHeadlessReportsEveryDenial(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	never := "/tmp/cadre-never-" + filepath.Base(t.TempDir())
	mainAnswered := make(chan struct{})
	s.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
		switch len(r.Messages) {
		case 1:
			return llmtest.ToolUses(llmtest.Call{Name: "Write", Input: map[string]any{"file_path": never + "-main", "content": "x"}}, bgAgentCall(1))
		case 3:
			close(mainAnswered)
			return llmtest.Text("waiting")
		}
		return llmtest.Text("heard it")
	})
	s.ScriptFunc("BGCHILD-1", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			<-mainAnswered // most likely denied after the first turn's result
			return llmtest.ToolUse("Write", map[string]any{"file_path": never + "-child", "content": "x"})
		}
		return llmtest.Text("done 1")
	})
	p := runCadre(t, env, "", "-p", "MAIN go", "--output-format", "json")
	if p.code != 0 {
		t.Fatalf("code %d stderr %s", p.code, p.stderr)
	}
	var out struct {
		Result  string           `json:"result"`
		Denials []map[string]any `json:"permission_denials"`
	}
	if err := json.Unmarshal([]byte(p.stdout), &out); err != nil {
		t.Fatalf("%v: %s", err, p.stdout)
	}
	if out.Result != "heard it" || len(out.Denials) != 2 {
		t.Fatalf("result %q, denials %v", out.Result, out.Denials)
	}
	main, child := out.Denials[0], out.Denials[1]
	if main["tool_name"] != "Write" || main["agent_id"] != nil || main["background"] != nil {
		t.Fatalf("main's denial %v", main)
	}
	if child["tool_name"] != "Write" || child["agent_id"] == nil || child["background"] != true {
		t.Fatalf("the background child's denial %v", child)
	}
}

// TestCrashWithANotificationInFlight: the process dies (SIGKILL) while the
// main agent's request carrying a task notification is in flight, so the
// notification was journaled but never marked delivered; --resume
// delivers it, and the resumed conversation holds it exactly once.
func TestCrashWithANotificationInFlight(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	inflight, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	s.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
		last := r.Messages[len(r.Messages)-1].Text()
		switch {
		case strings.Contains(last, "RESUMED"):
			return llmtest.Text(fmt.Sprintf("heard it %d times", countIn(r, "child finished")))
		case len(r.Messages) == 1:
			return llmtest.ToolUse("Agent", bgAgentCall(1).Input)
		case strings.Contains(last, "child finished"):
			close(inflight)
			<-release // the process is killed meanwhile
			return llmtest.Text("too late")
		}
		return llmtest.Text("waiting for it")
	})
	s.Script("BGCHILD-1", llmtest.Text("child finished"))
	const id = "6c1d3e5f-2a3b-4c4d-9e5f-6a7b8c9d0e1f"
	cmd, _, _, _ := cadreCmd(t, env, "", "-p", "MAIN go", "--session-id", id)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	<-inflight
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	once.Do(func() { close(release) })

	for round := range 2 {
		again := exec.Command(cmd.Path, "-p", "--resume", id, "RESUMED")
		again.Dir, again.Env = cmd.Dir, cmd.Env
		var out, errb bytes.Buffer
		again.Stdout, again.Stderr = &out, &errb
		if err := again.Run(); err != nil {
			t.Fatalf("round %d: %v\n%s", round, err, errb.String())
		}
		if got := strings.TrimSpace(out.String()); got != "heard it 1 times" {
			t.Fatalf("round %d: %q, want the notification once\n%s", round, got, errb.String())
		}
	}
}
