package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// sdkArgFlag is one flag the Claude Agent SDK passes to the CLI.
type sdkArgFlag struct {
	name   string // without the leading --
	valued bool   // the SDK passes a value with it
	inline string // a value the SDK writes into the string itself (--tools=default)
}

// sdkCLIFlags reads the flags the installed Claude Agent SDK passes to the
// CLI from its sdk.mjs: the "--flag" strings of the code that builds the
// CLI's arguments, which starts with the stream-json flags every session
// passes and ends where it sets the entrypoint variable. A flag written
// as "--flag", followed by a value argument ("--flag",value) takes a
// value; "--flag=value" carries one.
func sdkCLIFlags(t *testing.T) []sdkArgFlag {
	t.Helper()
	dir := sdkDir(t)
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", "@anthropic-ai", "claude-agent-sdk", "sdk.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	start := strings.Index(src, `"--output-format","stream-json"`)
	if start < 0 {
		t.Fatal(`sdk.mjs: the argument list ("--output-format","stream-json") is not found; the SDK changed how it starts the CLI`)
	}
	end := strings.Index(src[start:], "CLAUDE_CODE_ENTRYPOINT")
	if end < 0 {
		t.Fatal("sdk.mjs: the end of the argument code (CLAUDE_CODE_ENTRYPOINT) is not found")
	}
	code := src[start : start+end]
	re := regexp.MustCompile(`"--([a-zA-Z][a-zA-Z0-9-]*)(=[^"]*)?"(,|\))?`)
	byName := map[string]*sdkArgFlag{}
	var order []string
	for _, ix := range re.FindAllStringSubmatchIndex(code, -1) {
		m := []string{code[ix[2]:ix[3]], "", ""}
		if ix[4] >= 0 {
			m[1] = code[ix[4]:ix[5]]
		}
		if ix[6] >= 0 {
			m[2] = code[ix[6]:ix[7]]
			// In an array literal the next item may be another flag.
			if m[2] == "," && strings.HasPrefix(code[ix[1]:], `"--`) {
				m[2] = ""
			}
		}
		m = append([]string{""}, m...)
		name := m[1]
		f := byName[name]
		if f == nil {
			f = &sdkArgFlag{name: name}
			byName[name] = f
			order = append(order, name)
		}
		switch {
		case m[2] != "":
			f.inline = strings.TrimPrefix(m[2], "=")
		case m[3] == ",":
			f.valued = true
		}
	}
	// Passed outside that code: extraArgs and the settings option become
	// --settings; the issue names these two besides.
	for _, extra := range []sdkArgFlag{{name: "settings", valued: true}, {name: "debug-to-stderr"}, {name: "no-optional-locks"}} {
		if byName[extra.name] == nil {
			e := extra
			byName[e.name] = &e
			order = append(order, e.name)
		}
	}
	var out []sdkArgFlag
	for _, n := range order {
		out = append(out, *byName[n])
	}
	return out
}

// TestSDKFlagsFound checks the extraction finds the flags the issue names
// (a parser that found nothing would pass the test below).
func TestSDKFlagsFound(t *testing.T) {
	flags := sdkCLIFlags(t)
	var names []string
	for _, f := range flags {
		names = append(names, f.name)
	}
	for _, want := range []string{"allow-dangerously-skip-permissions", "json-schema", "setting-sources", "strict-mcp-config", "fork-session",
		"resume-session-at", "tools", "effort", "plugin-dir", "task-budget", "betas", "debug-file", "debug-to-stderr", "permission-prompts",
		"thinking-display", "no-optional-locks", "resume", "mcp-config", "permission-mode", "max-budget-usd"} {
		if !slices.Contains(names, want) {
			t.Errorf("sdk.mjs: --%s not found among %v", want, names)
		}
	}
	if len(flags) < 40 {
		t.Errorf("only %d flags found: %v", len(flags), names)
	}
}

// TestEverySDKFlagStarts runs cadre, as the SDK starts it (stream-json in
// and out), with each flag the installed SDK passes, and a plausible value
// where it takes one: every run starts and ends with a successful result;
// a flag cadre does not act on is named on exactly one stderr line.
func TestEverySDKFlagStarts(t *testing.T) {
	flags := sdkCLIFlags(t)
	for _, f := range flags {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			home, work := t.TempDir(), t.TempDir()
			s := llmtest.NewServer()
			defer s.Close()
			env := []string{"CADRE_TEST_MAIN=1", "HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(home, "state"), "PATH=" + os.Getenv("PATH"),
				"ANTHROPIC_BASE_URL=" + s.URL(), "ANTHROPIC_API_KEY=test-key"}
			env = append(env, coverEnv()...)
			run := func(args ...string) (stdout, stderr string, code int) {
				cmd := exec.Command(os.Args[0], args...)
				cmd.Dir, cmd.Env = work, env
				cmd.Stdin = strings.NewReader(`{"type":"user","message":{"role":"user","content":"FLAG: answer"},"parent_tool_use_id":null}` + "\n")
				var o, e bytes.Buffer
				cmd.Stdout, cmd.Stderr = &o, &e
				err := cmd.Run()
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				} else if err != nil {
					t.Fatal(err)
				}
				return o.String(), e.String(), code
			}
			base := []string{"--output-format", "stream-json", "--verbose", "--input-format", "stream-json"}
			// Flags that continue a session need one: a first run makes it.
			seed := uuid.NewString()
			needsSession := map[string]bool{"resume": true, "continue": true, "fork-session": true, "resume-session-at": true, "resume-drops-turn": true}
			if needsSession[f.name] {
				s.Script("", llmtest.Text("seeded"), llmtest.Text("flag ok"))
				if out, errOut, code := run(append(base, "--session-id", seed)...); code != 0 {
					t.Fatalf("seed run: code %d\n%s\n%s", code, out, errOut)
				}
			} else if f.name == "json-schema" {
				s.Script("", llmtest.ToolUse("StructuredOutput", map[string]any{"answer": "flag ok"}))
			} else {
				s.Script("", llmtest.Text("flag ok"))
			}
			args := append([]string(nil), base...)
			switch {
			case f.inline != "":
				args = append(args, "--"+f.name+"="+f.inline)
			case f.valued:
				v, ok := plausibleSDKValue(f.name, seed, work, home)
				if !ok {
					t.Fatalf("--%s takes a value: add a plausible one to plausibleSDKValue", f.name)
				}
				args = append(args, "--"+f.name+"="+v)
			default:
				args = append(args, "--"+f.name)
			}
			switch f.name {
			case "fork-session", "resume-drops-turn", "resume-session-at":
				args = append(args, "--resume", seed)
			}
			stdout, stderr, code := run(args...)
			if code != 0 || strings.Contains(stderr, "unknown flag") {
				t.Fatalf("%v: code %d\nstdout:\n%s\nstderr:\n%s", args, code, stdout, stderr)
			}
			res := lastResult(t, stdout)
			if so, ok := res["structured_output"].(map[string]any); ok && f.name == "json-schema" {
				res["result"] = so["answer"]
			}
			if res["subtype"] != "success" || res["is_error"] != false || res["result"] != "flag ok" {
				t.Fatalf("%v: result %v\nstderr:\n%s", args, res, stderr)
			}
			if n := strings.Count(stderr, "--"+f.name+" has no effect in cadre") + strings.Count(stderr, "--"+f.name+"="); n > 1 {
				t.Fatalf("--%s reported %d times:\n%s", f.name, n, stderr)
			}
			for _, ne := range noEffectWhy {
				if ne.name == f.name && !strings.Contains(stderr, "cadre: --"+f.name+" has no effect in cadre: ") {
					t.Fatalf("--%s has no effect but stderr does not say so:\n%s", f.name, stderr)
				}
			}
		})
	}
}

// plausibleSDKValue is a value the SDK could pass with a flag.
func plausibleSDKValue(name, session, work, home string) (string, bool) {
	switch name {
	case "output-format", "input-format":
		return "stream-json", true
	case "max-thinking-tokens":
		return "2048", true
	case "thinking-display":
		return "summarized", true
	case "effort":
		return "high", true
	case "max-turns":
		return "3", true
	case "max-budget-usd":
		return "5", true
	case "task-budget":
		return "20000", true
	case "model":
		return "sonnet", true
	case "fallback-model":
		return "haiku", true
	case "agent":
		return "general-purpose", true
	case "betas":
		return "context-1m-2025-08-07", true
	case "json-schema":
		return `{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}`, true
	case "debug-file":
		return filepath.Join(home, "debug.log"), true
	case "permission-prompt-tool":
		return "stdio", true
	case "permission-prompts":
		return "none", true
	case "resume":
		return session, true
	case "channels":
		return "plugin:example@example", true
	case "allowedTools":
		return "Read,Grep", true
	case "disallowedTools":
		return "WebFetch", true
	case "tools":
		return "Read,Grep,Glob", true
	case "mcp-config":
		return `{"mcpServers":{}}`, true
	case "setting-sources":
		return "user,project,local", true
	case "permission-mode":
		return "acceptEdits", true
	case "project-config-root", "add-dir", "plugin-dir", "plugin-dir-no-mcp":
		return work, true
	case "resume-session-at", "resume-drops-turn":
		return uuid.NewString(), true
	case "session-id":
		return uuid.NewString(), true
	case "initialize-fields":
		return "settings,disallowedTools", true
	case "managed-settings", "settings":
		return "{}", true
	}
	return "", false
}

// lastResult is the last result line of a stream-json output.
func lastResult(t *testing.T, stdout string) map[string]any {
	t.Helper()
	var res map[string]any
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("stdout line %q: %v", sc.Text(), err)
		}
		if m["type"] == "result" {
			res = m
		}
	}
	if res == nil {
		t.Fatalf("no result line:\n%s", stdout)
	}
	return res
}

// TestSDKFlagsHonoured checks what the flags cadre acts on do.
func TestSDKFlagsHonoured(t *testing.T) {
	t.Parallel()
	t.Run("tools restricts the tool set, effort reaches the request", func(t *testing.T) {
		t.Parallel()
		s, env := server(t)
		s.Script("", llmtest.Text("ok"))
		p := runCadre(t, env, "", "-p", "go", "--tools", "Read,Grep", "--effort", "xhigh", "--thinking=disabled", "--max-thinking-tokens", "2048")
		if p.code != 0 {
			t.Fatalf("code %d stderr %s", p.code, p.stderr)
		}
		req := s.Requests()[0]
		if got := slices.Sorted(slices.Values(req.ToolNames())); !slices.Equal(got, []string{"Grep", "Read"}) {
			t.Fatalf("tools offered %v, want [Read Grep]", got)
		}
		var body struct {
			OutputConfig struct {
				Effort string `json:"effort"`
			} `json:"output_config"`
		}
		if err := json.Unmarshal(req.Body, &body); err != nil || body.OutputConfig.Effort != "xhigh" {
			t.Fatalf("effort %q (%v): %s", body.OutputConfig.Effort, err, req.Body)
		}
		if req.Thinking {
			t.Fatal("--thinking=disabled: thinking still requested")
		}
	})
	t.Run("empty tools offers none, Task brings the Agent tool", func(t *testing.T) {
		t.Parallel()
		s, env := server(t)
		s.Script("", llmtest.Text("ok"))
		p := runCadre(t, env, "", "-p", "go", "--tools=")
		if p.code != 0 {
			t.Fatalf("code %d stderr %s", p.code, p.stderr)
		}
		if got := s.Requests()[0].ToolNames(); len(got) != 0 {
			t.Fatalf("--tools= offered %v", got)
		}
		s2, env2 := server(t)
		s2.Script("", llmtest.Text("ok"))
		p = runCadre(t, env2, "", "-p", "go", "--tools", "Task Bash NoSuchTool")
		if p.code != 0 || !strings.Contains(p.stderr, `--tools: no tool is named "NoSuchTool"`) {
			t.Fatalf("code %d stderr %s", p.code, p.stderr)
		}
		got := s2.Requests()[0].ToolNames()
		if !slices.Contains(got, "Agent") || !slices.Contains(got, "Bash") || slices.Contains(got, "Read") {
			t.Fatalf("--tools Task Bash offered %v", got)
		}
	})
	t.Run("agent makes the main agent the definition", func(t *testing.T) {
		t.Parallel()
		s, env := server(t)
		s.Script("", llmtest.ToolUse("Bash", map[string]any{"command": "rm -rf build"}), llmtest.Text("reviewed"))
		agents := `{"reviewer": {"description": "Reviews.", "prompt": "You are REVIEWER-PROMPT.", "tools": ["Read", "Bash"],
			"disallowedTools": ["Bash(rm:*)"], "model": "haiku", "effort": "low"}}`
		p := runCadre(t, env, "", "-p", "go", "--output-format", "json", "--permission-mode", "bypassPermissions", "--agents", agents, "--agent", "reviewer")
		if p.code != 0 {
			t.Fatalf("code %d\n%s\n%s", p.code, p.stdout, p.stderr)
		}
		req := s.Requests()[0]
		if !strings.Contains(req.System, "You are REVIEWER-PROMPT.") || req.Model != "claude-haiku-4-5" {
			t.Fatalf("model %s system %q", req.Model, req.System)
		}
		if got := slices.Sorted(slices.Values(req.ToolNames())); !slices.Equal(got, []string{"Bash", "Read"}) {
			t.Fatalf("tools %v", got)
		}
		if !strings.Contains(string(req.Body), `"effort":"low"`) {
			t.Fatalf("effort: %s", req.Body)
		}
		var res map[string]any
		if err := json.Unmarshal([]byte(p.stdout), &res); err != nil {
			t.Fatal(err)
		}
		if d, _ := res["permission_denials"].([]any); len(d) != 1 {
			t.Fatalf("the definition's disallowedTools did not deny rm: %v", res["permission_denials"])
		}
		// An unknown name is said once; the run goes on as usual.
		s2, env2 := server(t)
		s2.Script("", llmtest.Text("ok"))
		p = runCadre(t, env2, "", "-p", "go", "--agent", "nobody")
		if p.code != 0 || strings.Count(p.stderr, `--agent: no agent is named "nobody"`) != 1 {
			t.Fatalf("code %d stderr %s", p.code, p.stderr)
		}
	})
	t.Run("an invalid effort is a usage error", func(t *testing.T) {
		t.Parallel()
		p := runCadre(t, nil, "", "-p", "go", "--effort", "extreme")
		if p.code != ExitUsage || !strings.Contains(p.stderr, `invalid --effort "extreme"`) {
			t.Fatalf("code %d stderr %s", p.code, p.stderr)
		}
	})
	t.Run("debug-file gets the debug lines", func(t *testing.T) {
		t.Parallel()
		s, env := server(t)
		s.Script("", llmtest.Text("ok"))
		file := filepath.Join(t.TempDir(), "debug.log")
		p := runCadre(t, env, "", "-p", "go", "--debug-file", file)
		if p.code != 0 || strings.Contains(p.stderr, "[debug]") {
			t.Fatalf("code %d stderr %s", p.code, p.stderr)
		}
		b, err := os.ReadFile(file)
		if err != nil || !strings.Contains(string(b), "[debug] main: claude-sonnet-4-5 answered") {
			t.Fatalf("debug file %q: %v", b, err)
		}
	})
	t.Run("permission-prompts none denies what would be asked", func(t *testing.T) {
		t.Parallel()
		s, env := server(t)
		s.Script("", llmtest.ToolUse("Bash", map[string]any{"command": "touch made.txt"}), llmtest.Text("done"))
		cmd, out, errb, _ := cadreCmd(t, env, `{"type":"user","message":{"role":"user","content":"make it"},"parent_tool_use_id":null}`+"\n",
			"--output-format", "stream-json", "--verbose", "--input-format", "stream-json", "--permission-prompt-tool=stdio", "--permission-prompts=none")
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v\n%s\n%s", err, out, errb)
		}
		if strings.Contains(out.String(), `"can_use_tool"`) {
			t.Fatalf("asked the program although --permission-prompts none:\n%s", out)
		}
		res := lastResult(t, out.String())
		if d, _ := res["permission_denials"].([]any); len(d) != 1 {
			t.Fatalf("denials %v\n%s", res["permission_denials"], out)
		}
		if _, err := os.Stat(filepath.Join(cmd.Dir, "made.txt")); err == nil {
			t.Fatal("the denied command ran")
		}
	})
	t.Run("fork-session continues in a new session that holds the history", func(t *testing.T) {
		t.Parallel()
		s, env := server(t)
		s.Script("", llmtest.Text("first answer"), llmtest.Text("forked answer"), llmtest.Text("fork resumed"))
		home, work := t.TempDir(), t.TempDir()
		run := func(args ...string) map[string]any {
			cmd := exec.Command(os.Args[0], args...)
			cmd.Dir = work
			cmd.Env = []string{"CADRE_TEST_MAIN=1", "HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(home, "state"), "PATH=" + os.Getenv("PATH")}
			cmd.Env = append(cmd.Env, coverEnv()...)
			for k, v := range env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v: %v\n%s", args, err, out)
			}
			var res map[string]any
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			return res
		}
		orig := uuid.NewString()
		run("-p", "first", "--output-format", "json", "--session-id", orig)
		forked := uuid.NewString()
		res := run("-p", "second", "--output-format", "json", "--resume", orig, "--fork-session", "--session-id", forked)
		if res["session_id"] != forked || res["result"] != "forked answer" {
			t.Fatalf("fork result %v", res)
		}
		// The fork's request carried the first exchange.
		if msgs := s.Requests()[1].Messages; len(msgs) != 3 || msgs[0].Text() != "first" || msgs[1].Text() != "first answer" {
			t.Fatalf("fork request messages %+v", msgs)
		}
		// The original is unchanged; the fork resumes with both exchanges.
		res = run("-p", "third", "--output-format", "json", "--resume", forked)
		if res["session_id"] != forked {
			t.Fatalf("resumed fork %v", res)
		}
		if msgs := s.Requests()[2].Messages; len(msgs) != 5 || msgs[2].Text() != "second" {
			t.Fatalf("resumed fork request messages %+v", msgs)
		}
		if n := countLines(t, filepath.Join(home, "state", "cadre"), orig); n == 0 {
			t.Fatal("the original transcript is gone")
		}
	})
}

// countLines counts the lines of session id's transcript under the state
// directory.
func countLines(t *testing.T, stateDir, id string) int {
	t.Helper()
	var n int
	err := filepath.WalkDir(stateDir, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == id+".jsonl" {
			b, rerr := os.ReadFile(path)
			if rerr != nil {
				return rerr
			}
			n += bytes.Count(b, []byte("\n"))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
