package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// Small things of the command line: messages, exit codes, flags.
func TestCommandLineDetails(t *testing.T) {
	t.Parallel()
	t.Run("no doubled prefix", func(t *testing.T) {
		t.Parallel()
		_, env := server(t)
		p := runCadre(t, env, "", "-p", "hi", "--add-dir", "/nonexistent/dir")
		if p.code != ExitUsage || strings.Contains(p.stderr, "cadre: cadre:") || !strings.HasPrefix(p.stderr, "cadre: ") {
			t.Fatalf("code %d stderr %q", p.code, p.stderr)
		}
	})
	t.Run("subcommand usage errors name the subcommand", func(t *testing.T) {
		t.Parallel()
		p := runCadre(t, nil, "", "agents", "--frobnicate")
		if p.code != ExitUsage || !strings.Contains(p.stderr, "Run 'cadre agents --help' for usage.") {
			t.Fatalf("code %d stderr %q", p.code, p.stderr)
		}
	})
	t.Run("agents with a missing --cwd", func(t *testing.T) {
		t.Parallel()
		p := runCadre(t, nil, "", "agents", "--cwd", "/nonexistent/dir")
		if p.code != ExitUsage || !strings.Contains(p.stderr, "--cwd /nonexistent/dir: not a directory") {
			t.Fatalf("code %d stderr %q", p.code, p.stderr)
		}
	})
	t.Run("prompt argument and stdin are joined", func(t *testing.T) {
		t.Parallel()
		s, env := server(t)
		s.Script("", llmtest.Text("ok"))
		p := runCadre(t, env, "the piped part\n", "-p", "the argument")
		if p.code != 0 {
			t.Fatalf("code %d stderr %s", p.code, p.stderr)
		}
		if got := s.Requests()[0].Messages[0].Text(); got != "the argument\nthe piped part\n" {
			t.Fatalf("prompt %q", got)
		}
	})
	t.Run("a prompt over the cap is an error", func(t *testing.T) {
		t.Parallel()
		_, env := server(t)
		p := runCadre(t, env, strings.Repeat("x", maxPromptBytes+1), "-p")
		if p.code != ExitUsage || !strings.Contains(p.stderr, "larger than 16 MiB") {
			t.Fatalf("code %d stderr %q", p.code, p.stderr)
		}
	})
	t.Run("tool rules: dashed names, commas and spaces, the prompt after them", func(t *testing.T) {
		t.Parallel()
		s, env := server(t)
		s.ScriptFunc("", func(r *llmtest.Request) llmtest.Turn {
			if len(r.Messages) == 1 {
				return llmtest.ToolUse("Bash", map[string]any{"command": "echo hi"})
			}
			return llmtest.Text("done")
		})
		p := runCadre(t, env, "", "-p", "--disallowed-tools", "Write,Bash(echo:*) Edit", "run it")
		if p.code != 0 {
			t.Fatalf("code %d stderr %s", p.code, p.stderr)
		}
		reqs := s.Requests()
		if got := reqs[0].Messages[0].Text(); got != "run it" {
			t.Fatalf("prompt %q", got)
		}
		for _, name := range reqs[0].ToolNames() {
			if name == "Write" || name == "Edit" {
				t.Fatalf("denied tool %s offered", name)
			}
		}
		if res := reqs[1].LastToolResults(); len(res) != 1 || !strings.Contains(res[0].ResultText(), "Bash(echo:*)") {
			t.Fatalf("results %+v", res)
		}
	})
	t.Run("system prompt files and inline settings", func(t *testing.T) {
		t.Parallel()
		s, env := server(t)
		s.Script("", llmtest.Text("ok"))
		cmd, _, errb, _ := cadreCmd(t, env, "", "-p", "hi", "--system-prompt-file", "sys.md", "--append-system-prompt-file", "more.md",
			"--settings", `{"model":"haiku"}`)
		for name, text := range map[string]string{"sys.md": "SYSTEM FROM FILE", "more.md": "APPENDED FROM FILE"} {
			if err := os.WriteFile(filepath.Join(cmd.Dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %s", err, errb)
		}
		req := s.Requests()[0]
		if !strings.HasPrefix(req.System, "SYSTEM FROM FILE") || !strings.HasSuffix(req.System, "APPENDED FROM FILE") || req.Model != "claude-haiku-4-5" {
			t.Fatalf("system %q model %s", req.System, req.Model)
		}
	})
	t.Run("continue and resume", func(t *testing.T) {
		t.Parallel()
		s, env := server(t)
		s.Script("", llmtest.Text("first answer"), llmtest.Text("second answer"), llmtest.Text("third answer"))
		cmd, out, errb, _ := cadreCmd(t, env, "", "-p", "remember the word ZEBRA", "--output-format", "json")
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %s", err, errb)
		}
		session := jsonField(t, out.String(), "session_id")
		again := func(args ...string) {
			t.Helper()
			c2, out2, errb2, _ := cadreCmd(t, env, "", args...)
			c2.Dir = cmd.Dir
			c2.Env = append(c2.Env[:0:0], cmd.Env...)
			if err := c2.Run(); err != nil {
				t.Fatalf("%v: %s", err, errb2)
			}
			if got := jsonField(t, out2.String(), "session_id"); got != session {
				t.Fatalf("session %s, want %s", got, session)
			}
		}
		again("-p", "what was the word?", "-c", "--output-format", "json")
		again("-p", "and again?", "--resume", session, "--output-format", "json")
		reqs := s.Requests()
		last := reqs[len(reqs)-1]
		if len(last.Messages) != 5 || last.Messages[0].Text() != "remember the word ZEBRA" || last.Messages[3].Text() != "second answer" {
			t.Fatalf("resumed conversation %+v", last.Messages)
		}
		p := runCadre(t, env, "", "-p", "hi", "--resume", "no-such-session")
		if p.code != ExitUsage || !strings.Contains(p.stderr, "no session no-such-session") {
			t.Fatalf("code %d stderr %q", p.code, p.stderr)
		}
	})
}

func jsonField(t *testing.T, out, key string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	s, _ := m[key].(string)
	return s
}

func TestBudgetAndFallbackFlags(t *testing.T) {
	t.Parallel()
	t.Run("max budget ends the run", func(t *testing.T) {
		t.Parallel()
		s, env := server(t)
		s.Script("", llmtest.ToolUse("Glob", map[string]any{"pattern": "*"}), llmtest.Text("never reached"))
		p := runCadre(t, env, "", "-p", "look", "--output-format", "json", "--max-budget-usd", "0.000001")
		res := resultOf(t, p.stdout)
		if p.code != ExitFailed || res["subtype"] != "error_max_budget_usd" || res["terminal_reason"] != "budget_exhausted" || res["num_turns"] != float64(1) {
			t.Fatalf("code %d result %v stderr %s", p.code, res, p.stderr)
		}
	})
	t.Run("fallback model when overloaded", func(t *testing.T) {
		t.Parallel()
		s, env := server(t)
		s.Script("", llmtest.Overloaded(), llmtest.Text("from haiku"))
		env["CADRE_RETRY_BUDGET_MS"] = "1" // no waiting: the first 529 is final
		p := runCadre(t, env, "", "-p", "hi", "--model", "opus", "--fallback-model", "haiku", "--output-format", "json")
		res := resultOf(t, p.stdout)
		if p.code != 0 || res["result"] != "from haiku" || !strings.Contains(p.stderr, "switching to the fallback model claude-haiku-4-5") {
			t.Fatalf("code %d result %v stderr %s", p.code, res, p.stderr)
		}
		if _, ok := res["modelUsage"].(map[string]any)["claude-haiku-4-5"]; !ok {
			t.Fatalf("modelUsage %v", res["modelUsage"])
		}
		reqs := s.Requests()
		if len(reqs) != 2 || reqs[0].Model != "claude-opus-4-1" || reqs[1].Model != "claude-haiku-4-5" {
			t.Fatalf("requests %d", len(reqs))
		}
	})
}
