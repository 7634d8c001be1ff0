package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// Issue 29 point 6, S-10.3: an agent definition's declared permissionMode
// applies under a default-mode parent, as in Claude Code — acceptEdits
// always, bypassPermissions only in a session started with bypass allowed
// — and an untrusted workspace's agent file cannot widen (reported on
// stderr). Each child writes a file through a tool that default mode would
// ask for (denied in -p); whether the file exists shows the mode it got.
func TestDeclaredChildModeThroughCLI(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		".cadre/agents/editor.md": "---\nname: editor\ndescription: Edits.\ntools: Write\npermissionMode: acceptEdits\n---\nYou edit.\n",
		".cadre/agents/runner.md": "---\nname: runner\ndescription: Runs.\ntools: Bash, Write\npermissionMode: bypassPermissions\n---\nYou run.\n",
	}
	for _, tc := range []struct {
		name, agent string
		args        []string
		wantWritten bool
		wantStderr  string
	}{
		{name: "untrusted acceptEdits ignored", agent: "editor", wantStderr: "permissionMode acceptEdits of agent editor"},
		{name: "trusted acceptEdits applies", agent: "editor", args: []string{"--trust-project"}, wantWritten: true},
		{name: "bypass without allow", agent: "runner", args: []string{"--trust-project"}},
		{name: "bypass allowed", agent: "runner", args: []string{"--trust-project", "--allow-dangerously-skip-permissions"}, wantWritten: true},
		{name: "untrusted bypass ignored", agent: "runner", args: []string{"--allow-dangerously-skip-permissions"}, wantStderr: "permissionMode bypassPermissions of agent runner"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			home, dir := t.TempDir(), t.TempDir()
			writeFiles(t, dir, files)
			target := filepath.Join(dir, "out.txt")
			s, env := server(t)
			s.Script("MAIN", llmtest.ToolUse("Agent", map[string]string{"description": "do", "prompt": "CHILD: do it", "subagent_type": tc.agent}), llmtest.Text("done"))
			call := llmtest.ToolUse("Write", map[string]string{"file_path": target, "content": "x"})
			if tc.agent == "runner" {
				call = llmtest.ToolUse("Bash", map[string]string{"command": "echo x > " + target})
			}
			s.Script("CHILD", call, llmtest.Text("child done"))
			p := cadreAt(t, home, dir, env, append([]string{"-p", "MAIN: go"}, tc.args...)...)
			if p.code != 0 {
				t.Fatalf("exit %d: %s", p.code, p.stderr)
			}
			_, err := os.Stat(target)
			if written := err == nil; written != tc.wantWritten {
				res := s.RequestsFor("CHILD")
				var got string
				if len(res) > 1 {
					got = res[1].LastToolResults()[0].ResultText()
				}
				t.Fatalf("file written %v, want %v; the child's tool result: %s; stderr: %s", written, tc.wantWritten, got, p.stderr)
			}
			if tc.wantStderr != "" && !strings.Contains(p.stderr, tc.wantStderr) {
				t.Errorf("stderr does not report %q as ignored: %s", tc.wantStderr, p.stderr)
			}
		})
	}
}

// Issue 29: a tool call with bad input is an input error the model can fix
// ("file_path is required"), never a permission denial, and never listed
// in permission_denials — here in default mode, headless, where a call
// needing approval would be denied.
func TestBadInputIsNotADenial(t *testing.T) {
	t.Parallel()
	home, dir := t.TempDir(), t.TempDir()
	s, env := server(t)
	s.Script("MAIN", llmtest.ToolUses(
		llmtest.Call{ID: "toolu_1", Name: "Write", Input: map[string]string{"content": "x"}},
		llmtest.Call{ID: "toolu_2", Name: "Edit", Input: map[string]string{}},
		llmtest.Call{ID: "toolu_3", Name: "Bash", Input: map[string]string{}},
		llmtest.Call{ID: "toolu_4", Name: "Read", Input: map[string]any{"file_path": 5}},
		llmtest.Call{ID: "toolu_5", Name: "Write", Input: map[string]string{"file_path": filepath.Join(dir, "f"), "content": "x"}},
	), llmtest.Text("done"))
	p := cadreAt(t, home, dir, env, "-p", "MAIN: go", "--output-format", "json")
	if p.code != 0 {
		t.Fatalf("exit %d: %s", p.code, p.stderr)
	}
	res := s.RequestsFor("MAIN")[1].LastToolResults()
	for i, want := range []string{"file_path is required", "file_path is required; old_string is required; new_string is required", "command is required", "file_path must be a string"} {
		got := res[i].ResultText()
		if !strings.Contains(got, "InputValidationError") || !strings.Contains(got, want) || strings.Contains(got, "ermission") {
			t.Errorf("call %d: %q, want an input error naming %q", i+1, got, want)
		}
	}
	if got := res[4].ResultText(); !strings.Contains(got, "Permission") {
		t.Errorf("the control call (a Write needing approval) was not denied: %q", got)
	}
	var out struct {
		Denials []struct {
			ToolUseID string `json:"tool_use_id"`
		} `json:"permission_denials"`
	}
	if err := json.Unmarshal([]byte(p.stdout), &out); err != nil {
		t.Fatalf("result: %v: %s", err, p.stdout)
	}
	if len(out.Denials) != 1 || out.Denials[0].ToolUseID != "toolu_5" {
		t.Errorf("permission_denials %+v, want only toolu_5", out.Denials)
	}
}

// Issue 29 point 7: Agent calls beyond the running cap start in the order
// they were made, and a queued one shows in stream-json as pending
// (system/task_updated, patch.status pending) before its task_started.
func TestQueuedAgentShowsPending(t *testing.T) {
	t.Parallel()
	home, dir := t.TempDir(), t.TempDir()
	s, env := server(t)
	s.Script("MAIN", llmtest.ToolUses(
		llmtest.Call{ID: "toolu_1", Name: "Agent", Input: map[string]string{"description": "one", "prompt": "CHILD-A: go"}},
		llmtest.Call{ID: "toolu_2", Name: "Agent", Input: map[string]string{"description": "two", "prompt": "CHILD-B: go"}},
		llmtest.Call{ID: "toolu_3", Name: "Agent", Input: map[string]string{"description": "three", "prompt": "CHILD-C: go"}},
	), llmtest.Text("done"))
	s.Script("CHILD-C", llmtest.Text("c done"))
	s.Script("CHILD-A", llmtest.Text("a done"))
	s.Script("CHILD-B", llmtest.Text("b done"))
	p := cadreAt(t, home, dir, env, "-p", "MAIN: go", "--output-format", "stream-json", "--verbose", "--settings", `{"maxConcurrentAgents": 1}`)
	if p.code != 0 {
		t.Fatalf("exit %d: %s", p.code, p.stderr)
	}
	pending := map[string]int{}
	started := map[string]int{}
	var pendingOrder, startOrder []string
	for i, line := range strings.Split(strings.TrimSpace(p.stdout), "\n") {
		var ev struct {
			Subtype     string `json:"subtype"`
			TaskID      string `json:"task_id"`
			Description string `json:"description"`
			Patch       struct {
				Status      string `json:"status"`
				Description string `json:"description"`
			} `json:"patch"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		switch {
		case ev.Subtype == "task_updated" && ev.Patch.Status == "pending":
			pending[ev.TaskID] = i
			pendingOrder = append(pendingOrder, ev.Patch.Description)
		case ev.Subtype == "task_started":
			started[ev.TaskID] = i
			startOrder = append(startOrder, ev.Description)
		}
	}
	if len(started) != 3 {
		t.Fatalf("started %v, want three\n%s", started, p.stdout)
	}
	// Which calls wait depends on how fast the first children end; that
	// every queued one is reported, in call order, and that they start in
	// call order does not.
	if strings.Join(startOrder, ",") != "one,two,three" {
		t.Errorf("started %v: want the calls in the order they were made", startOrder)
	}
	if q := strings.Join(pendingOrder, ","); q != "" && q != "two" && q != "three" && q != "two,three" {
		t.Errorf("queued %v: want later calls, in call order", pendingOrder)
	}
	var res struct {
		Cadre struct {
			Subagents struct {
				Queued int `json:"queued"`
			} `json:"subagents"`
		} `json:"cadre"`
	}
	lines := strings.Split(strings.TrimSpace(p.stdout), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
		t.Fatal(err)
	}
	if res.Cadre.Subagents.Queued != len(pending) {
		t.Errorf("%d calls queued, %d shown as pending", res.Cadre.Subagents.Queued, len(pending))
	}
	for id, i := range pending {
		if j, ok := started[id]; !ok || j < i {
			t.Errorf("task %s: pending at line %d, started at line %d", id, i, j)
		}
	}
}
