package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// TestClaudeAgentSDKOptions runs testdata/agentsdk/options.mjs, a program
// on the real Claude Agent SDK with the options a Claude Code user sets
// (bypassPermissions with allowDangerouslySkipPermissions, outputFormat
// with a JSON schema, settingSources (project only), maxBudgetUsd, tools, effort, then
// resume with forkSession), on cadre and llmtest: both queries end with a
// successful result carrying structured_output.
func TestClaudeAgentSDKOptions(t *testing.T) {
	t.Parallel()
	dir := sdkDir(t)
	s := sdkServer(t)
	s.Script("SDK-OPTS",
		llmtest.ToolUse("Bash", map[string]any{"command": "echo made > made.txt"}),
		llmtest.ToolUse("StructuredOutput", map[string]any{"summary": "made a file", "files": []string{"made.txt"}}),
		llmtest.ToolUse("StructuredOutput", map[string]any{"summary": "still one file", "files": []string{"made.txt"}}))
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	work, home := t.TempDir(), t.TempDir()
	// settingSources ['project']: the project's deny rule holds, the
	// user's is not loaded.
	for path, text := range map[string]string{
		filepath.Join(home, ".config", "cadre", "settings.json"): `{"permissions": {"deny": ["Grep"]}}`,
		filepath.Join(work, ".cadre", "settings.json"):           `{"permissions": {"deny": ["Read"]}}`,
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join("testdata", "agentsdk", "options.mjs"))
	cmd.Env = append(os.Environ(), "CADRE_SDK_DIR="+dir, "CADRE_EXE="+exe, "CADRE_WORK="+work, "CADRE_HOME="+home, "CADRE_BASE_URL="+s.URL())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("options.mjs: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	type line struct {
		Query    string         `json:"query"`
		Message  map[string]any `json:"message"`
		Callback string         `json:"callback"`
		Data     string         `json:"data"`
	}
	results := map[string]map[string]any{}
	inits := map[string]map[string]any{}
	var cadreStderr strings.Builder
	var done bool
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("options.mjs printed %q: %v", sc.Text(), err)
		}
		switch {
		case l.Callback == "canUseTool":
			t.Errorf("bypass mode asked the program: %s", sc.Text())
		case l.Callback == "stderr":
			cadreStderr.WriteString(l.Data)
		case l.Callback == "done":
			done = true
		case l.Message["type"] == "result":
			results[l.Query] = l.Message
		case l.Message["type"] == "system" && l.Message["subtype"] == "init":
			inits[l.Query] = l.Message
		}
	}
	if !done {
		t.Fatalf("options.mjs did not finish:\n%s", stdout.String())
	}
	for _, q := range []string{"first", "fork"} {
		res := results[q]
		if res["subtype"] != "success" || res["is_error"] != false {
			t.Fatalf("%s result %v\ncadre stderr:\n%s", q, res, cadreStderr.String())
		}
		so, _ := res["structured_output"].(map[string]any)
		files, _ := so["files"].([]any)
		if len(files) != 1 || files[0] != "made.txt" {
			t.Fatalf("%s structured_output %v", q, res["structured_output"])
		}
		if init := inits[q]; init["permissionMode"] != "bypassPermissions" {
			t.Fatalf("%s init %v", q, init)
		}
	}
	if results["first"]["structured_output"].(map[string]any)["summary"] != "made a file" ||
		results["fork"]["structured_output"].(map[string]any)["summary"] != "still one file" {
		t.Fatalf("structured outputs %v / %v", results["first"]["structured_output"], results["fork"]["structured_output"])
	}
	// bypassPermissions ran the command without asking.
	if b, err := os.ReadFile(filepath.Join(work, "made.txt")); err != nil || string(b) != "made\n" {
		t.Fatalf("made.txt: %q %v", b, err)
	}
	// The fork is a new session that carries the first one's conversation.
	first, fork := results["first"]["session_id"], results["fork"]["session_id"]
	if first == "" || fork == "" || first == fork {
		t.Fatalf("session ids: first %v, fork %v", first, fork)
	}
	reqs := s.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	if msgs := reqs[2].Messages; len(msgs) < 4 || !strings.Contains(msgs[0].Text(), "SDK-OPTS: make a file") ||
		!strings.Contains(reqs[2].LastUserText(), "SDK-OPTS-FORK: report again") {
		t.Fatalf("fork request: %d messages, first %q, last %q", len(msgs), msgs[0].Text(), reqs[2].LastUserText())
	}
	// tools, settingSources and effort reached the model: of the tools
	// asked for, the project's settings deny Read; the user's deny of
	// Grep is not loaded.
	for i, r := range reqs {
		if got := slices.Sorted(slices.Values(r.ToolNames())); !slices.Equal(got, []string{"Bash", "Grep", "StructuredOutput"}) {
			t.Fatalf("request %d tools %v", i+1, got)
		}
		var body struct {
			OutputConfig struct {
				Effort string `json:"effort"`
			} `json:"output_config"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil || body.OutputConfig.Effort != "high" {
			t.Fatalf("request %d effort %q (%v)", i+1, body.OutputConfig.Effort, err)
		}
	}
	if strings.Contains(cadreStderr.String(), "unknown flag") {
		t.Fatalf("cadre stderr:\n%s", cadreStderr.String())
	}
}
