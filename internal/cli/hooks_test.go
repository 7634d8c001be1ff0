package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// hookSettings is an inline --settings value: SessionStart logs, and a
// Bash guard blocks any command with "rm" in it (exit 2, reason on
// stderr).
const hookSettings = `{"hooks": {
  "SessionStart": [{"hooks": [{"type": "command", "command": "echo started"}]}],
  "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "jq -r .tool_input.command | grep -q rm && { echo 'no rm here' >&2; exit 2; }; exit 0"}]}]}}`

// streamLines parses stream-json output.
func streamLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		lines = append(lines, m)
	}
	return lines
}

func TestIncludeHookEvents(t *testing.T) {
	t.Parallel()
	for _, include := range []bool{true, false} {
		s, env := server(t)
		s.Script("", llmtest.ToolUse("Bash", map[string]string{"command": "rm -f x"}), llmtest.Text("ok"))
		args := []string{"-p", "go", "--output-format", "stream-json", "--verbose", "--settings", hookSettings}
		if include {
			args = append(args, "--include-hook-events")
		}
		p := runCadre(t, env, "", args...)
		if p.code != 0 {
			t.Fatalf("code %d stderr %s", p.code, p.stderr)
		}
		var hooks []map[string]any
		var sid string
		for _, m := range streamLines(t, p.stdout) {
			if m["subtype"] == "init" {
				sid, _ = m["session_id"].(string)
			}
			if st, _ := m["subtype"].(string); strings.HasPrefix(st, "hook_") {
				hooks = append(hooks, m)
			}
		}
		// SessionStart's are always written; the rest with the flag.
		want := 2
		if include {
			want = 4
		}
		if len(hooks) != want {
			t.Fatalf("include=%v: hook lines %v", include, hooks)
		}
		start, resp := hooks[0], hooks[1]
		if start["subtype"] != "hook_started" || start["hook_name"] != "SessionStart:startup" || start["hook_event"] != "SessionStart" ||
			start["session_id"] != sid || start["hook_id"] != resp["hook_id"] || len(start["hook_id"].(string)) != 36 || start["uuid"] == "" {
			t.Errorf("hook_started %v", start)
		}
		if resp["subtype"] != "hook_response" || resp["outcome"] != "success" || resp["exit_code"] != float64(0) ||
			resp["stdout"] != "started\n" || resp["output"] != "started\n" || resp["stderr"] != "" {
			t.Errorf("hook_response %v", resp)
		}
		if include {
			if g := hooks[3]; g["hook_name"] != "PreToolUse:Bash" || g["outcome"] != "error" || g["exit_code"] != float64(2) || g["stderr"] != "no rm here\n" {
				t.Errorf("guard's hook_response %v", g)
			}
		}
		res := s.Requests()[1].LastToolResults()
		if len(res) != 1 || !strings.Contains(res[0].ResultText(), "no rm here") {
			t.Errorf("the model got %+v", res)
		}
	}
}

func TestVerboseShowsHookRuns(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	s.Script("", llmtest.ToolUse("Bash", map[string]string{"command": "rm -f x"}), llmtest.Text("ok"))
	p := runCadre(t, env, "", "-p", "go", "--verbose", "--settings", hookSettings)
	if p.code != 0 || p.stdout != "ok\n" {
		t.Fatalf("code %d stdout %q stderr %s", p.code, p.stdout, p.stderr)
	}
	contains := func(s string) {
		t.Helper()
		if !strings.Contains(p.stderr, s) {
			t.Errorf("stderr lacks %q:\n%s", s, p.stderr)
		}
	}
	contains("⚓ hook SessionStart:startup echo started: exit 0 in ")
	contains("⚓ hook PreToolUse:Bash jq -r .tool_input.command")
	contains("exit 2 in ")
	contains(", block: no rm here")
}

// TestSettingsHooksRunFromEveryFile: hooks of the user's and the
// project's settings files both run, with the project directory in the
// environment.
func TestSettingsHooksRunFromEveryFile(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	s.Script("", llmtest.Text("ok"))
	cmd, _, errb, home := cadreCmd(t, env, "", "-p", "go", "--trust-project")
	log := filepath.Join(home, "hooks.log")
	write := func(path, who string) {
		t.Helper()
		body := `{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo ` + who + ` $CLAUDE_PROJECT_DIR >> ` + log + `"}]}]}}`
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(home, ".config", "cadre", "settings.json"), "user")
	write(filepath.Join(cmd.Dir, ".cadre", "settings.json"), "project")
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, errb)
	}
	b, _ := os.ReadFile(log)
	if got, want := string(b), "user "+cmd.Dir+"\nproject "+cmd.Dir+"\n"; got != want && got != "project "+cmd.Dir+"\nuser "+cmd.Dir+"\n" {
		t.Errorf("log %q, want both lines of %q", got, want)
	}
}

// TestHooksAtFanout8 runs the peerbench scenario at fan-out 8 through the
// CLI with logging hooks on SubagentStart, SubagentStop and PreToolUse
// (Read) in the project's settings: every child's start, stop and Read is
// logged exactly once, with its agent id.
func TestHooksAtFanout8(t *testing.T) {
	t.Parallel()
	const n = 8
	s, env := server(t)
	cmd, out, errb, home := cadreCmd(t, env, "", "-p", "BENCH-MAIN-FANOUT-8: run 8 tasks", "--output-format", "stream-json", "--verbose", "--trust-project")
	file := filepath.Join(cmd.Dir, "bench-input.txt")
	write := func(p, body string, mode os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	log := filepath.Join(home, "hooks.log")
	logger := filepath.Join(home, "log-hook.sh")
	write(file, "bench input\n", 0o644)
	write(logger, "#!/bin/sh\njq -c '{event: .hook_event_name, agent_id, agent_type, tool: .tool_name}' >> "+log+"\n", 0o755)
	write(filepath.Join(cmd.Dir, ".cadre", "settings.json"), `{"hooks": {
	  "SubagentStart": [{"hooks": [{"type": "command", "command": "`+logger+`"}]}],
	  "SubagentStop": [{"hooks": [{"type": "command", "command": "`+logger+`"}]}],
	  "PreToolUse": [{"matcher": "Read", "hooks": [{"type": "command", "command": "`+logger+`"}]}]}}`, 0o644)
	s.ScriptFunc("", fanoutScript(n, file))
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, errb)
	}
	children := map[string]bool{}
	for _, m := range streamLines(t, out.String()) {
		if m["subtype"] == "task_started" {
			children[m["task_id"].(string)] = true
		}
	}
	if len(children) != n {
		t.Fatalf("%d children started", len(children))
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, l := range streamLines(t, string(b)) {
		id, _ := l["agent_id"].(string)
		if !children[id] || l["agent_type"] != "general-purpose" {
			t.Errorf("logged for an unknown agent: %v", l)
		}
		counts[l["event"].(string)+" "+id]++
	}
	for id := range children {
		for _, ev := range []string{"SubagentStart", "SubagentStop", "PreToolUse"} {
			if c := counts[ev+" "+id]; c != 1 {
				t.Errorf("%s of %s logged %d times", ev, id, c)
			}
		}
	}
	if len(counts) != 3*n {
		t.Errorf("log entries %v", counts)
	}
}

// BenchmarkMainFanout16NoopHook is BenchmarkMainFanout16 with one no-op
// command hook (`true`) on every tool call: 32 hook runs per iteration
// (16 Agent calls, 16 Reads). The difference to BenchmarkMainFanout16 is
// the hooks' cost.
func BenchmarkMainFanout16NoopHook(b *testing.B) {
	benchFanout16(b, `{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "true"}]}]}}`)
}
