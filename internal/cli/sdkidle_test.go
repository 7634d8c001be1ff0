package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// sdkUser is one user message of the SDK's stream-json input.
func sdkUser(text string) string {
	b, _ := json.Marshal(map[string]any{"type": "user", "session_id": "", "parent_tool_use_id": nil,
		"message": map[string]any{"role": "user", "content": text}})
	return string(b) + "\n"
}

// sdkLines reads stdout line by line and hands each decoded line to
// the channel; it closes it at the end of the output.
func sdkLines(t *testing.T, r io.Reader) <-chan map[string]any {
	t.Helper()
	out := make(chan map[string]any, 256)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = map[string]any{"type": "unparsable", "line": sc.Text()}
			}
			out <- m
		}
	}()
	return out
}

// kindOf names a line as type/subtype.
func kindOf(m map[string]any) string {
	k, _ := m["type"].(string)
	if st, ok := m["subtype"].(string); ok {
		k += "/" + st
	}
	if st, ok := m["state"].(string); ok {
		k += ":" + st
	}
	return k
}

// In an SDK session (--input-format stream-json) a background child goes
// on after the turn that started it has written its result; a message
// the program sends meanwhile is answered at once; when the child ends,
// the main agent runs on its notification and its answer streams without
// any new message; the session stays "running" until then, says "idle"
// after, and ends when stdin closes.
func TestSDKSessionRunsNotificationsWhileIdle(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	s.ScriptFunc("SDKBG", func(r *llmtest.Request) llmtest.Turn {
		last := r.Messages[len(r.Messages)-1].Text()
		switch {
		case len(r.Messages) == 1:
			return llmtest.ToolUses(bgAgentCall(1))
		case strings.Contains(last, "<task-notification>"):
			return llmtest.Text(fmt.Sprintf("heard %d", countIn(r, "<task-notification>")))
		case strings.Contains(last, "SECOND"):
			return llmtest.Text("second answer")
		default:
			return llmtest.Text("started it")
		}
	})
	s.ScriptFunc("BGCHILD-1", func(*llmtest.Request) llmtest.Turn {
		<-release
		return llmtest.Text("done 1")
	})
	cmd, _, errb, _ := cadreCmd(t, env, "", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose")
	cmd.Stdin, cmd.Stdout = nil, nil
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := sdkLines(t, stdout)
	var kinds []string
	// untilResult collects lines up to the next result and returns it.
	untilResult := func() map[string]any {
		t.Helper()
		for m := range lines {
			kinds = append(kinds, kindOf(m))
			if m["type"] == "result" {
				return m
			}
		}
		t.Fatalf("the output ended before a result: %v\nstderr %s", kinds, errb.String())
		return nil
	}
	if _, err := io.WriteString(stdin, sdkUser("SDKBG: start a job")); err != nil {
		t.Fatal(err)
	}
	if r := untilResult(); r["result"] != "started it" || r["result_index"] != 0.0 || r["origin"] != nil {
		t.Fatalf("first result %v", r)
	}
	// The child still runs: the next message is answered now.
	if _, err := io.WriteString(stdin, sdkUser("SECOND: are you there")); err != nil {
		t.Fatal(err)
	}
	if r := untilResult(); r["result"] != "second answer" || r["result_index"] != 1.0 || r["origin"] != nil {
		t.Fatalf("second result %v", r)
	}
	// The child ends; with no message from the program, the main agent
	// answers its notification.
	once.Do(func() { close(release) })
	// Its result is numbered after the session's others and says the turn
	// ran on a task notification.
	r := untilResult()
	if origin, _ := r["origin"].(map[string]any); r["result"] != "heard 1" || r["is_error"] != false || r["result_index"] != 2.0 ||
		origin["kind"] != "task-notification" {
		t.Fatalf("third result %v", r)
	}
	for m := range lines {
		kinds = append(kinds, kindOf(m))
		if kindOf(m) == "system/session_state_changed:idle" {
			break
		}
	}
	if err := stdin.Close(); err != nil {
		t.Fatal(err)
	}
	for m := range lines {
		kinds = append(kinds, kindOf(m))
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("cadre: %v\nstderr %s", err, errb.String())
	}
	got := strings.Join(kinds, " ")
	// Running from the first turn on, idle only once the child's
	// notification has been answered.
	if strings.Count(got, "session_state_changed:running") != 1 || strings.Count(got, "session_state_changed:idle") != 1 ||
		!strings.HasPrefix(got, "system/session_state_changed:running system/init") || !strings.HasSuffix(got, "result/success system/session_state_changed:idle") {
		t.Fatalf("lines: %s", got)
	}
	if strings.Count(got, "system/task_notification") != 1 || strings.Count(got, "system/init") != 3 {
		t.Fatalf("lines: %s", got)
	}
	reqs := s.RequestsFor("SDKBG")
	if n := countIn(reqs[len(reqs)-1], "done 1"); n != 1 {
		t.Fatalf("the child's answer reached the main agent %d times", n)
	}
}

// A program that closes stdin right after its one message (the Agent
// SDK's single-prompt query without callbacks) still gets the answer to
// the background child's notification: the session ends only when
// nothing runs.
func TestSDKSessionOutlivesItsInputWhileTasksRun(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	s.Script("SDKBG", llmtest.ToolUses(bgAgentCall(1), bgAgentCall(2)), llmtest.Text("started them"))
	s.ScriptFunc("SDKBG", func(r *llmtest.Request) llmtest.Turn {
		return llmtest.Text(fmt.Sprintf("heard %d", countIn(r, "<task-notification>")))
	})
	s.Script("BGCHILD-1", llmtest.Text("done 1"))
	s.Script("BGCHILD-2", llmtest.Text("done 2"))
	p := runCadre(t, env, sdkUser("SDKBG: start two jobs"), "--input-format", "stream-json", "--output-format", "stream-json", "--verbose")
	if p.code != 0 {
		t.Fatalf("code %d stderr %s\n%s", p.code, p.stderr, p.stdout)
	}
	var results []string
	notes := 0
	sc := bufio.NewScanner(strings.NewReader(p.stdout))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		switch kindOf(m) {
		case "result/success":
			results = append(results, m["result"].(string))
		case "system/task_notification":
			notes++
		}
	}
	// The two notifications come in one turn or in two.
	if notes != 2 || len(results) < 2 || results[0] != "started them" || results[len(results)-1] != "heard 2" {
		t.Fatalf("results %q, %d notifications\n%s", results, notes, p.stdout)
	}
}
