package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/hooks"
	"github.com/cadre-dev/cadre/internal/worktree"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
)

// logScript is a hook in the style users publish: it appends its stdin,
// one JSON object a line, to $HOOK_LOG.
const logScript = `#!/bin/sh
jq -c --arg dir "$CLAUDE_PROJECT_DIR" '. + {project_dir: $dir}' >> "$HOOK_LOG"
`

// hookWorld is a harness with hook scripts on disk and a log they write.
type hookWorld struct {
	*harness
	log     string
	scripts string
}

func newHookWorld(t *testing.T) *hookWorld {
	t.Helper()
	h := newHarness(t)
	w := &hookWorld{harness: h, log: filepath.Join(t.TempDir(), "hooks.log"), scripts: t.TempDir()}
	w.script("log.sh", logScript)
	return w
}

// script writes an executable script and returns its path.
func (w *hookWorld) script(name, body string) string {
	w.t.Helper()
	p := filepath.Join(w.scripts, name)
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		w.t.Fatal(err)
	}
	return p
}

// config is the harness config with hooks parsed from a settings-file
// `hooks` value and HOOK_LOG in their environment.
func (w *hookWorld) config(settings string) Config {
	w.t.Helper()
	cfg := w.harness.config()
	hk, diags, err := hooks.Parse(json.RawMessage(settings), "settings.json")
	if err != nil || len(diags) > 0 {
		w.t.Fatalf("hooks: %v %v", err, diags)
	}
	cfg.Hooks = hk
	cfg.HookEnv = append(os.Environ(), "HOOK_LOG="+w.log)
	return cfg
}

// hookedAgent is an agent file whose frontmatter logs its Bash calls
// (PreToolUse) and its end (a Stop hook, which acts as its SubagentStop)
// through log.sh.
func (w *hookWorld) hookedAgent() *agentdef.Definition {
	w.t.Helper()
	logger := filepath.Join(w.scripts, "log.sh")
	def, diags := agentdef.ParseFile("/defs/hooked.md", []byte(`---
name: hooked
description: has hooks
hooks:
  PreToolUse:
    - matcher: Bash
      hooks:
        - type: command
          command: `+logger+`
  Stop:
    - hooks:
        - type: command
          command: `+logger+`
---
You are hooked.
`), agentdef.SourceProject)
	if len(diags) > 0 {
		w.t.Fatal(diags)
	}
	return def
}

// entries reads the log: every hook input, in the order written.
func (w *hookWorld) entries() []map[string]any {
	w.t.Helper()
	b, err := os.ReadFile(w.log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		w.t.Fatal(err)
	}
	var out []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			w.t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// every returns a settings `hooks` value that runs cmd for every event.
func every(cmd string) string {
	var parts []string
	for _, e := range hooks.Events() {
		parts = append(parts, fmt.Sprintf(`%q: [{"hooks": [{"type": "command", "command": %q}]}]`, e, cmd))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// allowAll is a person who allows every prompt once.
type allowAll struct {
	mu    sync.Mutex
	asked []string
	// prompts are the prompts as asked (fork_test.go reads their labels).
	prompts []permission.Prompt
}

func (a *allowAll) Prompt(_ context.Context, p permission.Prompt) (permission.Reply, error) {
	a.mu.Lock()
	a.asked = append(a.asked, p.Request.AgentID+" "+p.Request.Tool)
	a.prompts = append(a.prompts, p)
	a.mu.Unlock()
	return permission.Reply{Choice: permission.ChoiceAllowOnce}, nil
}

// TestFrontmatterHooksOnlyWhileTheirAgentRuns: an agent file's hooks fire
// for that agent's events only, its Stop hook as its SubagentStop, and are
// gone once it ends, whatever way it ends.
func TestFrontmatterHooksOnlyWhileTheirAgentRuns(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	def := w.hookedAgent()
	cfg := w.config(`{}`)
	cfg.Agents = append(agentdef.Builtins(), def)
	w.srv.Script("MAIN",
		llmtest.ToolUse("Agent", agentCall("hooked", "OK-1: work")),
		llmtest.ToolUse("Agent", agentCall("hooked", "FAIL-1: work")),
		llmtest.ToolUse("Bash", map[string]any{"command": "true"}),
		llmtest.ToolUse("Agent", agentCall("general-purpose", "PLAIN-1: work")),
		llmtest.Text("main done"))
	w.srv.Script("OK-1", llmtest.ToolUse("Bash", map[string]any{"command": "true"}), llmtest.Text("ok done"))
	w.srv.Script("FAIL-1", llmtest.ToolUse("Bash", map[string]any{"command": "true"}), llmtest.HTTPError(400, "bad request"))
	w.srv.Script("PLAIN-1", llmtest.ToolUse("Bash", map[string]any{"command": "true"}), llmtest.Text("plain done"))
	evs, _, rt := mustRun(t, cfg, "MAIN: go")
	var children []string
	for _, ev := range evs {
		if ev.Type == run.EventTaskStarted {
			children = append(children, ev.AgentID)
		}
	}
	if len(children) != 3 {
		t.Fatalf("children %v", children)
	}
	var got []string
	for _, e := range w.entries() {
		got = append(got, fmt.Sprint(e["hook_event_name"], " ", e["agent_id"]))
	}
	// OK-1: its Bash and its stop; FAIL-1: its Bash (it failed, so it
	// never stopped); the main agent and PLAIN-1: nothing.
	want := []string{"PreToolUse " + children[0], "SubagentStop " + children[0], "PreToolUse " + children[1]}
	if !slices.Equal(got, want) {
		t.Errorf("frontmatter hook runs %v, want %v", got, want)
	}
	for _, id := range children {
		if n := rt.Hooks().Registered(id).Len(); n != 0 {
			t.Errorf("%s: %d hooks left registered", id, n)
		}
	}
}

// TestFrontmatterHooksRemovedWhenTheRunIsCancelled: a child killed while
// it runs leaves no hooks behind.
func TestFrontmatterHooksRemovedWhenTheRunIsCancelled(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	def, _ := agentdef.ParseFile("/defs/hooked.md", []byte("---\nname: hooked\ndescription: has hooks\nhooks:\n  PostToolUse:\n    - hooks:\n        - type: command\n          command: echo hi\n---\nbody\n"), agentdef.SourceProject)
	cfg := w.config(`{}`)
	cfg.Agents = append(agentdef.Builtins(), def)
	w.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("hooked", "SLOW-1: work")), llmtest.Text("never"))
	w.srv.Script("SLOW-1", llmtest.ToolUse("Bash", map[string]any{"command": "sleep 30"}), llmtest.Text("never"))
	rt, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var child string
	for ev, err := range rt.Run(ctx, "MAIN: go") {
		if err != nil {
			break
		}
		if ev.Type == run.EventTaskStarted {
			child = ev.AgentID
		}
		if ev.Type == run.EventToolStart && ev.AgentID != "" {
			if rt.Hooks().Registered(child).Len() != 1 {
				t.Error("the child's hooks are not registered while it runs")
			}
			cancel()
		}
	}
	if child == "" {
		t.Fatal("no child")
	}
	if n := rt.Hooks().Registered(child).Len(); n != 0 {
		t.Errorf("%d hooks left after the cancelled child", n)
	}
}

// startContextScript is a SubagentStart hook that tells the child its type
// and id.
const startContextScript = `#!/bin/sh
jq -c '{hookSpecificOutput: {hookEventName: "SubagentStart", additionalContext: ("You are " + .agent_type + " " + .agent_id)}}'
`

// TestSubagentStartContextReachesTheChild: what a SubagentStart hook adds
// is in the child's first message; the parent's is not.
func TestSubagentStartContextReachesTheChild(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	ctxScript := w.script("ctx.sh", startContextScript)
	cfg := w.config(`{"SubagentStart": [{"matcher": "general-purpose", "hooks": [{"type": "command", "command": "` + ctxScript + `"}]}]}`)
	w.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("general-purpose", "KID-1: hi")), llmtest.Text("done"))
	w.srv.Script("KID-1", llmtest.Text("kid done"))
	evs, _, _ := mustRun(t, cfg, "MAIN: go")
	var child string
	for _, ev := range evs {
		if ev.Type == run.EventTaskStarted {
			child = ev.AgentID
		}
	}
	first := w.srv.RequestsFor("KID-1")[0].Messages[0]
	contains(t, first.Text(), "You are general-purpose "+child)
	contains(t, first.Text(), "KID-1: hi")
	if strings.Contains(w.srv.RequestsFor("MAIN")[0].Messages[0].Text(), "You are") {
		t.Error("the parent got the child's context")
	}
}

// TestSubagentStopExit2KeepsTheChildGoing: a SubagentStop hook that exits
// 2 feeds its stderr to the child, which continues once.
func TestSubagentStopExit2KeepsTheChildGoing(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	gate := w.script("gate.sh", `#!/bin/sh
active=$(jq -r .stop_hook_active)
if [ "$active" = "false" ]; then echo "run the tests first" >&2; exit 2; fi
exit 0
`)
	cfg := w.config(`{"SubagentStop": [{"hooks": [{"type": "command", "command": "` + gate + `"}]}]}`)
	w.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("general-purpose", "KID-2: hi")), llmtest.Text("done"))
	w.srv.Script("KID-2", llmtest.Text("first try"), llmtest.Text("tests run"))
	mustRun(t, cfg, "MAIN: go")
	reqs := w.srv.RequestsFor("KID-2")
	if len(reqs) != 2 {
		t.Fatalf("%d child requests", len(reqs))
	}
	msgs := reqs[1].Messages
	contains(t, msgs[len(msgs)-1].Text(), "run the tests first")
	contains(t, w.toolResults("MAIN")[0], "tests run")
}

// TestADenyRuleWinsOverAHookAllow: a PreToolUse hook that allows a call a
// deny rule forbids does not run it.
func TestADenyRuleWinsOverAHookAllow(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	allow := w.script("allow.sh", `#!/bin/sh
echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionDecisionReason": "looks fine"}}'
`)
	cfg := w.config(`{"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "` + allow + `"}]}]}`)
	cfg.Permissions = &Permissions{Mode: permission.ModeDefault, Rules: []permission.Rule{{Behavior: permission.Deny, Tool: "Bash", Content: "touch:*", Source: "test"}}}
	marker := filepath.Join(w.dir, "made")
	w.srv.Script("MAIN", llmtest.ToolUse("Bash", map[string]any{"command": "touch " + marker}), llmtest.Text("done"))
	mustRun(t, cfg, "MAIN: go")
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the denied command ran")
	}
	contains(t, w.toolResults("MAIN")[0], "Permission denied")
}

// TestPublishedStyleHooksRunUnchanged runs three hook scripts in the
// shape Claude Code users publish — a formatter after edits, a Bash guard,
// a SubagentStop logger — through the runtime.
func TestPublishedStyleHooksRunUnchanged(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	format := w.script("format.sh", `#!/bin/bash
# Format Go files after Claude edits them.
file_path=$(jq -r '.tool_input.file_path // empty')
if [[ "$file_path" == *.go ]]; then
  gofmt -w "$file_path"
fi
exit 0
`)
	guard := w.script("guard.sh", `#!/bin/bash
# Block dangerous shell commands.
command=$(jq -r '.tool_input.command')
if echo "$command" | grep -qE 'rm -rf'; then
  echo "Blocked: rm -rf is not allowed here" >&2
  exit 2
fi
exit 0
`)
	stops := filepath.Join(w.dir, "subagents.log")
	logger := w.script("substop.sh", `#!/bin/bash
# Log every sub-agent that finishes.
jq -r '"\(.agent_type) \(.agent_id) finished: \(.last_assistant_message)"' >> "`+stops+`"
`)
	cfg := w.config(`{
	  "PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "` + format + `"}]}],
	  "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "` + guard + `", "timeout": 10}]}],
	  "SubagentStop": [{"hooks": [{"type": "command", "command": "` + logger + `"}]}]}`)
	goFile := filepath.Join(w.dir, "main.go")
	victim := filepath.Join(w.dir, "keep")
	if err := os.Mkdir(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	w.srv.Script("MAIN",
		llmtest.ToolUse("Write", map[string]any{"file_path": goFile, "content": "package main\nfunc main(){println( 1)}\n"}),
		llmtest.ToolUse("Bash", map[string]any{"command": "rm -rf " + victim}),
		llmtest.ToolUse("Agent", agentCall("general-purpose", "KID-3: hi")),
		llmtest.Text("done"))
	w.srv.Script("KID-3", llmtest.Text("kid finished"))
	evs, _, _ := mustRun(t, cfg, "MAIN: go")
	b, err := os.ReadFile(goFile)
	if err != nil || string(b) != "package main\n\nfunc main() { println(1) }\n" {
		t.Errorf("formatter: %q %v", b, err)
	}
	if _, err := os.Stat(victim); err != nil {
		t.Error("the guard let rm -rf run")
	}
	bash := w.srv.RequestsFor("MAIN")[2].LastToolResults()
	if len(bash) != 1 {
		t.Fatalf("results %v", bash)
	}
	contains(t, bash[0].ResultText(), "Blocked: rm -rf is not allowed here")
	var child string
	for _, ev := range evs {
		if ev.Type == run.EventTaskStarted {
			child = ev.AgentID
		}
	}
	got, _ := os.ReadFile(stops)
	if string(got) != "general-purpose "+child+" finished: kid finished\n" {
		t.Errorf("SubagentStop log %q", got)
	}
}

// TestWorktreeHooksStandInForGit: with WorktreeCreate and WorktreeRemove
// hooks configured, a worktree manager using the runtime's hookWorktrees
// asks them, not git, to make and remove an agent's tree.
func TestWorktreeHooksStandInForGit(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	trees := t.TempDir()
	create := w.script("create.sh", `#!/bin/sh
d="`+trees+`/$(jq -r .name)"
mkdir -p "$d" && echo "$d"
`)
	remove := w.script("remove.sh", `#!/bin/sh
rm -r "$(jq -r .worktree_path)"
`)
	rt := mustNew(t, w.config(`{"WorktreeCreate": [{"hooks": [{"type": "command", "command": "`+create+`"}]}],
	  "WorktreeRemove": [{"hooks": [{"type": "command", "command": "`+remove+`"}]}]}`))
	h := hookWorktrees{rt}
	if !h.HandlesWorktrees() {
		t.Fatal("a WorktreeCreate hook is configured")
	}
	m, err := worktree.New(worktree.Config{Creator: h, Remover: h})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	lease, err := m.Create(ctx, worktree.Request{Dir: w.dir, AgentID: "a1", SessionID: rt.SessionID()})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(trees, "agent-a1")
	if lease.Info().Path != path {
		t.Fatalf("tree %q, want %q", lease.Info().Path, path)
	}
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		t.Fatalf("the hook made no directory: %v", err)
	}
	o, err := lease.Release(ctx)
	if err != nil || o.State != worktree.Removed {
		t.Fatalf("release: %+v %v", o, err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the remove hook did not run: %v", err)
	}
	// A create hook that fails fails the creation, with its reason; with
	// no remove hook, removal is refused (the tree is kept).
	failing := hookWorktrees{mustNew(t, w.config(`{"WorktreeCreate": [{"hooks": [{"type": "command", "command": "echo no vcs here >&2; exit 1"}]}]}`))}
	if _, err := failing.CreateWorktree(ctx, worktree.HookRequest{Name: "agent-a2", Dir: w.dir}); err == nil || !strings.Contains(err.Error(), "no vcs here") {
		t.Errorf("err = %v", err)
	}
	if err := failing.RemoveWorktree(ctx, worktree.HookRequest{Name: "agent-a2", Dir: w.dir, Path: path}); err == nil {
		t.Error("removal without a WorktreeRemove hook")
	}
	// Without hooks, git makes worktrees.
	if (hookWorktrees{mustNew(t, w.harness.config())}).HandlesWorktrees() {
		t.Error("hooks handle worktrees without any configured")
	}
}

func mustNew(t *testing.T, cfg Config) *Runtime {
	t.Helper()
	rt, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// TestSessionStartOncePerSession: SessionStart fires at the first Run
// only, its plain stdout reaches the model before the first prompt, and a
// session that continues a conversation starts with source "resume".
func TestSessionStartOncePerSession(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	logger := filepath.Join(w.scripts, "log.sh")
	cfg := w.config(`{"SessionStart": [{"hooks": [{"type": "command", "command": "` + logger + ` && echo remember the release freeze"}]}]}`)
	// Every request of the session starts with the first prompt, so all
	// go to its key.
	w.srv.Script("FIRST", llmtest.Text("one"), llmtest.Text("two"), llmtest.Text("three"))
	rt := mustNew(t, cfg)
	for _, p := range []string{"FIRST: hi", "again"} {
		if _, _, err := runAll(t, context.Background(), rt, p); err != nil {
			t.Fatal(err)
		}
	}
	reqs := w.srv.RequestsFor("FIRST")
	contains(t, reqs[0].Messages[0].Text(), "remember the release freeze")
	second := reqs[1].Messages
	if last := second[len(second)-1].Text(); last != "again" {
		t.Errorf("the second prompt went as %q", last)
	}
	resumed := w.config(`{"SessionStart": [{"hooks": [{"type": "command", "command": "` + logger + `"}]}]}`)
	resumed.History = second[:2]
	if _, _, err := runAll(t, context.Background(), mustNew(t, resumed), "back"); err != nil {
		t.Fatal(err)
	}
	var sources []string
	for _, e := range w.entries() {
		sources = append(sources, fmt.Sprint(e["source"]))
	}
	if !slices.Equal(sources, []string{"startup", "resume"}) {
		t.Errorf("SessionStart sources %v", sources)
	}
}
