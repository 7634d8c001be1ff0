package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/cadre-dev/cadre/permission"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// script writes an executable shell script and returns its path.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// settings parses a hooks value or fails the test.
func settings(t *testing.T, raw string) *Config {
	t.Helper()
	c, diags, err := Parse(json.RawMessage(raw), "settings.json")
	if err != nil || len(diags) > 0 {
		t.Fatalf("parse: %v %v", err, diags)
	}
	return c
}

// cmdHooks builds {"EVENT":[{"matcher":M,"hooks":[{"type":"command","command":C}…]}]}.
func cmdHooks(event Event, matcher string, commands ...string) string {
	var hs []string
	for _, c := range commands {
		b, _ := json.Marshal(c)
		hs = append(hs, `{"type":"command","command":`+string(b)+`}`)
	}
	m, _ := json.Marshal(matcher)
	return fmt.Sprintf(`{%q:[{"matcher":%s,"hooks":[%s]}]}`, event, m, strings.Join(hs, ","))
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

func TestFireRealScriptGetsStdinEnvAndCwd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	project := t.TempDir()
	agentCwd := t.TempDir()
	log := filepath.Join(dir, "log")
	dump := script(t, dir, "dump.sh", `cat >> "`+log+`"; echo >> "`+log+`"
echo "$CLAUDE_PROJECT_DIR|$CADRE_PROJECT_DIR|$(pwd)|$HOOK_TEST_VAR" >> "`+log+`"`)
	d := New(settings(t, cmdHooks(PreToolUse, "Bash", dump)), Options{ProjectDir: project, Env: []string{"PATH=" + os.Getenv("PATH"), "HOOK_TEST_VAR=kept", "CLAUDE_PROJECT_DIR=/stale"}})
	a := d.ForAgent(Scope{SessionID: "s1", TranscriptPath: "/t/s1.jsonl", Cwd: agentCwd, AgentID: "a1", AgentType: "Explore", PermissionMode: func() permission.Mode { return permission.ModePlan }})

	o := a.Fire(context.Background(), &Input{HookEventName: PreToolUse, ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"ls"}`), ToolUseID: "t1"})
	if o.Blocked || len(o.Errors()) > 0 || len(o.Runs) != 1 || o.Runs[0].ExitCode != 0 {
		t.Fatalf("outcome = %+v", o)
	}
	// Read is not matched by "Bash".
	a.Fire(context.Background(), &Input{HookEventName: PreToolUse, ToolName: "Read", ToolInput: json.RawMessage(`{}`)})

	want := []string{
		`{"session_id":"s1","transcript_path":"/t/s1.jsonl","cwd":"` + agentCwd + `","permission_mode":"plan","agent_id":"a1","agent_type":"Explore","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t1"}`,
		project + "|" + project + "|" + agentCwd + "|kept",
	}
	if diff := cmp.Diff(want, readLines(t, log)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}

func TestOutcomes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	echo := func(name, out string) string {
		return script(t, dir, name, "cat >/dev/null\ncat <<'EOF'\n"+out+"\nEOF")
	}
	tests := []struct {
		name  string
		event Event
		cmds  []string
		check func(t *testing.T, o Outcome)
	}{
		{"exit 2 blocks with stderr", PreToolUse, []string{script(t, dir, "e2.sh", "echo 'no rm here' >&2; echo ignored; exit 2")}, func(t *testing.T, o Outcome) {
			if !o.Blocked || !cmp.Equal(o.Feedback, []string{"no rm here"}) || o.Runs[0].Decision != "block" {
				t.Errorf("%+v", o)
			}
		}},
		{"exit 1 is a non-blocking error", PreToolUse, []string{script(t, dir, "e1.sh", "echo oops >&2; exit 1")}, func(t *testing.T, o Outcome) {
			if o.Blocked || len(o.Errors()) != 1 || o.Errors()[0].Stderr != "oops\n" || o.Errors()[0].ExitCode != 1 {
				t.Errorf("%+v", o)
			}
		}},
		{"deny wins over ask and allow; first updatedInput wins", PreToolUse, []string{
			echo("allow.sh", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"ok","updatedInput":{"command":"a"}}}`),
			echo("ask.sh", `{"hookSpecificOutput":{"permissionDecision":"ask","updatedInput":{"command":"b"}}}`),
			echo("deny.sh", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"never"}}`),
		}, func(t *testing.T, o Outcome) {
			if o.Permission != permission.Deny || o.PermissionReason != "never" || !o.Blocked || string(o.UpdatedInput) != `{"command":"a"}` {
				t.Errorf("%+v", o)
			}
			if got := []string{o.Runs[0].Decision, o.Runs[1].Decision, o.Runs[2].Decision}; !cmp.Equal(got, []string{"allow", "ask", "deny"}) {
				t.Errorf("decisions %v", got)
			}
		}},
		{"ask wins over allow", PreToolUse, []string{
			echo("allow2.sh", `{"hookSpecificOutput":{"permissionDecision":"allow"}}`),
			echo("ask2.sh", `{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"check"}}`),
		}, func(t *testing.T, o Outcome) {
			if o.Permission != permission.Ask || o.PermissionReason != "check" || o.Blocked {
				t.Errorf("%+v", o)
			}
		}},
		{"legacy approve", PreToolUse, []string{echo("approve.sh", `{"decision":"approve","reason":"fine"}`)}, func(t *testing.T, o Outcome) {
			if o.Permission != permission.Allow {
				t.Errorf("%+v", o)
			}
		}},
		{"decision block, context, system message, continue false", PostToolUse, []string{
			echo("post.sh", `{"decision":"block","reason":"lint failed","systemMessage":"for you","suppressOutput":true,"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"ctx"}}`),
			echo("stop.sh", `{"continue":false,"stopReason":"enough"}`),
		}, func(t *testing.T, o Outcome) {
			want := Outcome{Blocked: true, Feedback: []string{"lint failed"}, Stop: true, StopReason: "enough", Context: []string{"ctx"}, SystemMessages: []string{"for you"}, SuppressOutput: true}
			o.Runs = nil
			if diff := cmp.Diff(want, o); diff != "" {
				t.Error(diff)
			}
		}},
		{"specific output for another event is ignored", PostToolUse, []string{
			echo("other.sh", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"no"}}`),
		}, func(t *testing.T, o Outcome) {
			if len(o.Context) != 0 {
				t.Errorf("%+v", o)
			}
		}},
		{"malformed JSON is an error, not a decision", PreToolUse, []string{echo("bad.sh", `{"continue": "no"`)}, func(t *testing.T, o Outcome) {
			if o.Blocked || o.Stop || o.Runs[0].Err == nil {
				t.Errorf("%+v", o)
			}
		}},
		{"plain stdout is context for UserPromptSubmit", UserPromptSubmit, []string{echo("plain.sh", "remember the style guide")}, func(t *testing.T, o Outcome) {
			if !cmp.Equal(o.Context, []string{"remember the style guide"}) {
				t.Errorf("%+v", o)
			}
		}},
		{"plain stdout is not context for PreToolUse", PreToolUse, []string{echo("plain2.sh", "chatter")}, func(t *testing.T, o Outcome) {
			if len(o.Context) != 0 {
				t.Errorf("%+v", o)
			}
		}},
		{"WorktreeCreate path", WorktreeCreate, []string{echo("wt.sh", "creating\n/tmp/wt-1")}, func(t *testing.T, o Outcome) {
			if o.WorktreePath != "/tmp/wt-1" {
				t.Errorf("%+v", o)
			}
		}},
		{"PermissionRequest deny wins", PermissionRequest, []string{
			echo("pra.sh", `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`),
			echo("prd.sh", `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"not now"}}}`),
		}, func(t *testing.T, o Outcome) {
			if o.Request != permission.Deny || o.RequestMessage != "not now" {
				t.Errorf("%+v", o)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := New(settings(t, cmdHooks(tt.event, "", tt.cmds...)), Options{ProjectDir: dir})
			o := d.Fire(context.Background(), &Input{HookEventName: tt.event, ToolName: "Bash", Cwd: dir})
			if len(o.Runs) != len(tt.cmds) {
				t.Fatalf("%d runs, want %d", len(o.Runs), len(tt.cmds))
			}
			tt.check(t, o)
		})
	}
}

func TestHooksOfOneEventRunInParallel(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// Each waits for the other's mark: run one after the other, both
	// would time out.
	wait := func(mine, theirs string) string {
		return script(t, dir, mine+".sh", fmt.Sprintf(`cat >/dev/null; touch %q
i=0; while [ ! -e %q ]; do i=$((i+1)); [ $i -gt 3000 ] && exit 9; sleep 0.01; done`, filepath.Join(dir, mine), filepath.Join(dir, theirs)))
	}
	d := New(settings(t, cmdHooks(Stop, "", wait("a", "b"), wait("b", "a"))), Options{})
	o := d.Fire(context.Background(), &Input{HookEventName: Stop, Cwd: dir})
	for _, r := range o.Runs {
		if r.ExitCode != 0 {
			t.Errorf("%s exited %d (not run in parallel?)", r.Command, r.ExitCode)
		}
	}
}

// alive reports whether a process exists (a zombie counts as gone).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] != "Z"
}

// waitGone polls until pid has ended; the deadline is only a safety net.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d still running", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func TestTimeoutKillsTheProcessGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// A unique sleep argument finds the process whether or not the hook
	// got as far as starting it before its timeout.
	marker := fmt.Sprintf("300.%09d", time.Now().UnixNano()%1e9)
	raw := `{"PreToolUse":[{"hooks":[{"type":"command","command":"cat >/dev/null; sleep ` + marker + ` & wait","timeout":0.5},{"type":"command","command":"echo fine"}]}]}`
	d := New(settings(t, raw), Options{})
	o := d.Fire(context.Background(), &Input{HookEventName: PreToolUse, ToolName: "Bash", Cwd: dir})
	r := o.Runs[0]
	if !r.TimedOut || r.ExitCode != -1 || r.Err == nil || o.Blocked {
		t.Fatalf("run = %+v", r)
	}
	if o.Runs[1].ExitCode != 0 || o.Runs[1].Stdout != "fine\n" {
		t.Errorf("the other hook = %+v", o.Runs[1])
	}
	deadline := time.Now().Add(10 * time.Second)
	for pids := processesWith("sleep " + marker); len(pids) > 0; pids = processesWith("sleep " + marker) {
		if time.Now().After(deadline) {
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("hook's sleep still running: %v", pids)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// processesWith returns the live processes whose command line is cmdline.
func processesWith(cmdline string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err == nil && strings.TrimRight(strings.ReplaceAll(string(b), "\x00", " "), " ") == cmdline && alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

func TestCancelKillsRunningHooks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	hang := script(t, dir, "hang.sh", `cat >/dev/null; sleep 300 & echo $! > "`+pidFile+`.tmp"; mv "`+pidFile+`.tmp" "`+pidFile+`"; wait`)
	d := New(settings(t, cmdHooks(Stop, "", hang)), Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Outcome)
	go func() { done <- d.Fire(ctx, &Input{HookEventName: Stop, Cwd: dir}) }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(pidFile); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatal("hook never started")
		}
	}
	cancel()
	o := <-done
	if !o.Runs[0].Canceled {
		t.Errorf("run = %+v", o.Runs[0])
	}
	waitGone(t, readPID(t, pidFile))
}

func TestIdenticalCommandsRunOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	cmd := `cat >/dev/null; echo x >> "` + log + `"`
	raw := `{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":` + quote(cmd) + `}]},{"matcher":"Ba.*","hooks":[{"type":"command","command":` + quote(cmd) + `}]}]}`
	d := New(settings(t, raw), Options{})
	defer d.AddForAgent("a1", settings(t, cmdHooks(PreToolUse, "", cmd)))()
	o := d.Fire(context.Background(), &Input{HookEventName: PreToolUse, ToolName: "Bash", AgentID: "a1", Cwd: dir})
	if len(o.Runs) != 1 || len(readLines(t, log)) != 1 {
		t.Errorf("%d runs, log %v", len(o.Runs), readLines(t, log))
	}
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

func TestAgentRegistrationLivesUntilRemoved(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	d := New(nil, Options{})
	fm, _, err := ParseAgent(json.RawMessage(cmdHooks(PreToolUse, "Read", `cat >/dev/null; echo "$0" >> `+log)), "agents/x.md")
	if err != nil {
		t.Fatal(err)
	}
	fire := func(agentID string) int {
		return len(d.Fire(context.Background(), &Input{HookEventName: PreToolUse, ToolName: "Read", AgentID: agentID, Cwd: dir}).Runs)
	}
	if d.Has(PreToolUse) {
		t.Error("Has before registration")
	}
	remove := d.AddForAgent("a1", fm)
	if !d.Has(PreToolUse) || d.Has(WorktreeCreate) {
		t.Error("Has after registration")
	}
	if got := d.Registered("a1").Len(); got != 1 {
		t.Errorf("registered = %d", got)
	}
	if fire("a1") != 1 || fire("a2") != 0 || fire("") != 0 {
		t.Error("frontmatter hooks must fire only for their agent")
	}
	remove()
	remove()
	if fire("a1") != 0 || d.Registered("a1").Len() != 0 || d.count.Load() != 0 {
		t.Error("hooks still registered after remove")
	}
}

func TestOutputIsCapped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := script(t, dir, "big.sh", `cat >/dev/null; head -c 1000000 /dev/zero | tr '\0' a; head -c 300000 /dev/zero | tr '\0' b >&2`)
	d := New(settings(t, cmdHooks(Stop, "", big)), Options{MaxOutput: 1000})
	o := d.Fire(context.Background(), &Input{HookEventName: Stop, Cwd: dir})
	r := o.Runs[0]
	if r.ExitCode != 0 || len(r.Stdout) != 1000 || len(r.Stderr) != 1000 || !r.Truncated {
		t.Errorf("exit %d, %d/%d bytes kept, truncated %v", r.ExitCode, len(r.Stdout), len(r.Stderr), r.Truncated)
	}
}

func TestCallbacks(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	deny := func(_ context.Context, in *Input) (json.RawMessage, error) {
		mu.Lock()
		seen = append(seen, string(in.HookEventName)+" "+in.ToolName+" "+in.AgentID)
		mu.Unlock()
		return json.RawMessage(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"sdk says no"}}`), nil
	}
	broken := func(context.Context, *Input) (json.RawMessage, error) { return nil, errors.New("socket closed") }
	slow := func(ctx context.Context, _ *Input) (json.RawMessage, error) { <-ctx.Done(); return nil, ctx.Err() }
	cfg, err := NewConfig(Group{Event: PreToolUse, Matcher: "Bash", Source: "sdk", Handlers: []Handler{
		{Callback: deny, Name: "1"}, {Callback: broken, Name: "2"}, {Callback: slow, Name: "3", Timeout: 50 * time.Millisecond},
	}})
	if err != nil {
		t.Fatal(err)
	}
	d := New(nil, Options{})
	remove := d.Add(cfg)
	o := d.ForAgent(Scope{AgentID: "a9", AgentType: "x"}).Fire(context.Background(), &Input{HookEventName: PreToolUse, ToolName: "Bash"})
	if o.Permission != permission.Deny || o.PermissionReason != "sdk says no" {
		t.Errorf("%+v", o)
	}
	if r := o.Runs[1]; r.ExitCode != 1 || r.Err == nil || r.Command != "callback 2" {
		t.Errorf("broken callback run = %+v", r)
	}
	if r := o.Runs[2]; !r.TimedOut {
		t.Errorf("slow callback run = %+v", r)
	}
	if !cmp.Equal(seen, []string{"PreToolUse Bash a9"}) {
		t.Errorf("seen %v", seen)
	}
	remove()
	if len(d.Fire(context.Background(), &Input{HookEventName: PreToolUse, ToolName: "Bash"}).Runs) != 0 {
		t.Error("callback still registered")
	}
}

type recordingObserver struct {
	mu       sync.Mutex
	started  []Run
	finished []Run
}

func (r *recordingObserver) HookStarted(run Run) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started = append(r.started, run)
}

func (r *recordingObserver) HookFinished(run Run) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.finished = append(r.finished, run)
}

func TestObserverSeesEveryRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	obs := &recordingObserver{}
	deny := script(t, dir, "deny.sh", `cat >/dev/null; echo '{"hookSpecificOutput":{"permissionDecision":"deny"}}'`)
	d := New(settings(t, cmdHooks(PreToolUse, "Bash", deny, "exit 3")), Options{Observer: obs})
	d.ForAgent(Scope{AgentID: "a1", AgentType: "Plan"}).Fire(context.Background(), &Input{HookEventName: PreToolUse, ToolName: "Bash", Cwd: dir})
	if len(obs.started) != 2 || len(obs.finished) != 2 {
		t.Fatalf("started %d, finished %d", len(obs.started), len(obs.finished))
	}
	f := obs.finished
	if f[0].Command != deny || f[0].Decision != "deny" || f[0].ExitCode != 0 || f[0].AgentID != "a1" || f[0].Matcher != "Bash" || f[0].Source != "settings.json" || f[0].Event != PreToolUse {
		t.Errorf("first = %+v", f[0])
	}
	if f[1].ExitCode != 3 || f[1].Decision != "" || f[0].ID == f[1].ID {
		t.Errorf("second = %+v", f[1])
	}
}

func TestAgentBinding(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	dump := `cat >> ` + log + `; echo >> ` + log
	raw := `{"Stop":[{"hooks":[{"type":"command","command":` + quote(dump) + `}]}],
	         "SubagentStop":[{"hooks":[{"type":"command","command":` + quote(dump) + `}]}],
	         "UserPromptSubmit":[{"hooks":[{"type":"command","command":` + quote(dump) + `}]}],
	         "SubagentStart":[{"matcher":"Explore","hooks":[{"type":"command","command":` + quote(dump) + `}]}]}`
	d := New(settings(t, raw), Options{})
	tasks := func() []BackgroundTask {
		return []BackgroundTask{{ID: "b1", Type: "subagent", Status: "running", Description: "scan"}}
	}
	mode := func() permission.Mode { return permission.ModeDefault }
	main := d.ForAgent(Scope{SessionID: "s", TranscriptPath: "/t/s.jsonl", Cwd: dir, PermissionMode: mode, BackgroundTasks: tasks})
	child := d.ForAgent(Scope{SessionID: "s", TranscriptPath: "/t/s.jsonl", Cwd: dir, AgentID: "a1", AgentType: "Explore", AgentTranscriptPath: "/t/s/agent-a1.jsonl", PermissionMode: mode})
	ctx := context.Background()
	main.Fire(ctx, &Input{HookEventName: UserPromptSubmit, Prompt: "hi"})
	child.Fire(ctx, &Input{HookEventName: UserPromptSubmit, Prompt: "from parent"}) // not a user prompt
	main.Fire(ctx, &Input{HookEventName: SubagentStart, AgentID: "a1", AgentType: "Explore"})
	main.Fire(ctx, &Input{HookEventName: SubagentStart, AgentID: "a2", AgentType: "Plan"}) // matcher
	child.Fire(ctx, &Input{HookEventName: Stop, LastAssistantMessage: "child done"})
	main.Fire(ctx, &Input{HookEventName: Stop, LastAssistantMessage: "main done", StopHookActive: true})
	want := []string{
		`{"session_id":"s","transcript_path":"/t/s.jsonl","cwd":"` + dir + `","permission_mode":"default","hook_event_name":"UserPromptSubmit","prompt":"hi"}`,
		`{"session_id":"s","transcript_path":"/t/s.jsonl","cwd":"` + dir + `","agent_id":"a1","agent_type":"Explore","hook_event_name":"SubagentStart"}`,
		`{"session_id":"s","transcript_path":"/t/s.jsonl","cwd":"` + dir + `","permission_mode":"default","agent_id":"a1","agent_type":"Explore","hook_event_name":"SubagentStop","stop_hook_active":false,"agent_transcript_path":"/t/s/agent-a1.jsonl","last_assistant_message":"child done","background_tasks":[]}`,
		`{"session_id":"s","transcript_path":"/t/s.jsonl","cwd":"` + dir + `","permission_mode":"default","hook_event_name":"Stop","stop_hook_active":true,"last_assistant_message":"main done","background_tasks":[{"id":"b1","type":"subagent","status":"running","description":"scan"}]}`,
	}
	if diff := cmp.Diff(want, readLines(t, log)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestNoHooksCostsNothing(t *testing.T) {
	d := New(nil, Options{})
	a := d.ForAgent(Scope{SessionID: "s", Cwd: "/"})
	in := &Input{HookEventName: PreToolUse, ToolName: "Bash"}
	if n := testing.AllocsPerRun(100, func() { a.Fire(context.Background(), in) }); n != 0 {
		t.Errorf("%v allocations per Fire with no hooks", n)
	}
}

func TestLeftoverProcessHoldingOutputIsKilled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	marker := fmt.Sprintf("301.%09d", time.Now().UnixNano()%1e9)
	// The hook exits at once but leaves a sleep that holds its stdout.
	d := New(settings(t, cmdHooks(Stop, "", "cat >/dev/null; sleep "+marker+" & echo done")), Options{WaitDelay: 50 * time.Millisecond})
	o := d.Fire(context.Background(), &Input{HookEventName: Stop, Cwd: dir})
	if r := o.Runs[0]; r.ExitCode != 0 || r.Stdout != "done\n" || r.TimedOut {
		t.Fatalf("run = %+v", r)
	}
	deadline := time.Now().Add(10 * time.Second)
	for pids := processesWith("sleep " + marker); len(pids) > 0; pids = processesWith("sleep " + marker) {
		if time.Now().After(deadline) {
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("leftover sleep still running: %v", pids)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
