package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/hooks"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/anthropic"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/tool"
	"github.com/cadre-dev/cadre/tool/builtin"
)

// hookWorld is one scenario: a project directory, the scripted model
// server reached through the Anthropic SDK, and a dispatcher with the
// scenario's hooks.
type hookWorld struct {
	t    *testing.T
	dir  string
	srv  *llmtest.Server
	m    llm.Model
	d    *hooks.Dispatcher
	obs  *runLog
	tool map[string]tool.Tool
}

// runLog records every hook run an observer sees.
type runLog struct {
	mu   sync.Mutex
	runs []hooks.Run
}

func (l *runLog) HookStarted(hooks.Run) {}

func (l *runLog) HookFinished(r hooks.Run) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.runs = append(l.runs, r)
}

func (l *runLog) all() []hooks.Run {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]hooks.Run(nil), l.runs...)
}

// newHookWorld parses settings (a hooks value; "{{DIR}}" is the project
// directory, "{{HOOKS}}" the directory of published-style scripts).
func newHookWorld(t *testing.T, settings string) *hookWorld {
	t.Helper()
	dir := t.TempDir()
	scripts, err := filepath.Abs("testdata/hooks")
	if err != nil {
		t.Fatal(err)
	}
	settings = strings.NewReplacer("{{DIR}}", dir, "{{HOOKS}}", scripts).Replace(settings)
	cfg, diags, err := hooks.Parse(json.RawMessage(settings), filepath.Join(dir, ".cadre/settings.json"))
	if err != nil || len(diags) > 0 {
		t.Fatalf("hooks: %v %v", err, diags)
	}
	srv := llmtest.NewServer()
	tr := &http.Transport{}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		srv.Close()
		if v := srv.Violations(); len(v) > 0 {
			t.Errorf("request invariants: %v", v)
		}
	})
	m, err := anthropic.New(anthropic.Config{APIKey: "test", BaseURL: srv.URL(), HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	obs := &runLog{}
	bc := builtin.Config{}
	return &hookWorld{t: t, dir: dir, srv: srv, m: m, obs: obs,
		d:    hooks.New(cfg, hooks.Options{ProjectDir: dir, Observer: obs}),
		tool: map[string]tool.Tool{"Bash": builtin.NewBash(bc), "Read": builtin.NewRead(bc), "Edit": builtin.NewEdit(bc), "Write": builtin.NewWrite(bc)},
	}
}

// session is a headless permission session in mode with rules
// ("deny:Bash(rm:*)") and a prompter (nil: nobody can answer).
func (w *hookWorld) session(mode permission.Mode, p permission.Prompter, rules ...string) *permission.Session {
	w.t.Helper()
	var rs []permission.Rule
	for _, s := range rules {
		b, body, _ := strings.Cut(s, ":")
		r, err := permission.ParseRule(body)
		if err != nil {
			w.t.Fatal(err)
		}
		r.Behavior, r.Source = permission.Behavior(b), "settings.json"
		rs = append(rs, r)
	}
	c, err := permission.NewChecker(permission.Config{Mode: mode, Cwd: w.dir, Rules: rs})
	if err != nil {
		w.t.Fatal(err)
	}
	s, err := permission.NewSession(permission.SessionConfig{Checker: c, Prompter: p})
	if err != nil {
		w.t.Fatal(err)
	}
	return s
}

func (w *hookWorld) config(auth permission.Authorizer, scope hooks.Scope) Config {
	if scope.SessionID == "" {
		scope.SessionID = "s1"
		scope.TranscriptPath = filepath.Join(w.dir, "s1.jsonl")
		scope.Cwd = w.dir
		scope.PermissionMode = func() permission.Mode { return permission.ModeDefault }
	}
	return Config{
		Model: w.m, ModelID: "claude-sonnet-4-5", MaxTokens: 1024,
		Tools:      tool.NewPool(w.tool["Bash"], w.tool["Read"], w.tool["Edit"], w.tool["Write"]),
		Env:        &tool.Env{Cwd: w.dir, Files: tool.NewFileState()},
		Authorizer: auth,
		Hooks:      w.d.ForAgent(scope),
		AgentID:    scope.AgentID, AgentType: scope.AgentType,
	}
}

// toolResults returns the text of every tool result the model was sent,
// in order.
func (w *hookWorld) toolResults() []string {
	var out []string
	seen := 0
	for _, r := range w.srv.Requests() {
		var all []string
		for _, m := range r.Messages {
			for _, b := range m.Content {
				if b.Type == llm.BlockToolResult {
					all = append(all, b.ResultText())
				}
			}
		}
		out = append(out, all[seen:]...)
		seen = len(all)
	}
	return out
}

func bash(cmd string) map[string]string { return map[string]string{"command": cmd} }

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// dumpAll is a hooks value with one script on every loop event that
// appends its stdin to {{DIR}}/events.jsonl.
const dumpAll = `{
 "UserPromptSubmit":[{"hooks":[{"type":"command","command":"in=$(cat); printf \"%s\\n\" \"$in\" >> {{DIR}}/events.jsonl"}]}],
 "PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"in=$(cat); printf \"%s\\n\" \"$in\" >> {{DIR}}/events.jsonl"}]}],
 "PostToolUse":[{"hooks":[{"type":"command","command":"in=$(cat); printf \"%s\\n\" \"$in\" >> {{DIR}}/events.jsonl"}]}],
 "PostToolUseFailure":[{"hooks":[{"type":"command","command":"in=$(cat); printf \"%s\\n\" \"$in\" >> {{DIR}}/events.jsonl"}]}],
 "Stop":[{"hooks":[{"type":"command","command":"in=$(cat); printf \"%s\\n\" \"$in\" >> {{DIR}}/events.jsonl"}]}],
 "SubagentStop":[{"hooks":[{"type":"command","command":"in=$(cat); printf \"%s\\n\" \"$in\" >> {{DIR}}/events.jsonl"}]}]
}`

func (w *hookWorld) events() []map[string]any {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(w.dir, "events.jsonl"))
	if err != nil {
		w.t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			w.t.Fatalf("hook input %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

func TestHooksFireAtEveryLoopPoint(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t, dumpAll)
	w.srv.Script("",
		llmtest.ToolUse("Bash", bash("echo hi")),
		llmtest.ToolUse("Read", map[string]string{"file_path": filepath.Join(w.dir, "missing.txt")}),
		llmtest.Text("all done"),
	)
	res, _, err := run(t, context.Background(), w.config(nil, hooks.Scope{}), "go")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "all done" || res.HookStop != nil {
		t.Fatalf("result %+v", res)
	}
	var got []string
	for _, e := range w.events() {
		s := fmt.Sprint(e["hook_event_name"])
		if tn, ok := e["tool_name"]; ok {
			s += " " + fmt.Sprint(tn)
		}
		got = append(got, s)
		if e["session_id"] != "s1" || e["cwd"] != w.dir || e["permission_mode"] != "default" {
			t.Errorf("common fields: %v", e)
		}
		if _, ok := e["agent_id"]; ok {
			t.Errorf("main agent input has agent_id: %v", e)
		}
	}
	want := []string{"UserPromptSubmit", "PreToolUse Bash", "PostToolUse Bash", "PreToolUse Read", "PostToolUseFailure Read", "Stop"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
	ev := w.events()
	if ev[0]["prompt"] != "go" || ev[2]["tool_response"] != "hi" || ev[1]["tool_use_id"] == "" {
		t.Errorf("payloads: %v / %v / %v", ev[0], ev[1], ev[2])
	}
	if !strings.Contains(fmt.Sprint(ev[4]["error"]), "missing.txt") || ev[4]["is_interrupt"] != false {
		t.Errorf("failure payload: %v", ev[4])
	}
	if ev[5]["last_assistant_message"] != "all done" || ev[5]["stop_hook_active"] != false {
		t.Errorf("stop payload: %v", ev[5])
	}
}

func TestHooksInASubagentCarryItsIdentity(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t, dumpAll)
	w.srv.Script("", llmtest.ToolUse("Bash", bash("true")), llmtest.Text("child done"))
	scope := hooks.Scope{SessionID: "s1", TranscriptPath: "/t/s1.jsonl", Cwd: w.dir, AgentID: "a1", AgentType: "Explore", AgentTranscriptPath: "/t/s1/agent-a1.jsonl"}
	if _, _, err := run(t, context.Background(), w.config(nil, scope), "look around"); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range w.events() {
		got = append(got, fmt.Sprint(e["hook_event_name"], " ", e["agent_id"], " ", e["agent_type"]))
	}
	// No UserPromptSubmit (the prompt is the parent's), Stop is SubagentStop.
	want := []string{"PreToolUse a1 Explore", "PostToolUse a1 Explore", "SubagentStop a1 Explore"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if e := w.events()[2]; e["agent_transcript_path"] != "/t/s1/agent-a1.jsonl" || e["last_assistant_message"] != "child done" {
		t.Errorf("SubagentStop payload %v", e)
	}
}

func TestPreToolUseExit2BlocksAndTheModelSeesStderr(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t, `{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"cat >/dev/null; echo 'no touching today' >&2; exit 2"}]}]}`)
	marker := filepath.Join(w.dir, "marker")
	w.srv.Script("", llmtest.ToolUse("Bash", bash("touch "+marker)), llmtest.Text("ok"))
	log := &permission.DenialLog{}
	c, _ := permission.NewChecker(permission.Config{Mode: permission.ModeBypassPermissions, Cwd: w.dir})
	s, _ := permission.NewSession(permission.SessionConfig{Checker: c, Log: log})
	_, evs, err := run(t, context.Background(), w.config(s, hooks.Scope{}), "go")
	if err != nil {
		t.Fatal(err)
	}
	if exists(marker) {
		t.Error("the blocked command ran")
	}
	res := w.toolResults()
	if len(res) != 1 || res[0] != "no touching today" { // the hook's text as given (issue 29)
		t.Errorf("model saw %q", res)
	}
	var denied bool
	for _, e := range evs {
		if e.Kind == ToolEnd {
			denied = e.ToolResult.Denied && e.ToolResult.Output.IsError
		}
	}
	if d := log.All(); !denied || len(d) != 1 || d[0].Source != permission.SourceHook || d[0].Reason != "no touching today" {
		t.Errorf("denied %v, denials %+v", denied, d)
	}
}

// pretool returns a PreToolUse hooks value whose hook prints out.
func pretool(out string) string {
	cmd, _ := json.Marshal("cat >/dev/null; cat <<'EOF'\n" + out + "\nEOF")
	return `{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":` + string(cmd) + `}]}]}`
}

type answerPrompter struct {
	mu     sync.Mutex
	asked  []permission.Prompt
	answer permission.Choice
}

func (p *answerPrompter) Prompt(_ context.Context, pr permission.Prompt) (permission.Reply, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, pr)
	return permission.Reply{Choice: p.answer}, nil
}

func TestPreToolUsePermissionDecisions(t *testing.T) {
	t.Parallel()
	const (
		deny    = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not on Fridays"}}`
		allow   = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"vetted"}}`
		ask     = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"double-check"}}`
		updated = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"echo changed"}}}`
	)
	tests := []struct {
		name     string
		hook     string
		mode     permission.Mode
		rules    []string
		prompter *answerPrompter
		ran      bool   // the touch ran
		result   string // in what the model saw
		asked    int
	}{
		{name: "deny", hook: deny, mode: permission.ModeBypassPermissions, result: "not on Fridays"},
		{name: "allow skips the prompt headless", hook: allow, mode: permission.ModeDefault, ran: true},
		{name: "without the hook the same call is denied headless", hook: `{}`, mode: permission.ModeDefault, result: "headless"},
		{name: "deny rule wins over allow", hook: allow, mode: permission.ModeBypassPermissions, rules: []string{"deny:Bash(touch:*)"}, result: "no allow rule can override a deny rule"},
		{name: "ask prompts in bypass mode", hook: ask, mode: permission.ModeBypassPermissions, prompter: &answerPrompter{answer: permission.ChoiceAllowOnce}, ran: true, asked: 1},
		{name: "ask headless is denied with the reason", hook: ask, mode: permission.ModeBypassPermissions, result: "ouble-check"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newHookWorld(t, pretool(tt.hook))
			marker := filepath.Join(w.dir, "marker")
			w.srv.Script("", llmtest.ToolUse("Bash", bash("touch "+marker)), llmtest.Text("ok"))
			var p permission.Prompter
			if tt.prompter != nil {
				p = tt.prompter
			}
			if _, _, err := run(t, context.Background(), w.config(w.session(tt.mode, p, tt.rules...), hooks.Scope{}), "go"); err != nil {
				t.Fatal(err)
			}
			if exists(marker) != tt.ran {
				t.Errorf("ran = %v, want %v (model saw %q)", exists(marker), tt.ran, w.toolResults())
			}
			if res := w.toolResults(); len(res) != 1 || !strings.Contains(res[0], tt.result) {
				t.Errorf("model saw %q, want it to contain %q", res, tt.result)
			}
			if tt.prompter != nil && (len(tt.prompter.asked) != tt.asked || tt.prompter.asked[0].Decision.Reason != "double-check") {
				t.Errorf("asked %+v", tt.prompter.asked)
			}
		})
	}

	t.Run("updatedInput", func(t *testing.T) {
		t.Parallel()
		w := newHookWorld(t, pretool(updated))
		w.srv.Script("", llmtest.ToolUse("Bash", bash("echo original")), llmtest.Text("ok"))
		if _, _, err := run(t, context.Background(), w.config(w.session(permission.ModeDefault, nil), hooks.Scope{}), "go"); err != nil {
			t.Fatal(err)
		}
		if res := w.toolResults(); len(res) != 1 || strings.TrimSpace(res[0]) != "changed" {
			t.Errorf("model saw %q", res)
		}
	})

	t.Run("no authorizer: allow runs, ask is refused", func(t *testing.T) {
		t.Parallel()
		w := newHookWorld(t, pretool(ask))
		w.srv.Script("", llmtest.ToolUse("Bash", bash("echo should-not-run")), llmtest.Text("ok"))
		if _, _, err := run(t, context.Background(), w.config(nil, hooks.Scope{}), "go"); err != nil {
			t.Fatal(err)
		}
		if res := w.toolResults(); len(res) != 1 || !strings.Contains(res[0], "no one can answer") {
			t.Errorf("model saw %q", res)
		}
	})
}

func TestStopHookBlockKeepsTheAgentGoing(t *testing.T) {
	t.Parallel()
	// Blocks the first stop only, the way Claude Code's docs tell hook
	// authors to: by looking at stop_hook_active.
	w := newHookWorld(t, `{"Stop":[{"hooks":[{"type":"command","command":"in=$(cat); echo \"$in\" >> {{DIR}}/stops.jsonl; case \"$in\" in *'\"stop_hook_active\":false'*) echo '{\"decision\":\"block\",\"reason\":\"run the tests first\"}';; esac"}]}]}`)
	w.srv.Script("", llmtest.Text("done, I think"), llmtest.Text("tests pass, done"))
	rec := &memRecorder{}
	cfg := w.config(nil, hooks.Scope{})
	cfg.Recorder = rec
	res, _, err := run(t, context.Background(), cfg, "go")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "tests pass, done" || res.Turns != 2 {
		t.Fatalf("result %q after %d turns", res.Text, res.Turns)
	}
	reqs := w.srv.Requests()
	if got := reqs[1].LastUserText(); !strings.Contains(got, "run the tests first") || !strings.Contains(got, "Stop hook") {
		t.Errorf("second request's last user message %q", got)
	}
	if n := len(rec.msgs); n != 4 || rec.msgs[2].Role != llm.RoleUser {
		t.Errorf("recorded %d messages", n)
	}
	lines := strings.Split(strings.TrimSpace(readFile(t, filepath.Join(w.dir, "stops.jsonl"))), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"stop_hook_active":false`) || !strings.Contains(lines[1], `"stop_hook_active":true`) {
		t.Errorf("stop inputs %q", lines)
	}
}

func TestSubagentStopExit2MakesTheChildContinueOnce(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t, `{"SubagentStop":[{"hooks":[{"type":"command","command":"in=$(cat); case \"$in\" in *'\"stop_hook_active\":false'*) echo 'also list the tests' >&2; exit 2;; esac"}]}]}`)
	w.srv.Script("", llmtest.Text("first report"), llmtest.Text("report with tests"))
	scope := hooks.Scope{SessionID: "s1", Cwd: w.dir, AgentID: "a7", AgentType: "worker"}
	res, _, err := run(t, context.Background(), w.config(nil, scope), "do it")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "report with tests" || len(w.srv.Requests()) != 2 {
		t.Fatalf("result %q after %d requests", res.Text, len(w.srv.Requests()))
	}
	if got := w.srv.Requests()[1].LastUserText(); !strings.Contains(got, "also list the tests") || !strings.Contains(got, "SubagentStop hook") {
		t.Errorf("child was told %q", got)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestAHookPastItsTimeoutIsKilledAndTheRunGoesOn(t *testing.T) {
	t.Parallel()
	// The sleep's argument is unique, so its process can be found whether
	// or not the hook got as far as starting it before the timeout.
	marker := fmt.Sprintf("300.%09d", time.Now().UnixNano()%1e9)
	w := newHookWorld(t, `{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"cat >/dev/null; sleep `+marker+` & wait","timeout":1}]}]}`)
	w.srv.Script("", llmtest.ToolUse("Bash", bash("echo still-ran")), llmtest.Text("finished"))
	res, _, err := run(t, context.Background(), w.config(nil, hooks.Scope{}), "go")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "finished" {
		t.Fatalf("result %q", res.Text)
	}
	if r := w.toolResults(); len(r) != 1 || strings.TrimSpace(r[0]) != "still-ran" {
		t.Errorf("model saw %q", r)
	}
	runs := w.obs.all()
	if len(runs) != 1 || !runs[0].TimedOut {
		t.Fatalf("runs %+v", runs)
	}
	waitNoProcess(t, "sleep "+marker)
}

// waitNoProcess polls until no process has cmdline; the deadline is only a
// safety net (a killed process may take a moment to be reaped).
func waitNoProcess(t *testing.T, cmdline string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids := processesWith(cmdline)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("%q still running: %v", cmdline, pids)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// processesWith returns the running (not zombie) processes whose command
// line is cmdline.
func processesWith(cmdline string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || strings.TrimRight(strings.ReplaceAll(string(b), "\x00", " "), " ") != cmdline {
			continue
		}
		if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			if f := strings.Fields(string(st)); len(f) > 2 && f[2] != "Z" {
				out = append(out, pid)
			}
		}
	}
	return out
}

func TestUserPromptSubmitContextReachesTheModel(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t, `{"UserPromptSubmit":[
	  {"hooks":[{"type":"command","command":"cat >/dev/null; echo '{\"hookSpecificOutput\":{\"hookEventName\":\"UserPromptSubmit\",\"additionalContext\":\"The build is broken on main.\"}}'"}]},
	  {"hooks":[{"type":"command","command":"cat >/dev/null; echo 'Sprint ends Friday.'"}]}]}`)
	w.srv.Script("", llmtest.Text("noted"))
	rec := &memRecorder{}
	cfg := w.config(nil, hooks.Scope{})
	cfg.Recorder = rec
	if _, _, err := run(t, context.Background(), cfg, "what's up?"); err != nil {
		t.Fatal(err)
	}
	first := w.srv.Requests()[0].Messages[0]
	if len(first.Content) != 2 || first.Content[1].Text != "what's up?" {
		t.Fatalf("first message %+v", first)
	}
	ctxText := first.Content[0].Text
	if !strings.Contains(ctxText, "The build is broken on main.") || !strings.Contains(ctxText, "Sprint ends Friday.") || !strings.Contains(ctxText, "UserPromptSubmit") {
		t.Errorf("context block %q", ctxText)
	}
	if len(rec.msgs) == 0 || len(rec.msgs[0].Content) != 2 {
		t.Errorf("the recorded prompt lacks the context: %+v", rec.msgs)
	}
}

func TestUserPromptSubmitBlockEndsTheRunBeforeTheModel(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t, `{"UserPromptSubmit":[{"hooks":[{"type":"command","command":"cat >/dev/null; echo 'prompt mentions a secret' >&2; exit 2"}]}]}`)
	res, _, err := run(t, context.Background(), w.config(nil, hooks.Scope{}), "my key is hunter2")
	if err != nil {
		t.Fatal(err)
	}
	if res.HookStop == nil || res.HookStop.Event != hooks.UserPromptSubmit || res.HookStop.Reason != "prompt mentions a secret" || len(res.Messages) != 0 {
		t.Fatalf("result %+v", res)
	}
	if n := len(w.srv.Requests()); n != 0 {
		t.Errorf("%d model requests", n)
	}
}

func TestPostToolUseFeedbackAndContext(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t, `{
	  "PostToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"cat >/dev/null; echo '{\"decision\":\"block\",\"reason\":\"output had a warning\",\"hookSpecificOutput\":{\"hookEventName\":\"PostToolUse\",\"additionalContext\":\"see docs/warnings.md\"}}'"}]}],
	  "PostToolUseFailure":[{"matcher":"Read","hooks":[{"type":"command","command":"cat >/dev/null; echo 'try Glob first' >&2; exit 2"}]}]}`)
	w.srv.Script("",
		llmtest.ToolUse("Bash", bash("echo hi")),
		llmtest.ToolUse("Read", map[string]string{"file_path": filepath.Join(w.dir, "nope")}),
		llmtest.Text("ok"))
	if _, _, err := run(t, context.Background(), w.config(nil, hooks.Scope{}), "go"); err != nil {
		t.Fatal(err)
	}
	r := w.toolResults()
	if len(r) != 2 {
		t.Fatalf("results %q", r)
	}
	if !strings.HasPrefix(r[0], "hi\n") || !strings.Contains(r[0], "output had a warning") || !strings.Contains(r[0], "see docs/warnings.md") {
		t.Errorf("PostToolUse result %q", r[0])
	}
	if !strings.Contains(r[1], "try Glob first") || !strings.Contains(r[1], "PostToolUseFailure") {
		t.Errorf("PostToolUseFailure result %q", r[1])
	}
}

func TestContinueFalseEndsTheRunAfterTheBatch(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t, `{"PostToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"cat >/dev/null; echo '{\"continue\":false,\"stopReason\":\"budget reached\"}'"}]}]}`)
	second := filepath.Join(w.dir, "second")
	w.srv.Script("",
		llmtest.ToolUse("Bash", bash("echo one")).WithToolUse("Bash", bash("touch "+second)),
		llmtest.Text("never asked"))
	res, _, err := run(t, context.Background(), w.config(nil, hooks.Scope{}), "go")
	if err != nil {
		t.Fatal(err)
	}
	if res.HookStop == nil || res.HookStop.Event != hooks.PostToolUse || res.HookStop.Reason != "budget reached" {
		t.Fatalf("result %+v", res)
	}
	if len(w.srv.Requests()) != 1 || exists(second) {
		t.Errorf("%d requests; second call ran: %v", len(w.srv.Requests()), exists(second))
	}
	// The history stays valid: both calls have results.
	last := res.Messages[len(res.Messages)-1]
	if last.Role != llm.RoleUser || len(last.Content) != 2 || !strings.Contains(last.Content[1].ResultText(), "budget reached") {
		t.Errorf("last message %+v", last)
	}
}

func TestPublishedStyleScriptsRunUnchanged(t *testing.T) {
	t.Parallel()
	for _, bin := range []string{"bash", "jq", "gofmt"} {
		if _, err := execLookPath(bin); err != nil {
			t.Fatalf("%s is needed (installed by .ci/run): %v", bin, err)
		}
	}
	w := newHookWorld(t, `{
	  "PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"{{HOOKS}}/bash-guard.sh"}]}],
	  "PostToolUse":[{"matcher":"Edit|Write","hooks":[{"type":"command","command":"{{HOOKS}}/format-after-edit.sh"}]}],
	  "SubagentStop":[{"hooks":[{"type":"command","command":"{{HOOKS}}/subagent-stop-logger.sh"}]}]}`)
	goFile := filepath.Join(w.dir, "main.go")
	keep := filepath.Join(w.dir, "keep")
	if err := os.Mkdir(keep, 0o755); err != nil {
		t.Fatal(err)
	}
	w.srv.Script("",
		llmtest.ToolUse("Write", map[string]string{"file_path": goFile, "content": "package main\nfunc main(){println(  1)}\n"}),
		llmtest.ToolUse("Bash", bash("rm -rf "+keep)),
		llmtest.ToolUse("Bash", bash("ls "+keep)),
		llmtest.Text("child report"))
	scope := hooks.Scope{SessionID: "s1", TranscriptPath: "/t/s1.jsonl", Cwd: w.dir, AgentID: "a3", AgentType: "general-purpose", AgentTranscriptPath: "/t/s1/agent-a3.jsonl"}
	if _, _, err := run(t, context.Background(), w.config(w.session(permission.ModeBypassPermissions, nil), scope), "work"); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, goFile); got != "package main\n\nfunc main() { println(1) }\n" {
		t.Errorf("formatter: %q", got)
	}
	if !exists(keep) {
		t.Error("the guard let rm -rf through")
	}
	r := w.toolResults()
	if len(r) != 3 || !strings.Contains(r[1], "Blocked: 'rm -rf' is not allowed here") || strings.Contains(r[2], "Blocked") {
		t.Errorf("model saw %q", r)
	}
	if got := readFile(t, filepath.Join(w.dir, ".claude", "subagents.log")); got != "general-purpose a3 /t/s1/agent-a3.jsonl: child report\n" {
		t.Errorf("logger wrote %q", got)
	}
	for _, run := range w.obs.all() {
		if run.ExitCode != 0 && run.ExitCode != 2 || run.Err != nil {
			t.Errorf("hook failed: %+v", run)
		}
	}
}

func TestHooksOfParallelReadsFireOncePerCall(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t, dumpAll)
	a, b := filepath.Join(w.dir, "a.txt"), filepath.Join(w.dir, "b.txt")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w.srv.Script("",
		llmtest.ToolUse("Read", map[string]string{"file_path": a}).WithToolUse("Read", map[string]string{"file_path": b}),
		llmtest.Text("read both"))
	if _, _, err := run(t, context.Background(), w.config(nil, hooks.Scope{}), "go"); err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, e := range w.events() {
		if in, ok := e["tool_input"].(map[string]any); ok {
			count[fmt.Sprint(e["hook_event_name"], " ", in["file_path"])]++
		}
	}
	want := map[string]int{"PreToolUse " + a: 1, "PreToolUse " + b: 1, "PostToolUse " + a: 1, "PostToolUse " + b: 1}
	if diff := cmp.Diff(want, count); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func execLookPath(bin string) (string, error) { return exec.LookPath(bin) }

// runWithFrontmatter runs one agent the way the runtime runs a child with
// frontmatter hooks: registered for the agent, removed by defer on every
// way out. body sees each event and may stop ranging or panic.
func runWithFrontmatter(d *hooks.Dispatcher, id string, fm *hooks.Config, cfg Config, body func(Event) bool) (err error) {
	remove := d.AddForAgent(id, fm)
	defer remove()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	for ev, e := range Run(context.Background(), cfg, []llm.Message{llm.UserText("task " + id)}) {
		if e != nil {
			return e
		}
		if !body(ev) {
			return nil
		}
	}
	return nil
}

func TestFrontmatterHooksLiveAsLongAsTheirAgent(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t, `{}`)
	log := filepath.Join(w.dir, "fm.log")
	fm, _, err := hooks.ParseAgent(json.RawMessage(`{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"in=$(cat); echo \"$in\" | jq -r .agent_id >> `+log+`"}]}],
	  "Stop":[{"hooks":[{"type":"command","command":"in=$(cat); echo \"$in\" | jq -r '.hook_event_name + \" \" + .agent_id' >> `+log+`"}]}]}`), "agents/x.md")
	if err != nil {
		t.Fatal(err)
	}
	scope := func(id string) hooks.Scope {
		return hooks.Scope{SessionID: "s1", Cwd: w.dir, AgentID: id, AgentType: "x"}
	}
	all := func(Event) bool { return true }
	w.srv.Script("task a1", llmtest.ToolUse("Bash", bash("true")), llmtest.ToolUse("Bash", bash("true")), llmtest.Text("a1 done"))
	w.srv.Script("task a2", llmtest.ToolUse("Bash", bash("true")), llmtest.Text("a2 done"))
	w.srv.Script("task a3", llmtest.HTTPError(400, "bad request"))
	w.srv.Script("task a4", llmtest.ToolUse("Bash", bash("true")), llmtest.ToolUse("Bash", bash("true")))
	w.srv.Script("task a5", llmtest.ToolUse("Bash", bash("true")))

	exits := []struct {
		id      string
		fm      *hooks.Config
		body    func(Event) bool
		wantErr string
	}{
		{"a1", fm, all, ""},    // normal end
		{"a2", nil, all, ""},   // an agent without frontmatter: a1's hooks are gone
		{"a3", fm, all, "400"}, // model error
		{"a4", fm, func(e Event) bool { return e.Kind != ToolEnd }, ""}, // consumer stops (cancel)
		{"a5", fm, func(e Event) bool {
			if e.Kind == ToolEnd {
				panic("consumer bug")
			}
			return true
		}, "panic: consumer bug"},
	}
	for _, x := range exits {
		cfg := w.config(nil, scope(x.id))
		err := runWithFrontmatter(w.d, x.id, x.fm, cfg, x.body)
		if (err == nil) != (x.wantErr == "") || err != nil && !strings.Contains(err.Error(), x.wantErr) {
			t.Errorf("%s: err = %v, want %q", x.id, err, x.wantErr)
		}
		if n := w.d.Registered(x.id).Len(); n != 0 {
			t.Errorf("%s: %d frontmatter hooks left after exit", x.id, n)
		}
	}
	// a1: two Bash calls and its stop (as SubagentStop); a2 nothing; a3
	// never got a call; a4 its first call; a5 its first call.
	want := []string{"a1", "a1", "SubagentStop a1", "a4", "a5"}
	if diff := cmp.Diff(want, strings.Split(strings.TrimSpace(readFile(t, log)), "\n")); diff != "" {
		t.Errorf("frontmatter hook runs (-want +got):\n%s", diff)
	}
}
