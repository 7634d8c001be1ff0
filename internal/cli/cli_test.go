package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// The test binary doubles as the cadre command: with CADRE_TEST_MAIN=1 it
// runs cli.Main, so end-to-end tests exercise the real process (flags,
// exit codes, signals) without a separate build step.
func TestMain(m *testing.M) {
	if os.Getenv(permServerEnv) != "" {
		servePermissionMCP() // permprompt_test.go
	}
	if os.Getenv("CADRE_TEST_MAIN") == "1" {
		os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
	}
	// A -race binary sleeps a second at exit (atexit_sleep_ms) so that
	// late reports get out; every cadre and reaper process these tests
	// start would pay it. Races are still reported, and fail the run.
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", raceEnv)
	}
	os.Exit(m.Run())
}

// raceEnv is the race detector's setting for the processes these tests
// start (a test binary built with -race re-executed as cadre).
const raceEnv = "atexit_sleep_ms=0"

// coverEnv makes a child process of a coverage run write its counters
// where the test binary writes its own (-test.gocoverdir), so that go test
// -cover counts what the end-to-end tests run.
// It also passes on the race detector's setting (TestMain).
func coverEnv() []string {
	env := []string{"GORACE=" + os.Getenv("GORACE")}
	if testing.CoverMode() == "" {
		return env
	}
	if f := flag.Lookup("test.gocoverdir"); f != nil && f.Value.String() != "" {
		env = append(env, "GOCOVERDIR="+f.Value.String())
	}
	return env
}

type proc struct {
	stdout, stderr string
	code           int
}

// cadreCmd prepares the command in a fresh project dir with a fresh HOME.
func cadreCmd(t *testing.T, env map[string]string, stdin string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer, string) {
	t.Helper()
	home, work := t.TempDir(), t.TempDir()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = work
	cmd.Env = []string{"CADRE_TEST_MAIN=1", "HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(home, "state"), "PATH=" + os.Getenv("PATH")}
	cmd.Env = append(cmd.Env, coverEnv()...)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	return cmd, &out, &errb, home
}

func runCadre(t *testing.T, env map[string]string, stdin string, args ...string) proc {
	t.Helper()
	cmd, out, errb, _ := cadreCmd(t, env, stdin, args...)
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return proc{out.String(), errb.String(), code}
}

func server(t *testing.T) (*llmtest.Server, map[string]string) {
	t.Helper()
	s := llmtest.NewServer()
	t.Cleanup(s.Close)
	t.Cleanup(func() { s.Check(t) })
	return s, map[string]string{"ANTHROPIC_BASE_URL": s.URL(), "ANTHROPIC_API_KEY": "test-key"}
}

func TestTextOutput(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	s.Script("", llmtest.Text("hello there"))
	p := runCadre(t, env, "", "-p", "say hi")
	if p.code != 0 || p.stdout != "hello there\n" {
		t.Fatalf("code %d stdout %q stderr %q", p.code, p.stdout, p.stderr)
	}
	req := s.Requests()[0]
	if req.Model != "claude-sonnet-4-5" || req.Messages[0].Text() != "say hi" {
		t.Fatalf("request model %q messages %+v", req.Model, req.Messages)
	}
}

func TestStdinPrompt(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	s.Script("", llmtest.Text("from stdin"))
	p := runCadre(t, env, "the prompt on stdin\n", "-p")
	if p.code != 0 || p.stdout != "from stdin\n" {
		t.Fatalf("code %d stdout %q stderr %q", p.code, p.stdout, p.stderr)
	}
	if got := s.Requests()[0].Messages[0].Text(); got != "the prompt on stdin\n" {
		t.Fatalf("prompt %q", got)
	}
}

func TestJSONOutput(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	s.Script("", llmtest.Text("done"))
	p := runCadre(t, env, "", "-p", "go", "--output-format", "json", "--model", "haiku")
	if p.code != 0 {
		t.Fatalf("code %d stderr %s", p.code, p.stderr)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(p.stdout), &res); err != nil {
		t.Fatalf("%v: %s", err, p.stdout)
	}
	for _, k := range []string{"result", "is_error", "num_turns", "duration_ms", "usage", "session_id", "permission_denials"} {
		if _, ok := res[k]; !ok {
			t.Fatalf("json result lacks %s: %s", k, p.stdout)
		}
	}
	if res["result"] != "done" || res["is_error"] != false || res["num_turns"] != float64(1) {
		t.Fatalf("result %v", res)
	}
	if s.Requests()[0].Model != "claude-haiku-4-5" {
		t.Fatalf("alias not resolved: %s", s.Requests()[0].Model)
	}
}

func TestStreamJSONOutput(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	s.Script("MAIN", llmtest.ToolUse("Agent", map[string]any{"description": "x", "prompt": "CHILD: go", "subagent_type": "general-purpose"}), llmtest.Text("all done"))
	s.Script("CHILD", llmtest.Text("child done"))
	p := runCadre(t, env, "", "-p", "MAIN task", "--output-format", "stream-json")
	if p.code != 0 {
		t.Fatalf("code %d stderr %s", p.code, p.stderr)
	}
	var kinds []string
	var childMsgs int
	sc := bufio.NewScanner(strings.NewReader(p.stdout))
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		k := ev["type"].(string)
		if st, ok := ev["subtype"].(string); ok {
			k += "/" + st
		}
		kinds = append(kinds, k)
		if k == "system/init" {
			if tools, _ := ev["tools"].([]any); len(tools) == 0 || ev["model"] != "claude-sonnet-4-5" {
				t.Fatalf("init %v", ev)
			}
		}
		if ev["parent_tool_use_id"] != nil && ev["agent_id"] != nil {
			childMsgs++
		}
	}
	want := []string{"system/init", "assistant", "system/task_started", "user", "assistant", "system/task_updated", "system/task_notification", "user", "assistant", "result/success"}
	if strings.Join(kinds, " ") != strings.Join(want, " ") {
		t.Fatalf("events %v\nwant   %v", kinds, want)
	}
	if childMsgs != 2 { // the child's prompt and its answer
		t.Fatalf("child messages with parent_tool_use_id: %d", childMsgs)
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	_, env := server(t)
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"missing key", map[string]string{}, []string{"-p", "hi"}, "set ANTHROPIC_API_KEY"},
		{"bad output format", env, []string{"-p", "hi", "--output-format", "yaml"}, "valid values are text, json, stream-json"},
		{"missing add-dir", env, []string{"-p", "hi", "--add-dir", "/nonexistent/dir"}, "/nonexistent/dir"},
		{"bad permission mode", env, []string{"-p", "hi", "--permission-mode", "yolo"}, "yolo"},
		{"unknown flag", env, []string{"-p", "hi", "--frobnicate"}, "unknown flag: --frobnicate"},
		{"bad rule", env, []string{"-p", "hi", "--allowedTools", "Bash(oops"}, "missing closing parenthesis"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := runCadre(t, c.env, "", c.args...)
			if p.code != ExitUsage || !strings.Contains(p.stderr, c.want) {
				t.Fatalf("code %d stderr %q, want exit 2 mentioning %q", p.code, p.stderr, c.want)
			}
			if p.stdout != "" {
				t.Fatalf("stdout %q", p.stdout)
			}
		})
	}
}

func TestAPIErrorExitsOne(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	s.Script("", llmtest.HTTPError(401, "invalid x-api-key"))
	p := runCadre(t, env, "", "-p", "hi", "--output-format", "json")
	if p.code != ExitFailed {
		t.Fatalf("code %d", p.code)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(p.stdout), &res); err != nil || res["is_error"] != true || !strings.Contains(res["result"].(string), "401") || res["session_id"] == "" {
		t.Fatalf("result %s (%v)", p.stdout, err)
	}
}

func TestHeadlessDefaultModeDeniesWrite(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	s.ScriptFunc("", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.ToolUse("Write", map[string]any{"file_path": "/tmp/cadre-never-" + filepath.Base(t.TempDir()), "content": "x"})
		}
		return llmtest.Text("could not write")
	})
	p := runCadre(t, env, "", "-p", "write a file", "--output-format", "json")
	if p.code != 0 {
		t.Fatalf("code %d stderr %s", p.code, p.stderr)
	}
	reqs := s.Requests()
	res := reqs[len(reqs)-1].LastToolResults()
	if len(res) != 1 || !res[0].IsError {
		t.Fatalf("tool results %+v", res)
	}
	var out struct {
		Denials []map[string]any `json:"permission_denials"`
	}
	if err := json.Unmarshal([]byte(p.stdout), &out); err != nil || len(out.Denials) != 1 || out.Denials[0]["tool_name"] != "Write" {
		t.Fatalf("denials %s", p.stdout)
	}
}

func TestDenyRuleFromSettingsFile(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	s.ScriptFunc("", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.ToolUse("Bash", map[string]any{"command": "echo hi"})
		}
		return llmtest.Text("ok")
	})
	cmd, out, errb, _ := cadreCmd(t, env, "", "-p", "run it", "--dangerously-skip-permissions")
	if err := os.MkdirAll(filepath.Join(cmd.Dir, ".cadre"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cmd.Dir, ".cadre", "settings.json"), []byte(`{"permissions":{"deny":["Bash(echo:*)"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s %s", err, out, errb)
	}
	reqs := s.Requests()
	got := reqs[len(reqs)-1].LastToolResults()[0]
	if !got.IsError || !strings.Contains(got.ResultText(), "echo:*") || !strings.Contains(got.ResultText(), "settings.json") {
		t.Fatalf("result %+v", got)
	}
}

func TestMalformedSettingsStopsRun(t *testing.T) {
	t.Parallel()
	_, env := server(t)
	cmd, _, errb, _ := cadreCmd(t, env, "", "-p", "hi")
	if err := os.MkdirAll(filepath.Join(cmd.Dir, ".cadre"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cmd.Dir, ".cadre", "settings.json"), []byte("{\n  \"permissions\": {,}\n}"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := cmd.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != ExitUsage || !strings.Contains(errb.String(), "settings.json:2") {
		t.Fatalf("err %v stderr %q", err, errb.String())
	}
}

func TestSIGINTEndsRunAndKeepsTranscript(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	// The command marks that it runs, then waits: the signal arrives while
	// the tool runs, known from the marker, not guessed from a delay.
	marker := filepath.Join(t.TempDir(), "running")
	s.Script("", llmtest.ToolUse("Bash", map[string]any{"command": "touch " + marker + " && sleep 30"}), llmtest.Text("never"))
	cmd, _, errb, home := cadreCmd(t, env, "", "-p", "sleep a while", "--dangerously-skip-permissions")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Polling the file system, with a deadline as a safety net only.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatal("the Bash call never started")
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != ExitInterrupted {
			t.Fatalf("exit %v stderr %s", err, errb)
		}
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("cadre did not exit after SIGINT")
	}
	files, _ := filepath.Glob(filepath.Join(home, "state", "cadre", "projects", "*", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("transcripts %v", files)
	}
	b, _ := os.ReadFile(files[0])
	if !strings.Contains(string(b), "sleep a while") || !strings.Contains(string(b), `"tool_use"`) {
		t.Fatalf("transcript %s", b)
	}
}

func TestVersionAndAgentsSubcommand(t *testing.T) {
	t.Parallel()
	p := runCadre(t, nil, "", "--version")
	if p.code != 0 || p.stdout != "cadre "+Version+"\n" {
		t.Fatalf("version %q %d", p.stdout, p.code)
	}
	p = runCadre(t, nil, "", "agents", "--json")
	if p.code != 0 || !strings.Contains(p.stdout, `"general-purpose"`) {
		t.Fatalf("agents %d %q %q", p.code, p.stdout, p.stderr)
	}
	p = runCadre(t, nil, "", "permissions", "check", "--tool", "Bash", "--input", `{"command":"rm -rf /"}`, "--deny", "Bash(rm:*)")
	if p.code != 0 || !strings.Contains(p.stdout, `"decision":"deny"`) {
		t.Fatalf("permissions %d %q %q", p.code, p.stdout, p.stderr)
	}
}

func TestOpenAICompatibleServer(t *testing.T) {
	t.Parallel()
	s := llmtest.NewServer()
	t.Cleanup(s.Close)
	t.Cleanup(func() { s.Check(t) })
	s.Script("", llmtest.ToolUse("Glob", map[string]any{"pattern": "*.none"}), llmtest.Text("local model answered"))
	env := map[string]string{"CADRE_PROVIDER": "openai", "OPENAI_BASE_URL": s.URL() + "/v1", "CADRE_MODEL": "qwen3-coder"}
	p := runCadre(t, env, "", "-p", "hi", "--output-format", "json")
	if p.code != 0 || !strings.Contains(p.stdout, `"result":"local model answered"`) {
		t.Fatalf("code %d stdout %s stderr %s", p.code, p.stdout, p.stderr)
	}
	reqs := s.Requests()
	if len(reqs) != 2 || reqs[0].Protocol != llmtest.OpenAI || reqs[0].Model != "qwen3-coder" {
		t.Fatalf("requests %d protocol %v model %q", len(reqs), reqs[0].Protocol, reqs[0].Model)
	}
}

func TestVerboseTextShowsTheAgentTree(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	s.Script("MAIN", llmtest.ToolUse("Agent", map[string]any{"description": "look around", "prompt": "CHILD: go", "subagent_type": "Explore"}), llmtest.Text("all done"))
	s.Script("CHILD", llmtest.ToolUse("Glob", map[string]any{"pattern": "*.go"}), llmtest.Text("child done"))
	p := runCadre(t, env, "", "-p", "MAIN task", "--verbose")
	if p.code != 0 || p.stdout != "all done\n" {
		t.Fatalf("code %d stdout %q stderr %s", p.code, p.stdout, p.stderr)
	}
	for _, want := range []string{"● Agent ", "  [Explore a", "] ▶ started: look around", "] ● Glob {\"pattern\":\"*.go\"}", "] ■ completed (1 tool use,"} {
		if !strings.Contains(p.stderr, want) {
			t.Fatalf("stderr lacks %q:\n%s", want, p.stderr)
		}
	}
}

// TestSettingsMaxConcurrentAgents: the settings key drives the running
// cap. With a cap of 1, the stream never shows a second sub-agent
// starting before the first has ended, and every child reports.
func TestSettingsMaxConcurrentAgents(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	var calls []llmtest.Call
	for i := range 3 {
		calls = append(calls, llmtest.Call{Name: "Agent", Input: map[string]any{"description": "x", "prompt": fmt.Sprintf("CHILD-%d: go", i), "subagent_type": "general-purpose"}})
		s.Script(fmt.Sprintf("CHILD-%d", i), llmtest.ToolUse("Glob", map[string]any{"pattern": "*"}), llmtest.Text(fmt.Sprintf("done %d", i)))
	}
	s.Script("MAIN", llmtest.ToolUses(calls...), llmtest.Text("all done"))
	cmd, out, errb, _ := cadreCmd(t, env, "", "-p", "MAIN task", "--output-format", "stream-json")
	if err := os.MkdirAll(filepath.Join(cmd.Dir, ".cadre"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cmd.Dir, ".cadre", "settings.json"), []byte(`{"maxConcurrentAgents": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, errb)
	}
	running, started := 0, 0
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	for sc.Scan() {
		var ev struct{ Type, Subtype string }
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		switch ev.Subtype {
		case "task_started":
			started++
			if running++; running > 1 {
				t.Fatalf("two sub-agents running at once under maxConcurrentAgents 1:\n%s", out)
			}
		case "task_notification":
			running--
		}
	}
	if started != 3 {
		t.Fatalf("%d sub-agents started", started)
	}
	reqs := s.RequestsFor("MAIN")
	for i, r := range reqs[len(reqs)-1].LastToolResults() {
		if !strings.Contains(r.ResultText(), fmt.Sprintf("done %d", i)) {
			t.Fatalf("result %d: %s", i, r.ResultText())
		}
	}
}
