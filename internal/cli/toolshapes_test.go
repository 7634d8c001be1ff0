package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
)

var (
	claudeBin    = flag.String("claude-bin", "", "run this Claude Code binary on the tool-shapes scenario and rewrite "+toolsCaptureFile)
	claudeRunEnv = flag.String("claude-env", "", "comma-separated environment settings for -claude-bin's run")
)

// toolsCaptureFile is Claude Code 2.1.328's stream-json on toolsScenario,
// normalised by normaliseCapture.
const toolsCaptureFile = "testdata/claude-code.tools.stream-json.jsonl"

// toolsRequestsFile holds the tool results Claude Code sent the model on
// toolsScenario, by tool call, normalised.
const toolsRequestsFile = "testdata/claude-code.tools.requests.json"

// denyReason is what the scenario's PreToolUse hook answers for a Bash
// call that says DENYME.
const denyReason = "DENYME is not allowed here"

// toolsScenario scripts a main agent that calls every built-in tool whose
// structured result Claude Code prints (Bash, Read, Edit, Write, Grep,
// Glob), a Bash call that fails, one a PreToolUse hook denies, a
// foreground Agent and a background Agent whose notification runs the main
// agent again. work is the working directory (it gets notes.txt), home
// the HOME (it gets the hook in .claude/settings.json).
func toolsScenario(t *testing.T, s *llmtest.Server, work, home string) {
	t.Helper()
	notes := filepath.Join(work, "notes.txt")
	fresh := filepath.Join(work, "new.txt")
	writeFiles(t, work, map[string]string{"notes.txt": "hello world\nsecond line\n"})
	writeFiles(t, home, map[string]string{
		".claude/hook.sh": "#!/bin/sh\nif grep -q DENYME; then\n  printf '%s' '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"" + denyReason + "\"}}'\nfi\nexit 0\n",
	})
	if err := os.Chmod(filepath.Join(home, ".claude", "hook.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	settings, _ := json.Marshal(map[string]any{"hooks": map[string]any{"PreToolUse": []any{map[string]any{
		"matcher": "Bash", "hooks": []any{map[string]any{"type": "command", "command": filepath.Join(home, ".claude", "hook.sh")}}}}}})
	writeFiles(t, home, map[string]string{".claude/settings.json": string(settings)})

	steps := []llmtest.Turn{
		llmtest.ToolUse("Bash", map[string]any{"command": "echo out; echo err >&2", "description": "Print to both streams"}),
		llmtest.ToolUse("Bash", map[string]any{"command": "echo failing; exit 3", "description": "Fail"}),
		llmtest.ToolUse("Bash", map[string]any{"command": "echo DENYME", "description": "Denied by the hook"}),
		llmtest.ToolUse("Read", map[string]any{"file_path": notes}),
		llmtest.ToolUse("Edit", map[string]any{"file_path": notes, "old_string": "hello world", "new_string": "hello there"}),
		llmtest.ToolUse("Write", map[string]any{"file_path": fresh, "content": "fresh file\n"}),
		llmtest.ToolUse("Write", map[string]any{"file_path": notes, "content": "hello again\nrewritten\n"}),
		llmtest.ToolUses(
			llmtest.Call{Name: "Grep", Input: map[string]any{"pattern": "hello", "path": work}},
			llmtest.Call{Name: "Grep", Input: map[string]any{"pattern": "hello", "path": work, "output_mode": "content", "-n": true}},
			llmtest.Call{Name: "Grep", Input: map[string]any{"pattern": "hello", "path": work, "output_mode": "count"}}),
		llmtest.ToolUse("Glob", map[string]any{"pattern": "*.txt", "path": work}),
		llmtest.ToolUse("Agent", map[string]any{"description": "foreground job", "subagent_type": "general-purpose",
			"prompt": "STREAM2-FG: read notes.txt, then reply exactly 'fg done'.", "run_in_background": false}),
		llmtest.ToolUse("Agent", map[string]any{"description": "background job", "subagent_type": "general-purpose",
			"prompt": "STREAM2-BG: run echo bg, then reply exactly 'bg done'.", "run_in_background": true}),
	}
	answering := make(chan struct{})
	var once sync.Once
	s.ScriptFunc("STREAM2-MAIN", func(r *llmtest.Request) llmtest.Turn {
		if !isAgentRequest(r) {
			return llmtest.Text("ok")
		}
		if strings.Contains(allText(r), "<task-notification>") {
			return llmtest.Text("heard bg")
		}
		if n := assistantCount(r); n < len(steps) {
			return steps[n]
		}
		once.Do(func() { close(answering) })
		return llmtest.Text("started")
	})
	s.ScriptFunc("STREAM2-FG", func(r *llmtest.Request) llmtest.Turn {
		if assistantCount(r) == 0 {
			return llmtest.ToolUse("Read", map[string]any{"file_path": notes})
		}
		return llmtest.Text("fg done")
	})
	s.ScriptFunc("STREAM2-BG", func(r *llmtest.Request) llmtest.Turn {
		if assistantCount(r) == 0 {
			// The child works once the main agent's first turn is
			// answering, so its notification runs the main agent again.
			select {
			case <-answering:
			case <-time.After(2 * time.Minute):
			}
			return llmtest.ToolUse("Bash", map[string]any{"command": "echo bg", "description": "Print bg"})
		}
		return llmtest.Text("bg done")
	})
	// Anything else (a title, a quota probe) gets a plain answer.
	s.ScriptFunc("", func(r *llmtest.Request) llmtest.Turn { return llmtest.Text("ok") })
}

// isAgentRequest reports whether r is an agent's turn (it offers tools),
// not a side request of a harness.
func isAgentRequest(r *llmtest.Request) bool { return len(r.Tools) > 0 }

// assistantCount counts the assistant messages of r.
func assistantCount(r *llmtest.Request) int {
	n := 0
	for _, m := range r.Messages {
		if m.Role == llm.RoleAssistant {
			n++
		}
	}
	return n
}

// toolsArgs are the scenario's flags after -p PROMPT. Naming Grep and Glob
// in --allowedTools makes Claude Code offer them (2.1.328 otherwise sends
// the model to grep and find through Bash).
var toolsArgs = []string{"--output-format", "stream-json", "--verbose", "--permission-mode", "bypassPermissions",
	"--model", "claude-sonnet-4-5", "--allowedTools", "Grep,Glob"}

// toolsPrompt is the scenario's prompt.
const toolsPrompt = "STREAM2-MAIN: call the tools as scripted"

// captureClaude runs Claude Code on toolsScenario and returns its stdout,
// the server, the working directory and HOME.
func captureClaude(t *testing.T, bin string) (string, *llmtest.Server, string, string) {
	s := llmtest.NewServer()
	t.Cleanup(s.Close)
	home, work := t.TempDir(), t.TempDir()
	toolsScenario(t, s, work, home)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"-p", toolsPrompt}, toolsArgs...)...)
	cmd.Dir = work
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "ANTHROPIC_BASE_URL=" + s.URL(), "ANTHROPIC_API_KEY=sk-ant-test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1",
		"IS_SANDBOX=1", "TERM=dumb", "NO_COLOR=1", "CI=1"}
	if *claudeRunEnv != "" {
		cmd.Env = append(cmd.Env, strings.Split(*claudeRunEnv, ",")...)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("claude: %v\nstderr: %s\nstdout: %s", err, errb.String(), out.String())
	}
	return out.String(), s, work, home
}

// volatileKeys are keys whose values change from run to run: ids, times,
// durations, costs. normaliseCapture writes them as their type's zero
// (strings as "<key>").
var volatileKeys = map[string]bool{
	"uuid": true, "session_id": true, "timestamp": true, "id": true, "tool_use_id": true, "parent_tool_use_id": true,
	"task_id": true, "agentId": true, "agent_id": true, "run_id": true, "runId": true, "end_time": true,
	"duration_ms": true, "duration_api_ms": true, "durationMs": true, "totalDurationMs": true, "total_cost_usd": true,
	"costUSD": true, "ttft_ms": true, "ttft_stream_ms": true, "time_to_request_ms": true, "first_content_frame_ms": true,
	"outputFile": true, "output_file": true, "messaging_socket_path": true, "memory_paths": true, "transcript_path": true,
	"usage": true, "modelUsage": true, "model_usage_since_last_result": true, "total_usage": true, "total_tokens": true,
	"totalTokens": true, "version": true, "claude_code_version": true,
}

// normaliseCapture rewrites stream-json lines so two runs of the scenario
// compare: the working directory and HOME become $CWD and $HOME, the
// values of volatileKeys become placeholders of their type (objects keep
// their keys), and strings longer than 120 bytes become "<long text>".
func normaliseCapture(t *testing.T, out, work, home string) []map[string]any {
	t.Helper()
	out = strings.ReplaceAll(out, work, "$CWD")
	out = strings.ReplaceAll(out, home, "$HOME")
	var evs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("not JSON: %q: %v", line, err)
		}
		evs = append(evs, normaliseValue("", ev).(map[string]any))
	}
	return evs
}

func normaliseValue(key string, v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if volatileKeys[key] {
				out[k] = normaliseValue(key, e) // every value under a volatile object
			} else {
				out[k] = normaliseValue(k, e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normaliseValue(key, e)
		}
		return out
	}
	if str, ok := v.(string); ok && len(str) > 120 {
		// A harness's own model-facing text (an agent's hand-back frame,
		// a launch notice): its words are not the format.
		return "<long text>"
	}
	if !volatileKeys[key] || v == nil {
		return v
	}
	switch v.(type) {
	case string:
		return "<" + key + ">"
	case float64:
		return float64(0)
	}
	return v
}

// writeCapture writes normalised events as JSON lines.
func writeCapture(t *testing.T, path string, evs []map[string]any) {
	t.Helper()
	var b bytes.Buffer
	for _, ev := range evs {
		line, err := marshalLine(ev)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readCapture reads normalised events.
func readCapture(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var evs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// modelToolResults returns the text of every tool result the main agent's
// requests sent the model, by the called tool's name and its order among
// that tool's calls ("Bash#3"), with the working directory as $CWD.
func modelToolResults(s *llmtest.Server, work string) map[string]string {
	out := map[string]string{}
	names := map[string]string{}
	counts := map[string]int{}
	for _, r := range s.RequestsFor("STREAM2-MAIN") {
		for _, m := range r.Messages {
			for _, b := range m.Content {
				switch b.Type {
				case llm.BlockToolUse:
					if _, ok := names[b.ID]; !ok {
						counts[b.Name]++
						names[b.ID] = fmt.Sprintf("%s#%d", b.Name, counts[b.Name])
					}
				case llm.BlockToolResult:
					if n := names[b.ToolUseID]; n != "" {
						out[n] = strings.ReplaceAll(b.ResultText(), work, "$CWD")
					}
				}
			}
		}
	}
	return out
}

// TestCaptureClaudeTools regenerates the capture the golden test below
// compares with, from a Claude Code binary (not run without -claude-bin):
//
//	npm i --prefix /tmp/peers @anthropic-ai/claude-code@2.1.328
//	go test ./internal/cli -run TestCaptureClaudeTools -claude-bin /tmp/peers/node_modules/.bin/claude
func TestCaptureClaudeTools(t *testing.T) {
	if *claudeBin == "" {
		t.Skip("-claude-bin not set")
	}
	out, s, work, home := captureClaude(t, *claudeBin)
	writeCapture(t, toolsCaptureFile, normaliseCapture(t, out, work, home))
	// Only the denied call's: what a hook's deny reason becomes for the
	// model is the fact the golden test needs.
	b, _ := json.MarshalIndent(map[string]string{"Bash#3": modelToolResults(s, work)["Bash#3"]}, "", "  ")
	if err := os.WriteFile(toolsRequestsFile, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// toolResultShapes returns, for each of the main agent's tool calls in
// order ("Bash#1", "Bash#2", …), the key paths and JSON types of its
// tool_use_result ("" → "string" for a plain text result).
func toolResultShapes(evs []map[string]any) (order []string, shapes map[string]map[string]string) {
	shapes = map[string]map[string]string{}
	names := map[string]string{}
	counts := map[string]int{}
	var ids []string // call ids in call order; ids are normalised, so keep positions
	for _, ev := range evs {
		if ev["parent_tool_use_id"] != nil {
			continue
		}
		msg, _ := ev["message"].(map[string]any)
		content, _ := msg["content"].([]any)
		switch ev["type"] {
		case "assistant":
			for _, c := range content {
				b, _ := c.(map[string]any)
				if b["type"] == "tool_use" {
					name, _ := b["name"].(string)
					counts[name]++
					key := fmt.Sprintf("%s#%d", name, counts[name])
					ids = append(ids, key)
					names[key] = name
				}
			}
		case "user":
			r, ok := ev["tool_use_result"]
			if !ok {
				continue
			}
			// Results of one message's calls come in call order in
			// cadre and as they finish in Claude Code: match a result
			// to the first open call of a tool whose shape fits.
			key := matchCall(ids, shapes, r)
			if key == "" {
				continue
			}
			sh := map[string]string{}
			switch x := r.(type) {
			case string:
				sh[""] = "string"
			default:
				flatten(sh, "", x)
			}
			shapes[key] = sh
			order = append(order, key)
		}
	}
	return order, shapes
}

// matchCall picks the call a tool_use_result belongs to: the first call
// without a result yet, preferring, for Grep, the call whose mode the
// result names.
func matchCall(ids []string, done map[string]map[string]string, r any) string {
	mode := ""
	if m, ok := r.(map[string]any); ok {
		mode, _ = m["mode"].(string)
	}
	first := ""
	for _, id := range ids {
		if done[id] != nil {
			continue
		}
		if first == "" {
			first = id
		}
		if mode != "" && strings.HasPrefix(id, "Grep#") && grepModes[id] == mode {
			return id
		}
	}
	return first
}

// grepModes is the output mode of each of toolsScenario's Grep calls.
var grepModes = map[string]string{"Grep#1": "files_with_matches", "Grep#2": "content", "Grep#3": "count"}

// toolShapeDifferences are the tool_use_result keys where cadre differs
// from Claude Code on purpose, by call and key path, with the reason; a
// "+" before the path marks a key only cadre has.
var toolShapeDifferences = map[string]map[string]string{}

// TestStreamJSONToolResultsMatchClaudeCode is the golden comparison of
// cadre's stream-json with Claude Code 2.1.328's on toolsScenario (every
// built-in tool with a structured result, a failing and a hook-denied
// Bash call, a foreground and a background sub-agent, the notification
// turn), both normalised by normaliseCapture. It compares shapes, never
// values: each tool call's tool_use_result keys and JSON types; every
// event kind's keys and types; the order facts checkStreamOrder lists; and
// what the model is sent for the hook-denied call. What differs on purpose
// is listed with its reason: toolShapeDifferences, streamDifferences,
// golden_test.go's notActionable, and the deny text (point 4 below).
// Values differ where the runtimes do (Read's numLines and totalLines take
// a file's last newline as the end of its last line, where Claude Code
// counts an empty line after it; Grep shows the model absolute paths), and Claude Code writes the first turn's result late, after
// the notification turn's init; the test does not hold either to the
// other there.
func TestStreamJSONToolResultsMatchClaudeCode(t *testing.T) {
	t.Parallel()
	want := readCapture(t, toolsCaptureFile)
	s, env := server(t)
	cmd, out, errb, home := cadreCmd(t, env, "", append([]string{"-p", toolsPrompt}, toolsArgs...)...)
	toolsScenario(t, s, cmd.Dir, home)
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, errb)
	}
	got := normaliseCapture(t, out.String(), cmd.Dir, home)
	if testing.Verbose() {
		t.Log(out.String())
	}

	// 1. Every tool call's tool_use_result: same keys, same JSON types.
	wantOrder, wantShapes := toolResultShapes(want)
	gotOrder, gotShapes := toolResultShapes(got)
	if strings.Join(sortedCopy(wantOrder), " ") != strings.Join(sortedCopy(gotOrder), " ") {
		t.Errorf("tool calls with a tool_use_result: cadre %v, Claude Code %v", gotOrder, wantOrder)
	}
	var diffs []string
	for _, call := range wantOrder {
		w, g := wantShapes[call], gotShapes[call]
		if g == nil {
			continue
		}
		for path, typ := range w {
			if _, ok := toolShapeDifferences[call][path]; ok || skipped("user", "tool_use_result."+path) {
				continue // golden_test.go's notActionable says why
			}
			if gt, ok := g[path]; !ok {
				diffs = append(diffs, fmt.Sprintf("%s: %s missing (Claude Code: %s)", call, path, typ))
			} else if gt != typ && typ != "null" && gt != "null" {
				diffs = append(diffs, fmt.Sprintf("%s: %s is %s, Claude Code's %s", call, path, gt, typ))
			}
		}
		for path := range g {
			if _, ok := w[path]; !ok {
				if _, ok := toolShapeDifferences[call]["+"+path]; !ok {
					diffs = append(diffs, fmt.Sprintf("%s: %s only in cadre", call, path))
				}
			}
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		t.Errorf("tool_use_result shapes differ from Claude Code 2.1.328's:\n%s", strings.Join(diffs, "\n"))
	}

	// 2. Every kind of event (type/subtype, sub-agent or not) Claude Code
	// wrote, with its keys and their types (golden_test.go's
	// notActionable and streamDifferences say what is skipped and why).
	if d := schemaDiffs(schemaOfEvents(want), schemaOfEvents(got)); len(d) > 0 {
		var left []string
		for _, x := range d {
			if !streamDifference(x) {
				left = append(left, x)
			}
		}
		if len(left) > 0 {
			t.Errorf("cadre's stream-json lacks what Claude Code's has:\n%s", strings.Join(left, "\n"))
		}
	}

	// 3. Order: the main agent's tool calls; one init before each turn
	// and one result after it, numbered, the notification turn's with
	// origin {kind, producer, runId} naming the background task's run;
	// each task starts before its notification, a background one before
	// its launch's tool_use_result; a foreground child's
	// prompt shows as a user line, a background child's does not.
	for name, evs := range map[string][]map[string]any{"Claude Code": want, "cadre": got} {
		t.Run(name, func(t *testing.T) { checkStreamOrder(t, evs) })
	}
	if w, g := mainToolCalls(want), mainToolCalls(got); strings.Join(w, " ") != strings.Join(g, " ") {
		t.Errorf("main agent's tool calls: cadre %v, Claude Code %v", g, w)
	}

	// 4. A PreToolUse hook's deny reason: Claude Code sends the model its
	// own label before it ("PreToolUse:Bash hook error: "); cadre sends
	// the reason exactly as the hook gave it, and the stream's
	// tool_use_result is that reason as a failed call's ("Error: …").
	b, err := os.ReadFile(toolsRequestsFile)
	if err != nil {
		t.Fatal(err)
	}
	var claudeModel map[string]string
	if err := json.Unmarshal(b, &claudeModel); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(claudeModel["Bash#3"], denyReason) {
		t.Fatalf("the capture's denied call does not carry the reason: %q", claudeModel["Bash#3"])
	}
	if got := modelToolResults(s, cmd.Dir)["Bash#3"]; got != denyReason {
		t.Errorf("the model got %q for the hook-denied call, want the hook's reason %q as given", got, denyReason)
	}
	if r := gotShapes["Bash#3"]; r == nil || r[""] != "string" {
		t.Errorf("the denied call's tool_use_result: %v", r)
	}
	for _, ev := range got {
		if r, ok := ev["tool_use_result"].(string); ok && strings.Contains(r, "DENYME") && r != "Error: "+denyReason {
			t.Errorf("the denied call's tool_use_result is %q, want %q", r, "Error: "+denyReason)
		}
	}
}

// streamDifferences are differences of whole events or keys between
// cadre's stream-json and Claude Code's on toolsScenario, by the text
// schemaDiffs reports, with the reason each is on purpose.
var streamDifferences = map[string]string{
	"assistant: request_id missing (string)":             "Claude Code's id of its HTTP request; cadre's answers carry the provider's message id",
	"assistant (sub-agent): request_id missing (string)": "as for the main agent",
	"user: tool_result_meta missing (array)":             "already in golden_test.go's notActionable: per-call permission decisions are not carried by cadre's events",
	"user (sub-agent): tool_result_meta missing (array)": "as for the main agent",
}

// streamDifference reports whether a schemaDiffs line is a difference on
// purpose (streamDifferences, or any key under tool_result_meta or
// request_id, or a key notActionable names).
func streamDifference(line string) bool {
	if _, ok := streamDifferences[line]; ok {
		return true
	}
	return strings.Contains(line, "tool_result_meta") || strings.Contains(line, "request_id")
}

// schemaOfEvents is schemaOf over normalised events.
func schemaOfEvents(evs []map[string]any) map[string]map[string]string {
	kinds := map[string]map[string]string{}
	for _, ev := range evs {
		k := eventKind(ev)
		if kinds[k] == nil {
			kinds[k] = map[string]string{}
		}
		flatten(kinds[k], "", ev)
	}
	return kinds
}

// mainToolCalls lists the names of the main agent's tool calls in order.
func mainToolCalls(evs []map[string]any) []string {
	var out []string
	for _, ev := range evs {
		if ev["type"] != "assistant" || ev["parent_tool_use_id"] != nil {
			continue
		}
		msg, _ := ev["message"].(map[string]any)
		content, _ := msg["content"].([]any)
		for _, c := range content {
			if b, _ := c.(map[string]any); b["type"] == "tool_use" {
				out = append(out, b["name"].(string))
			}
		}
	}
	return out
}

// checkStreamOrder checks toolsScenario's order facts on one output (ids
// are normalised, so tasks are told apart by description).
func checkStreamOrder(t *testing.T, evs []map[string]any) {
	inits, results := 0, 0
	started := map[string]bool{}
	notified := map[string]bool{}
	prompts := map[string]int{}
	var origins []any
	for _, ev := range evs {
		switch kind := eventKind(ev); kind {
		case "system/init":
			inits++
		case "result/success":
			if ev["result_index"] != float64(results) {
				t.Errorf("result %d has result_index %v", results, ev["result_index"])
			}
			results++
			origins = append(origins, ev["origin"])
		case "system/task_started":
			started[ev["description"].(string)] = true
		case "system/task_notification":
			// Claude Code's notification names no description: the one
			// task started and not yet notified, in start order.
			for d := range started {
				if !notified[d] {
					notified[d] = true
					break
				}
			}
		case "user (sub-agent prompt)":
			prompts[ev["task_description"].(string)]++
		case "user":
			if r, _ := ev["tool_use_result"].(map[string]any); r["status"] == "async_launched" && !started[r["description"].(string)] {
				t.Errorf("the launch of %v came before its task_started", r["description"])
			}
		}
	}
	if inits != 2 || results != 2 {
		t.Errorf("%d inits and %d results, want one of each per turn (2)", inits, results)
	}
	if len(origins) == 2 {
		if origins[0] != nil {
			t.Errorf("the prompt's result has origin %v", origins[0])
		}
		o, _ := origins[1].(map[string]any)
		if o["kind"] != "task-notification" || o["producer"] != "session-task" || o["runId"] != "<runId>" {
			t.Errorf("the notification turn's origin: %v", origins[1])
		}
	}
	if len(started) != 2 || len(notified) != 2 {
		t.Errorf("tasks started %v, notified %v", started, notified)
	}
	if prompts["foreground job"] != 1 || prompts["background job"] != 0 {
		t.Errorf("sub-agent prompt lines by task: %v, want the foreground child's only", prompts)
	}
}

// sortedCopy returns a sorted copy of s.
func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
