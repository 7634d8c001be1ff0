package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// The real Claude Agent SDK (TypeScript, pinned in .ci/agent-sdk and
// installed by .ci/run) drives cadre — this test binary, which is cadre
// with CADRE_TEST_MAIN=1 — against llmtest, through
// testdata/agentsdk/drive.mjs. The Python SDK speaks the same protocol.

// sdkDir is where .ci/run installs the SDK.
func sdkDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", ".ci", "agent-sdk"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@anthropic-ai", "claude-agent-sdk", "sdk.mjs")); err != nil {
		t.Skip("the Claude Agent SDK is not installed: run .ci/run, or npm ci --omit=optional in .ci/agent-sdk")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not on PATH (.ci/run installs it)")
	}
	return dir
}

// sdkLine is one line drive.mjs prints: a message query() yielded or a
// callback the SDK made.
type sdkLine struct {
	Message  map[string]any  `json:"message"`
	Callback string          `json:"callback"`
	ToolName string          `json:"toolName"`
	Input    json.RawMessage `json:"input"`
	Data     string          `json:"data"`
	AgentID  string          `json:"agentID"`
	UseID    string          `json:"toolUseID"`
}

// runSDKScenario runs one scenario of drive.mjs and returns its lines.
func runSDKScenario(t *testing.T, s *llmtest.Server, scenario string) (lines []sdkLine, work string) {
	t.Helper()
	work = t.TempDir()
	return runSDKScenarioIn(t, s, scenario, work), work
}

// runSDKScenarioIn runs one scenario of drive.mjs in the work directory.
func runSDKScenarioIn(t *testing.T, s *llmtest.Server, scenario, work string) (lines []sdkLine) {
	t.Helper()
	dir := sdkDir(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join("testdata", "agentsdk", "drive.mjs"), scenario)
	cmd.Env = append(os.Environ(), "CADRE_SDK_DIR="+dir, "CADRE_EXE="+exe, "CADRE_WORK="+work, "CADRE_HOME="+home, "CADRE_BASE_URL="+s.URL())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("drive.mjs %s: %v\nstdout:\n%s\nstderr:\n%s", scenario, err, stdout.String(), stderr.String())
	}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var l sdkLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("drive.mjs printed %q: %v", sc.Text(), err)
		}
		lines = append(lines, l)
	}
	if len(lines) == 0 || lines[len(lines)-1].Callback != "done" {
		t.Fatalf("drive.mjs did not finish:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	return lines
}

// messages returns the messages of the lines, as type/subtype strings, and
// the result.
func messages(lines []sdkLine) (kinds []string, result map[string]any) {
	for _, l := range lines {
		if l.Message == nil {
			continue
		}
		k, _ := l.Message["type"].(string)
		if st, ok := l.Message["subtype"].(string); ok {
			k += "/" + st
		}
		kinds = append(kinds, k)
		if l.Message["type"] == "result" {
			result = l.Message
		}
	}
	return kinds, result
}

func sdkServer(t *testing.T) *llmtest.Server {
	t.Helper()
	s := llmtest.NewServer()
	t.Cleanup(s.Close)
	t.Cleanup(func() { s.Check(t) })
	return s
}

func TestClaudeAgentSDK(t *testing.T) {
	t.Run("query yields typed messages and a result", func(t *testing.T) {
		t.Parallel()
		s := sdkServer(t)
		s.Script("SDK-QUERY", llmtest.Text("hello from cadre"))
		lines, _ := runSDKScenario(t, s, "query")
		kinds, res := messages(lines)
		if strings.Join(kinds, " ") != "system/init assistant result/success" {
			t.Fatalf("messages %v", kinds)
		}
		init := lines[0].Message
		if init["model"] != "claude-sonnet-4-5" || init["permissionMode"] != "default" || init["session_id"] == "" {
			t.Fatalf("init %v", init)
		}
		if res["result"] != "hello from cadre" || res["is_error"] != false || res["num_turns"] != float64(1) {
			t.Fatalf("result %v", res)
		}
		if cost, _ := res["total_cost_usd"].(float64); cost <= 0 {
			t.Fatalf("cost %v", res["total_cost_usd"])
		}
	})

	t.Run("canUseTool answers a Bash prompt and its deny reaches the model", func(t *testing.T) {
		t.Parallel()
		s := sdkServer(t)
		s.Script("SDK-BASH", llmtest.ToolUse("Bash", map[string]string{"command": "touch sdk-made.txt", "description": "make a file"}), llmtest.Text("understood"))
		lines, work := runSDKScenario(t, s, "canUseTool")
		var asked []sdkLine
		for _, l := range lines {
			if l.Callback == "canUseTool" {
				asked = append(asked, l)
			}
		}
		if len(asked) != 1 || asked[0].ToolName != "Bash" || !strings.Contains(string(asked[0].Input), "touch sdk-made.txt") {
			t.Fatalf("canUseTool calls %+v", asked)
		}
		reqs := s.RequestsFor("SDK-BASH")
		if len(reqs) != 2 {
			t.Fatalf("%d requests", len(reqs))
		}
		res := reqs[1].LastToolResults()
		if len(res) != 1 || !res[0].IsError || !strings.Contains(res[0].ResultText(), "SDK-DENIED: the test program says no") {
			t.Fatalf("the model got %+v", res)
		}
		if _, err := os.Stat(filepath.Join(work, "sdk-made.txt")); err == nil {
			t.Fatal("the denied command ran")
		}
		_, result := messages(lines)
		if d, _ := result["permission_denials"].([]any); len(d) != 1 {
			t.Fatalf("denials %v", result["permission_denials"])
		}
	})

	t.Run("canUseTool rewrites the input and grants a rule for the session", func(t *testing.T) {
		t.Parallel()
		s := sdkServer(t)
		s.Script("SDK-ALLOW", llmtest.ToolUse("Bash", map[string]string{"command": "touch first.txt"}),
			llmtest.ToolUse("Bash", map[string]string{"command": "touch second.txt"}), llmtest.Text("both made"))
		lines, work := runSDKScenario(t, s, "allowAlways")
		asked := 0
		for _, l := range lines {
			if l.Callback == "canUseTool" {
				asked++
			}
		}
		if asked != 1 {
			t.Fatalf("canUseTool called %d times, want once (the granted rule covers the second call)", asked)
		}
		for name, want := range map[string]bool{"first.txt": false, "rewritten.txt": true, "second.txt": true} {
			if _, err := os.Stat(filepath.Join(work, name)); (err == nil) != want {
				t.Errorf("%s exists: %v, want %v", name, err == nil, want)
			}
		}
		_, res := messages(lines)
		if res["result"] != "both made" || len(res["permission_denials"].([]any)) != 0 {
			t.Fatalf("result %v", res)
		}
	})

	t.Run("interrupt ends the turn", func(t *testing.T) {
		t.Parallel()
		s := sdkServer(t)
		s.Script("SDK-SLOW", llmtest.Text("too late").WithDelay(10*time.Minute))
		lines, _ := runSDKScenario(t, s, "interrupt")
		kinds, res := messages(lines)
		if kinds[0] != "system/init" || res == nil || res["subtype"] != "error_during_execution" || res["is_error"] != true {
			t.Fatalf("messages %v result %v", kinds, res)
		}
		interrupted := false
		for _, l := range lines {
			interrupted = interrupted || l.Callback == "interrupted"
		}
		if !interrupted {
			t.Fatal("interrupt() did not return")
		}
	})

	t.Run("an agents option defines a sub-agent the model starts", func(t *testing.T) {
		t.Parallel()
		s := sdkServer(t)
		s.Script("SDK-AGENTS", llmtest.ToolUse("Agent", map[string]string{"description": "review", "prompt": "SDK-CHILD: review the change", "subagent_type": "reviewer"}),
			llmtest.Text("the reviewer is done"))
		s.Script("SDK-CHILD", llmtest.Text("looks good"))
		lines, _ := runSDKScenario(t, s, "agents")
		var started map[string]any
		for _, l := range lines {
			if l.Message != nil && l.Message["subtype"] == "task_started" {
				started = l.Message
			}
		}
		if started == nil || started["subagent_type"] != "reviewer" {
			t.Fatalf("task_started %v", started)
		}
		child := s.RequestsFor("SDK-CHILD")
		if len(child) != 1 || !strings.Contains(child[0].System, "You review changes.") {
			t.Fatalf("child requests %d", len(child))
		}
		if tools := strings.Join(child[0].ToolNames(), ","); tools != "Grep,Read" && tools != "Read,Grep" {
			t.Fatalf("child tools %s", tools)
		}
		_, res := messages(lines)
		if res["result"] != "the reviewer is done" {
			t.Fatalf("result %v", res)
		}
	})

	t.Run("SDK hook callbacks decide PreToolUse and see Stop", func(t *testing.T) {
		t.Parallel()
		s := sdkServer(t)
		s.Script("SDK-HOOKS", llmtest.ToolUse("Bash", map[string]string{"command": "touch forbidden.txt"}),
			llmtest.ToolUse("Bash", map[string]string{"command": "touch allowed.txt"}), llmtest.Text("hooks done"))
		lines, work := runSDKScenario(t, s, "hooks")
		var events []string
		for _, l := range lines {
			if l.Callback != "hook" {
				continue
			}
			var in map[string]any
			if err := json.Unmarshal(l.Input, &in); err != nil {
				t.Fatal(err)
			}
			events = append(events, fmt.Sprint(in["hook_event_name"], " ", in["tool_name"]))
			if in["session_id"] == "" || in["cwd"] != work {
				t.Errorf("hook input %v", in)
			}
		}
		if strings.Join(events, ", ") != "PreToolUse Bash, PreToolUse Bash, Stop <nil>" {
			t.Fatalf("hook callbacks: %v", events)
		}
		if _, err := os.Stat(filepath.Join(work, "forbidden.txt")); err == nil {
			t.Fatal("the call the hook denied ran")
		}
		if _, err := os.Stat(filepath.Join(work, "allowed.txt")); err != nil {
			t.Fatal("the call the hook allowed (no one to ask otherwise) did not run")
		}
		res := s.RequestsFor("SDK-HOOKS")[1].LastToolResults()
		if len(res) != 1 || !strings.Contains(res[0].ResultText(), "SDK-HOOK: not this one") {
			t.Fatalf("the model got %+v", res)
		}
		// includeHookEvents: each callback run is a hook_started and a
		// hook_response message.
		kinds, _ := messages(lines)
		started, responses := 0, 0
		for _, k := range kinds {
			switch k {
			case "system/hook_started":
				started++
			case "system/hook_response":
				responses++
			}
		}
		if started != 3 || responses != 3 {
			t.Fatalf("messages %v", kinds)
		}
	})
	t.Run("an in-process SDK MCP tool is called", func(t *testing.T) {
		t.Parallel()
		s := sdkServer(t)
		s.Script("SDK-MCP", llmtest.ToolUse("mcp__calc__add", map[string]any{"a": 2, "b": 40}), llmtest.Text("it is 42"))
		lines, _ := runSDKScenario(t, s, "mcp-config")
		called := 0
		for _, l := range lines {
			if l.Callback == "add" {
				called++
			}
		}
		if called != 1 {
			t.Fatalf("the SDK's tool ran %d times", called)
		}
		init := lines[0].Message
		if servers, _ := init["mcp_servers"].([]any); len(servers) != 1 || servers[0].(map[string]any)["name"] != "calc" {
			t.Fatalf("init mcp_servers %v", init["mcp_servers"])
		}
		res := s.RequestsFor("SDK-MCP")[1].LastToolResults()
		if len(res) != 1 || res[0].IsError || res[0].ResultText() != "SUM=42" {
			t.Fatalf("the model got %+v", res)
		}
		_, result := messages(lines)
		if result["result"] != "it is 42" {
			t.Fatalf("result %v", result)
		}
	})
}

// set_permission_mode and set_model from a program in streaming input
// mode change the next turn: its init says so, its requests go to the new
// model, and a Write that asked in default mode is allowed in acceptEdits.
func TestClaudeAgentSDKControls(t *testing.T) {
	t.Parallel()
	s := sdkServer(t)
	write := func(path string) llmtest.Turn {
		return llmtest.ToolUse("Write", map[string]string{"file_path": path, "content": "from the SDK test\n"})
	}
	// The second turn continues the conversation, so its requests carry
	// the first prompt's key.
	work := t.TempDir()
	s.Script("SDK-CTL-1", write(filepath.Join(work, "ctl-1.txt")), llmtest.Text("denied, fine"), write(filepath.Join(work, "ctl-2.txt")), llmtest.Text("written"))
	lines := runSDKScenarioIn(t, s, "controls", work)
	var inits, results []map[string]any
	asked := 0
	for _, l := range lines {
		switch {
		case l.Callback == "canUseTool":
			asked++
		case l.Message != nil && l.Message["subtype"] == "init":
			inits = append(inits, l.Message)
		case l.Message != nil && l.Message["type"] == "result":
			results = append(results, l.Message)
		}
	}
	if len(inits) != 2 || len(results) != 2 {
		t.Fatalf("%d inits, %d results", len(inits), len(results))
	}
	if inits[0]["permissionMode"] != "default" || inits[0]["model"] != "claude-sonnet-4-5" {
		t.Fatalf("first init %v %v", inits[0]["permissionMode"], inits[0]["model"])
	}
	if inits[1]["permissionMode"] != "acceptEdits" || inits[1]["model"] != "claude-haiku-4-5" {
		t.Fatalf("second init %v %v", inits[1]["permissionMode"], inits[1]["model"])
	}
	if asked != 1 {
		t.Fatalf("canUseTool called %d times, want once (in default mode only)", asked)
	}
	if _, err := os.Stat(filepath.Join(work, "ctl-1.txt")); err == nil {
		t.Fatal("the denied Write ran")
	}
	if _, err := os.Stat(filepath.Join(work, "ctl-2.txt")); err != nil {
		t.Fatalf("the Write of acceptEdits did not run: %v; the model got %+v", err, s.RequestsFor("SDK-CTL-1")[3].LastToolResults())
	}
	reqs := s.RequestsFor("SDK-CTL-1")
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, r := range reqs {
		want := "claude-sonnet-4-5"
		if i >= 2 {
			want = "claude-haiku-4-5"
		}
		if r.Model != want {
			t.Fatalf("request %d went to %s, want %s", i, r.Model, want)
		}
	}
	if results[1]["result"] != "written" || results[1]["is_error"] != false {
		t.Fatalf("second result %v", results[1])
	}
}

// An MCP server that lives in the program (createSdkMcpServer) is
// announced in initialize; the model's call of its tool reaches the
// program's handler through mcp_message, and the answer reaches the model.
func TestClaudeAgentSDKInProcessMCP(t *testing.T) {
	t.Parallel()
	s := sdkServer(t)
	s.Script("SDK-MCP", llmtest.ToolUse("mcp__calc__add", map[string]int{"a": 2, "b": 40}), llmtest.Text("the sum is 42"))
	lines, _ := runSDKScenario(t, s, "mcp")
	called := 0
	for _, l := range lines {
		if l.Callback == "mcpTool" {
			called++
		}
	}
	reqs := s.RequestsFor("SDK-MCP")
	if called != 1 || len(reqs) != 2 {
		t.Fatalf("tool called %d times, %d requests; tools %v; results %+v; lines %+v", called, len(reqs), reqs[0].ToolNames(), reqs[len(reqs)-1].LastToolResults(), lines)
	}
	if !slices.Contains(reqs[0].ToolNames(), "mcp__calc__add") {
		t.Fatalf("the model was not offered the tool: %v", reqs[0].ToolNames())
	}
	if res := reqs[1].LastToolResults(); len(res) != 1 || res[0].IsError || !strings.Contains(res[0].ResultText(), "SUM=42") {
		t.Fatalf("the model got %+v", res)
	}
}

// A single-prompt query() whose sub-agent runs in the background: the
// turn's result comes when the main agent's turn ends; the child goes on,
// its Bash call after that result still reaches the SDK's hook callback
// (whose deny reaches the child), and the main agent's answer to the
// child's notification reaches query() as a second result. Without
// callbacks the SDK closes cadre's input after the first result, and the
// answer still comes.
func TestClaudeAgentSDKBackgroundChild(t *testing.T) {
	for _, scenario := range []string{"background", "background-plain"} {
		t.Run(scenario, func(t *testing.T) {
			t.Parallel()
			s := sdkServer(t)
			answered := make(chan struct{})
			var once sync.Once
			s.ScriptFunc("SDK-BG", func(r *llmtest.Request) llmtest.Turn {
				last := r.Messages[len(r.Messages)-1].Text()
				switch {
				case len(r.Messages) == 1:
					return llmtest.ToolUse("Agent", map[string]any{"description": "a job", "prompt": "SDK-BGCHILD: run it",
						"subagent_type": "general-purpose", "run_in_background": true})
				case strings.Contains(last, "<task-notification>"):
					return llmtest.Text(fmt.Sprintf("heard %d", countIn(r, "<task-notification>")))
				default:
					once.Do(func() { close(answered) })
					return llmtest.Text("started it")
				}
			})
			s.ScriptFunc("SDK-BGCHILD", func(r *llmtest.Request) llmtest.Turn {
				if len(r.Messages) == 1 {
					// The child's tool call comes once the main agent has
					// ended its turn.
					<-answered
					return llmtest.ToolUse("Bash", map[string]string{"command": "touch from-bg.txt"})
				}
				res := r.LastToolResults()
				if len(res) != 1 {
					return llmtest.Text("no tool result")
				}
				return llmtest.Text("child saw: " + res[0].ResultText())
			})
			lines, work := runSDKScenario(t, s, scenario)
			var results []map[string]any
			hooks, notes := 0, 0
			for _, l := range lines {
				switch {
				case l.Callback == "hook":
					hooks++
				case l.Message != nil && l.Message["type"] == "result":
					results = append(results, l.Message)
				case l.Message != nil && l.Message["subtype"] == "task_notification":
					notes++
				}
			}
			kinds, _ := messages(lines)
			if len(results) != 2 || results[0]["result"] != "started it" || results[1]["result"] != "heard 1" || notes != 1 {
				t.Fatalf("results %v, %d notifications; messages %v", results, notes, kinds)
			}
			child := s.RequestsFor("SDK-BGCHILD")
			if len(child) != 2 {
				t.Fatalf("%d child requests", len(child))
			}
			saw := child[1].LastToolResults()[0].ResultText()
			if scenario == "background" {
				if hooks != 1 || !strings.Contains(saw, "SDK-BG-HOOK") {
					t.Fatalf("%d hook callbacks; the child saw %q", hooks, saw)
				}
				if _, err := os.Stat(filepath.Join(work, "from-bg.txt")); err == nil {
					t.Fatal("the command the hook denied ran")
				}
			}
		})
	}
}
