package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/permission"
)

// agentTurnsSince counts the assistant messages of r after its last
// message whose text contains mark ("" counts them all): how many turns
// the agent the request belongs to has taken.
func agentTurnsSince(r *llmtest.Request, mark string) int {
	start := 0
	if mark != "" {
		for i, m := range r.Messages {
			if strings.Contains(m.Text(), mark) {
				start = i
			}
		}
	}
	n := 0
	for _, m := range r.Messages[start:] {
		if m.Role == llm.RoleAssistant {
			n++
		}
	}
	return n
}

// isForkOf reports whether r is a fork's request: its conversation holds
// a fork directive.
func isForkOf(r *llmtest.Request) bool {
	for _, m := range r.Messages {
		if m.Role == llm.RoleUser && strings.Contains(m.Text(), "from Agent call") {
			return true
		}
	}
	return false
}

// TestHookMatrixEveryAgentKind is the one-table proof of S-14.3: every
// event cadre fires, in every agent kind that exists — the main agent, a
// foreground (sync) child, its nested child, a background child and a
// fork (which runs in the background) — through one real script that appends its stdin to a
// file. Each fires once per occasion with the agent's own agent_id and
// agent_type and the event's payload. With teams on, every kind creates
// and completes a task, so TaskCreated and TaskCompleted are in it too.
func TestHookMatrixEveryAgentKind(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	if err := os.WriteFile(filepath.Join(w.dir, "notes.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := w.config(every(filepath.Join(w.scripts, "log.sh")))
	person := &allowAll{}
	cfg.Permissions = &Permissions{Mode: permission.ModeDefault, Prompter: person,
		Rules: []permission.Rule{{Behavior: permission.Ask, Tool: "Bash", Source: "test"}}}
	cfg.ForkSubagent = true // forks run in the background (Background is the default)
	cfg.Teams = true        // the task list tools, for TaskCreated and TaskCompleted
	// Every agent: a Read that works and one that fails in one turn, a
	// Bash call someone is asked about, a task it creates on the team's
	// list and then completes, then the children it starts in one turn,
	// if any, then its report. The main agent starts one child of each
	// kind; the sync child starts a nested one.
	steps := func(key string, n int, r *llmtest.Request, children ...llmtest.Call) llmtest.Turn {
		switch {
		case n == 0:
			return llmtest.ToolUses(llmtest.Call{Name: "Read", Input: map[string]any{"file_path": filepath.Join(w.dir, "notes.txt")}},
				llmtest.Call{Name: "Read", Input: map[string]any{"file_path": filepath.Join(w.dir, "missing-"+key)}})
		case n == 1:
			return llmtest.ToolUse("Bash", map[string]any{"command": "echo " + key})
		case n == 2:
			return llmtest.ToolUse("TaskCreate", map[string]any{"subject": "task of " + key, "description": "work of " + key})
		case n == 3:
			var created struct{ Task struct{ ID string } }
			if res := r.LastToolResults(); len(res) == 1 {
				_ = json.Unmarshal([]byte(res[0].ResultText()), &created)
			}
			return llmtest.ToolUse("TaskUpdate", map[string]any{"taskId": created.Task.ID, "status": "completed"})
		case n == 4 && len(children) > 0:
			return llmtest.ToolUses(children...)
		}
		return llmtest.Text(key + " done")
	}
	// The fork's requests carry the main conversation, so they come to
	// MAIN's key too.
	w.srv.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
		if isForkOf(r) {
			return steps("FORKKID", agentTurnsSince(r, "from Agent call"), r)
		}
		return steps("MAIN", agentTurnsSince(r, ""), r,
			llmtest.Call{Name: "Agent", Input: agentCall("general-purpose", "SYNC: go on")},
			llmtest.Call{Name: "Agent", Input: bgCall("BGKID: go on")},
			llmtest.Call{Name: "Agent", Input: agentCall("", "FORKKID: go on")})
	})
	w.srv.ScriptFunc("SYNC", func(r *llmtest.Request) llmtest.Turn {
		return steps("SYNC", agentTurnsSince(r, ""), r, llmtest.Call{Name: "Agent", Input: agentCall("general-purpose", "NESTED: go on")})
	})
	for _, key := range []string{"BGKID", "NESTED"} {
		w.srv.ScriptFunc(key, func(r *llmtest.Request) llmtest.Turn { return steps(key, agentTurnsSince(r, ""), r) })
	}
	rt := newRuntime(t, cfg)
	evs, res, err := runAll(t, context.Background(), rt, "MAIN: start")
	if err != nil || res == nil || res.Text != "MAIN done" {
		t.Fatalf("result %+v %v", res, err)
	}
	evs = append(evs, drainNotifications(t, rt)...)
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	// The kinds by id, from the task events.
	name := map[string]string{"": "main"}
	for _, ev := range evs {
		if ev.Type != run.EventTaskStarted {
			continue
		}
		switch {
		case ev.Task.AgentType == "fork":
			name[ev.AgentID] = "fork"
		case ev.Task.Background:
			name[ev.AgentID] = "background"
		case ev.Task.Depth == 2:
			name[ev.AgentID] = "nested"
		default:
			name[ev.AgentID] = "sync"
		}
	}
	if len(name) != 5 {
		t.Fatalf("agents %v", name)
	}
	results := 0 // the main agent's runs: the prompt's and the notifications'
	for _, ev := range evs {
		if ev.Type == run.EventResult {
			results++
		}
	}
	typeOf := map[string]string{"main": "", "sync": "general-purpose", "nested": "general-purpose", "background": "general-purpose", "fork": "fork"}
	log := w.entries()
	type key struct{ event, agent, tool string }
	counts := map[key]int{}
	for _, e := range log {
		id, _ := e["agent_id"].(string)
		kind, ok := name[id]
		if !ok {
			t.Errorf("hook input of an unknown agent: %v", e)
			continue
		}
		tool, _ := e["tool_name"].(string)
		counts[key{e["hook_event_name"].(string), kind, tool}]++
		if e["session_id"] != rt.SessionID() || e["transcript_path"] != rt.TranscriptPath() || e["cwd"] != w.dir || e["project_dir"] != w.dir {
			t.Errorf("common fields of %v", e)
		}
		if typ, _ := e["agent_type"].(string); typ != typeOf[kind] {
			t.Errorf("agent_type %q for %s: %v", typ, kind, e)
		}
	}
	want := map[key]int{
		{"SessionStart", "main", ""}: 1, {"UserPromptSubmit", "main", ""}: 1, {"SessionEnd", "main", ""}: 1,
		// The main agent stops once per run: its prompt's and each run on
		// notifications of the background children.
		{"Stop", "main", ""}:            results,
		{"PreToolUse", "main", "Agent"}: 3, {"PostToolUse", "main", "Agent"}: 3,
		{"PreToolUse", "sync", "Agent"}: 1, {"PostToolUse", "sync", "Agent"}: 1,
	}
	for _, kind := range []string{"main", "sync", "nested", "background", "fork"} {
		want[key{"PreToolUse", kind, "Read"}] = 2
		want[key{"PostToolUse", kind, "Read"}] = 1
		want[key{"PostToolUseFailure", kind, "Read"}] = 1
		want[key{"PreToolUse", kind, "Bash"}] = 1
		want[key{"PermissionRequest", kind, "Bash"}] = 1
		for _, tool := range []string{"TaskCreate", "TaskUpdate"} {
			want[key{"PreToolUse", kind, tool}] = 1
			want[key{"PostToolUse", kind, tool}] = 1
		}
		want[key{"TaskCreated", kind, ""}] = 1
		want[key{"TaskCompleted", kind, ""}] = 1
		if kind == "background" {
			// A background agent can show no prompt: its PermissionRequest
			// hooks still answer first (this one does not decide), then
			// the call is denied without asking anyone, so no
			// Notification and no PostToolUse (S-7.5).
			continue
		}
		want[key{"Notification", kind, ""}] = 1
		want[key{"PostToolUse", kind, "Bash"}] = 1
		if kind != "main" {
			want[key{"SubagentStart", kind, ""}] = 1
			want[key{"SubagentStop", kind, ""}] = 1
		}
	}
	want[key{"SubagentStart", "background", ""}] = 1
	want[key{"SubagentStop", "background", ""}] = 1
	for k, n := range want {
		if counts[k] != n {
			t.Errorf("%v fired %d times, want %d", k, counts[k], n)
		}
	}
	for k, n := range counts {
		if want[k] == 0 {
			t.Errorf("%v fired %d times, want never", k, n)
		}
	}
	if len(person.asked) != 4 {
		t.Errorf("the person was asked %v", person.asked)
	}
	// Each kind's own payloads.
	find := func(event, kind string) map[string]any {
		t.Helper()
		for _, e := range log {
			if id, _ := e["agent_id"].(string); e["hook_event_name"] == event && name[id] == kind {
				return e
			}
		}
		t.Fatalf("no %s of %s", event, kind)
		return nil
	}
	for kind, key := range map[string]string{"sync": "SYNC", "nested": "NESTED", "background": "BGKID", "fork": "FORKKID"} {
		e := find("SubagentStop", kind)
		tpath, _ := e["agent_transcript_path"].(string)
		id, _ := e["agent_id"].(string)
		if e["last_assistant_message"] != key+" done" || !strings.HasSuffix(tpath, id+".jsonl") || e["stop_hook_active"] != false {
			t.Errorf("SubagentStop of %s: %v", kind, e)
		}
		if _, err := os.Stat(tpath); err != nil {
			t.Errorf("agent_transcript_path of %s: %v", kind, err)
		}
		if e := find("SubagentStart", kind); e["agent_id"] != id || e["agent_type"] != typeOf[kind] || e["permission_mode"] != nil {
			t.Errorf("SubagentStart of %s: %v", kind, e)
		}
		if e := find("PostToolUseFailure", kind); !strings.Contains(e["tool_input"].(map[string]any)["file_path"].(string), "missing-"+key) {
			t.Errorf("PostToolUseFailure of %s: %v", kind, e)
		}
	}
	if e := find("PreToolUse", "background"); e["tool_name"] == "Bash" && e["tool_input"].(map[string]any)["command"] != "echo BGKID" {
		t.Errorf("PreToolUse of background: %v", e)
	}
	for kind, key := range map[string]string{"main": "MAIN", "sync": "SYNC", "nested": "NESTED", "fork": "FORKKID", "background": "BGKID"} {
		if e := find("PermissionRequest", kind); e["tool_input"].(map[string]any)["command"] != "echo "+key {
			t.Errorf("PermissionRequest of %s: %v", kind, e)
		}
		if kind == "background" {
			continue
		}
		if e := find("Notification", kind); e["notification_type"] != "permission_prompt" || !strings.Contains(e["message"].(string), "Bash") {
			t.Errorf("Notification of %s: %v", kind, e)
		}
	}
	for kind, key := range map[string]string{"main": "MAIN", "sync": "SYNC", "nested": "NESTED", "fork": "FORKKID", "background": "BGKID"} {
		created, completed := find("TaskCreated", kind), find("TaskCompleted", kind)
		if created["task_subject"] != "task of "+key || created["task_description"] != "work of "+key || created["task_id"] == "" ||
			completed["task_id"] != created["task_id"] || completed["task_subject"] != "task of "+key {
			t.Errorf("task hooks of %s: %v then %v", kind, created, completed)
		}
	}
	if e := find("SessionStart", "main"); e["source"] != "startup" || e["permission_mode"] != nil {
		t.Errorf("SessionStart %v", e)
	}
	if e := find("UserPromptSubmit", "main"); e["prompt"] != "MAIN: start" || e["permission_mode"] != "default" {
		t.Errorf("UserPromptSubmit %v", e)
	}
	if e := find("Stop", "main"); e["last_assistant_message"] != "MAIN done" || e["stop_hook_active"] != false {
		t.Errorf("Stop of main: %v", e)
	}
	if e := find("SessionEnd", "main"); e["reason"] != "other" {
		t.Errorf("SessionEnd %v", e)
	}
	// Every hook run is in the stream, started and finished, under the
	// agent whose event fired it; SessionEnd runs in Close, outside it.
	started, finished := 0, 0
	for _, ev := range evs {
		switch ev.Type {
		case run.EventHookStarted:
			started++
		case run.EventHookFinished:
			finished++
			if ev.Hook.ExitCode != 0 || ev.Hook.AgentID != ev.AgentID {
				t.Errorf("hook run %+v", ev.Hook)
			}
		}
	}
	if started != len(log)-1 || finished != started {
		t.Errorf("%d started and %d finished hook events for %d runs", started, finished, len(log)-1)
	}
}

// TestUserPromptSubmitOnlyForPrompts: a run of the main agent on
// background notifications alone submits no prompt, so UserPromptSubmit
// does not fire for it (the notification is not the user's words); its
// Stop does.
func TestUserPromptSubmitOnlyForPrompts(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	cfg := w.config(every(filepath.Join(w.scripts, "log.sh")))
	w.srv.Script("MAIN", llmtest.ToolUse("Agent", bgCall("BG-1: count a")), llmtest.Text("started"), llmtest.Text("got it"))
	// The child ends after the main agent's first turn has (its Stop hook
	// ran), so its notification needs a run of its own.
	w.srv.Script("BG-1", llmtest.ToolUse("Bash", map[string]any{"command": `until grep -q '"hook_event_name":"Stop"' ` + w.log + `; do sleep 0.05; done`}),
		llmtest.Text("done 1"))
	rt := newRuntime(t, cfg)
	if _, _, err := runAll(t, context.Background(), rt, "MAIN go"); err != nil {
		t.Fatal(err)
	}
	runs := 1
	for rt.RunningTasks() > 0 || rt.PendingNotifications() {
		for ev, err := range rt.RunNotifications(context.Background()) {
			if err != nil {
				t.Fatal(err)
			}
			if ev.Type == run.EventResult {
				runs++
			}
		}
	}
	if runs != 2 {
		t.Fatalf("%d runs of the main agent, want the prompt's and the notification's", runs)
	}
	var prompts []any
	stops := 0
	for _, e := range w.entries() {
		switch e["hook_event_name"] {
		case "UserPromptSubmit":
			prompts = append(prompts, e["prompt"])
		case "Stop":
			stops++
		}
	}
	if len(prompts) != 1 || prompts[0] != "MAIN go" || stops != 2 {
		t.Errorf("UserPromptSubmit for %q, %d Stops", prompts, stops)
	}
}

// TestSubagentStopSeesLiveBackgroundTasks: a SubagentStop hook gets, in
// background_tasks, what the child leaves running when its model stops —
// its background child (from the task registry) and its background shell
// — and nothing once they have ended.
func TestSubagentStopSeesLiveBackgroundTasks(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	release := filepath.Join(w.dir, "release")
	// The logger also lets the leaf go on, so the leaf is still running
	// when MID first stops.
	cfg := w.config(`{"SubagentStop": [{"hooks": [{"type": "command", "command": "` + filepath.Join(w.scripts, "log.sh") + ` && touch ` + release + `"}]}],
	  "Stop": [{"hooks": [{"type": "command", "command": "` + filepath.Join(w.scripts, "log.sh") + `"}]}]}`)
	w.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("general-purpose", "MID: delegate")), llmtest.Text("all done"))
	w.srv.Script("MID", llmtest.ToolUses(
		llmtest.Call{Name: "Agent", Input: bgCall("LEAF: work")},
		llmtest.Call{Name: "Bash", Input: map[string]any{"command": "sleep 600", "description": "wait a while", "run_in_background": true}}),
		llmtest.Text("mid waiting"), llmtest.Text("mid done after leaf"))
	w.srv.Script("LEAF", llmtest.ToolUse("Bash", map[string]any{"command": "until [ -e " + release + " ]; do sleep 0.05; done"}), llmtest.Text("leaf result"))
	rt := newRuntime(t, cfg)
	evs, res, err := runAll(t, context.Background(), rt, "MAIN go")
	if err != nil || res == nil {
		t.Fatal(err)
	}
	ids := taskIDs(evs)
	if len(ids) != 2 {
		t.Fatalf("tasks %v", ids)
	}
	mid, leaf := ids[0], ids[1]
	type stop struct {
		event, agent string
		tasks        []any
	}
	var stops []stop
	for _, e := range w.entries() {
		id, _ := e["agent_id"].(string)
		tasks, ok := e["background_tasks"].([]any)
		if !ok {
			t.Fatalf("background_tasks of %v", e)
		}
		stops = append(stops, stop{e["hook_event_name"].(string), id, tasks})
	}
	var midStops []stop
	for _, s := range stops {
		switch s.agent {
		case mid:
			midStops = append(midStops, s)
		case leaf, "":
			if len(s.tasks) != 0 {
				t.Errorf("%s of %q left %v running", s.event, s.agent, s.tasks)
			}
		}
	}
	if len(midStops) != 2 {
		t.Fatalf("MID stopped %d times: %v", len(midStops), stops)
	}
	first, _ := json.Marshal(midStops[0].tasks)
	want := `[{"agent_type":"general-purpose","description":"bg LEAF","id":"` + leaf + `","status":"running","type":"subagent"},` +
		`{"description":"wait a while","id":"bash_1","status":"running","type":"shell"}]`
	if string(first) != want {
		t.Errorf("MID's first SubagentStop background_tasks\n%s\nwant\n%s", first, want)
	}
	// After the leaf ended, only the shell runs on.
	second, _ := json.Marshal(midStops[1].tasks)
	if want := `[{"description":"wait a while","id":"bash_1","status":"running","type":"shell"}]`; string(second) != want {
		t.Errorf("MID's second SubagentStop background_tasks %s, want %s", second, want)
	}
}

// TestFrontmatterHooksGoneOnEveryExitPath: an agent file's hooks fire for
// that agent only, in the background as in the foreground, and are
// removed however it ends — here by a background child that completes and
// a foreground one whose model adapter panics (success, error and cancel:
// TestFrontmatterHooksOnlyWhileTheirAgentRuns and
// TestFrontmatterHooksRemovedWhenTheRunIsCancelled).
func TestFrontmatterHooksGoneOnEveryExitPath(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	def := w.hookedAgent()
	cfg := w.config(`{}`)
	cfg.Agents = append(agentdef.Builtins(), def)
	cfg.Model = crashingModel{Model: cfg.Model, key: "PANIC-1"}
	bg := bgCall("BGOK: work")
	bg["subagent_type"] = "hooked"
	w.srv.Script("MAIN",
		llmtest.ToolUses(llmtest.Call{Name: "Agent", Input: bg}, llmtest.Call{Name: "Agent", Input: agentCall("hooked", "PANIC-1: work")}),
		llmtest.ToolUse("Bash", map[string]any{"command": "true"}),
		llmtest.Text("main done"))
	w.srv.ScriptFunc("MAIN", func(*llmtest.Request) llmtest.Turn { return llmtest.Text("noted") })
	w.srv.Script("BGOK", llmtest.ToolUse("Bash", map[string]any{"command": "true"}), llmtest.Text("bg done"))
	w.srv.Script("PANIC-1", llmtest.ToolUse("Bash", map[string]any{"command": "true"}))
	rt := newRuntime(t, cfg)
	evs, res, err := runAll(t, context.Background(), rt, "MAIN: go")
	if err != nil || res == nil {
		t.Fatal(err)
	}
	evs = append(evs, drainNotifications(t, rt)...)
	kids := map[string]string{}
	for _, ev := range evs {
		if ev.Type == run.EventTaskStarted {
			kids[ev.Task.Description] = ev.AgentID
		}
	}
	bgID, panicID := kids["bg BGOK"], kids["a task"]
	for _, ev := range evs {
		if ev.Type == run.EventTaskCompleted && ev.AgentID == panicID && (ev.Subagent.Status != task.Failed || !strings.Contains(ev.Subagent.Error, "crashed")) {
			t.Errorf("the panicking child ended %s: %q", ev.Subagent.Status, ev.Subagent.Error)
		}
	}
	if bgID == "" || panicID == "" {
		t.Fatalf("children %v", kids)
	}
	got := map[string]int{}
	for _, e := range w.entries() {
		got[fmt.Sprint(e["hook_event_name"], " ", e["agent_id"])]++
	}
	want := map[string]int{"PreToolUse " + bgID: 1, "SubagentStop " + bgID: 1, "PreToolUse " + panicID: 1}
	if !maps.Equal(got, want) {
		t.Errorf("frontmatter hook runs %v, want %v", got, want)
	}
	for _, id := range []string{bgID, panicID} {
		if n := rt.Hooks().Registered(id).Len(); n != 0 {
			t.Errorf("%s: %d hooks left registered", id, n)
		}
	}
}

// TestWorktreeHooksFromSettingsServeAnIsolatedChild: WorktreeCreate and
// WorktreeRemove hooks from settings are the worktree seam of the runtime
// (S-9.1): an isolated child runs in the tree the create script made with
// git, and the remove script takes it away when the child ends. The
// scripts get Claude Code's input: name for the create, worktree_path
// for the remove, with the common fields.
func TestWorktreeHooksFromSettingsServeAnIsolatedChild(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	w.dir = gitRepo(t)
	trees, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	create := w.script("wt-create.sh", `#!/bin/sh
in=$(cat)
printf '%s\n' "$in" >> "$HOOK_LOG"
name=$(printf '%s' "$in" | jq -r .name)
repo=$(printf '%s' "$in" | jq -r .cwd)
dir="`+trees+`/$name"
git -C "$repo" worktree add -q -b "hook-$name" "$dir" HEAD >&2 || exit 1
echo "$dir"
`)
	remove := w.script("wt-remove.sh", `#!/bin/sh
in=$(cat)
printf '%s\n' "$in" >> "$HOOK_LOG"
path=$(printf '%s' "$in" | jq -r .worktree_path)
repo=$(printf '%s' "$in" | jq -r .cwd)
git -C "$repo" worktree remove --force "$path" && git -C "$repo" branch -q -D "hook-$(basename "$path")"
`)
	cfg := w.config(`{"WorktreeCreate": [{"hooks": [{"type": "command", "command": "` + create + `"}]}],
	  "WorktreeRemove": [{"hooks": [{"type": "command", "command": "` + remove + `"}]}]}`)
	cfg.Cwd = w.dir
	cfg.HookEnv = append(cfg.HookEnv, gitTestEnv...)
	w.srv.Script("MAIN", llmtest.ToolUse("Agent", isolated("CHILD-WT: look around")), llmtest.Text("done"))
	var cwd, branch string
	w.srv.ScriptFunc("CHILD-WT", func(r *llmtest.Request) llmtest.Turn {
		if m := regexp.MustCompile(`Working directory: (\S+)`).FindStringSubmatch(r.System); m != nil {
			cwd = m[1]
			// The tree is a real checkout of the repository while the
			// child runs.
			branch = strings.TrimSpace(runGit(t, cwd, "rev-parse", "--abbrev-ref", "HEAD"))
		}
		return llmtest.Text("nothing to change")
	})
	evs, res, rt := mustRun(t, cfg, "MAIN: go")
	if res.Subagents.Completed != 1 {
		t.Fatalf("stats %+v", res.Subagents)
	}
	ids := taskIDs(evs)
	if len(ids) != 1 {
		t.Fatalf("tasks %v", ids)
	}
	want := filepath.Join(trees, "agent-"+ids[0])
	if cwd != want || branch != "hook-agent-"+ids[0] {
		t.Fatalf("the child ran in %q on %q, want the hook's tree %q", cwd, branch, want)
	}
	if _, err := os.Stat(want); !os.IsNotExist(err) {
		t.Errorf("the remove hook left the tree: %v", err)
	}
	if b := branches(t, w.dir); !slices.Equal(b, []string{"main"}) {
		t.Errorf("branches %v", b)
	}
	contains(t, w.toolResults("MAIN")[0], "worktree: "+want+" was removed.")
	var got []string
	for _, e := range w.entries() {
		keys := slices.Sorted(maps.Keys(e))
		got = append(got, strings.Join(keys, ","))
		if e["session_id"] != rt.SessionID() || e["transcript_path"] != rt.TranscriptPath() || e["cwd"] != w.dir {
			t.Errorf("common fields of %v", e)
		}
		switch e["hook_event_name"] {
		case "WorktreeCreate":
			if e["name"] != "agent-"+ids[0] {
				t.Errorf("create input %v", e)
			}
		case "WorktreeRemove":
			if e["worktree_path"] != want {
				t.Errorf("remove input %v", e)
			}
		}
	}
	// Exactly Claude Code's fields, create then remove.
	if !slices.Equal(got, []string{
		"cwd,hook_event_name,name,session_id,transcript_path",
		"cwd,hook_event_name,session_id,transcript_path,worktree_path",
	}) {
		t.Errorf("hook inputs carried %q", got)
	}
}

// TestPermissionRequestHooksDecideForBackgroundAgents: a background child
// can show no prompt (S-7.5), but as in Claude Code its PermissionRequest
// hooks still answer a call the rules would ask about before it is
// denied: a hook's allow runs the call, its deny is the model's message,
// and with no decision the call is denied as a background call. The
// person at the terminal is never asked.
func TestPermissionRequestHooksDecideForBackgroundAgents(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	decide := w.script("decide.sh", `#!/bin/sh
in=$(cat)
printf '%s\n' "$in" | jq -c . >> "$HOOK_LOG"
case $(printf '%s' "$in" | jq -r .tool_input.command) in
*allowed*) echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}' ;;
*denied*) echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"not from the background"}}}' ;;
esac
`)
	cfg := w.config(`{"PermissionRequest": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "` + decide + `"}]}]}`)
	person := &allowAll{}
	cfg.Permissions = &Permissions{Mode: permission.ModeDefault, Prompter: person,
		Rules: []permission.Rule{{Behavior: permission.Ask, Tool: "Bash", Source: "test"}}}
	file := func(name string) string { return filepath.Join(w.dir, name) }
	w.srv.Script("MAIN", llmtest.ToolUse("Agent", bgCall("BGKID: go on")), llmtest.Text("MAIN waits"), llmtest.Text("MAIN done"))
	w.srv.Script("BGKID", llmtest.ToolUses(
		llmtest.Call{Name: "Bash", Input: map[string]any{"command": "touch " + file("allowed")}},
		llmtest.Call{Name: "Bash", Input: map[string]any{"command": "touch " + file("denied")}},
		llmtest.Call{Name: "Bash", Input: map[string]any{"command": "touch " + file("ignored")}},
	), llmtest.Text("BGKID done"))
	rt := newRuntime(t, cfg)
	evs, _, err := runAll(t, context.Background(), rt, "MAIN: start")
	if err != nil {
		t.Fatal(err)
	}
	evs = append(evs, drainNotifications(t, rt)...)
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	ids := taskIDs(evs)
	if len(ids) != 1 {
		t.Fatalf("tasks %v", ids)
	}
	if _, err := os.Stat(file("allowed")); err != nil {
		t.Errorf("the call the hook allowed did not run: %v", err)
	}
	for _, name := range []string{"denied", "ignored"} {
		if _, err := os.Stat(file(name)); err == nil {
			t.Errorf("the %s call ran", name)
		}
	}
	res := w.toolResults("BGKID")
	if len(res) != 3 {
		t.Fatalf("tool results %q", res)
	}
	if strings.Contains(res[0], "denied") {
		t.Errorf("allowed call: %q", res[0])
	}
	contains(t, res[1], "A PermissionRequest hook denied this call: not from the background")
	contains(t, res[2], "runs in the background")
	if len(person.asked) != 0 {
		t.Errorf("the person was asked %v", person.asked)
	}
	var seen []string
	for _, e := range w.entries() {
		if e["hook_event_name"] != "PermissionRequest" || e["agent_id"] != ids[0] || e["agent_type"] != "general-purpose" || e["tool_name"] != "Bash" {
			t.Errorf("hook input %v", e)
			continue
		}
		seen = append(seen, e["tool_input"].(map[string]any)["command"].(string))
	}
	if want := []string{"touch " + file("allowed"), "touch " + file("denied"), "touch " + file("ignored")}; !slices.Equal(seen, want) {
		t.Errorf("PermissionRequest fired for %q, want %q", seen, want)
	}
}

// TestPermissionRequestHookRewritesAndGrants: a PermissionRequest hook's
// allow may change the call's input (updatedInput) and grant a rule for
// the session (updatedPermissions), as in Claude Code: the call runs with
// the hook's input, and a later call the granted rule covers is not asked
// about again (the hook does not fire for it).
func TestPermissionRequestHookRewritesAndGrants(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	rewritten := filepath.Join(w.dir, "rewritten")
	decide := w.script("decide.sh", `#!/bin/sh
in=$(cat)
printf '%s\n' "$in" | jq -c . >> "$HOOK_LOG"
echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"command":"touch `+rewritten+`"},"updatedPermissions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"touch:*"}],"behavior":"allow","destination":"session"}]}}}'
`)
	cfg := w.config(`{"PermissionRequest": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "` + decide + `"}]}]}`)
	person := &allowAll{}
	cfg.Permissions = &Permissions{Mode: permission.ModeDefault, Prompter: person}
	file := func(name string) string { return filepath.Join(w.dir, name) }
	w.srv.Script("MAIN",
		llmtest.ToolUse("Bash", map[string]any{"command": "touch " + file("asked")}),
		llmtest.ToolUse("Bash", map[string]any{"command": "touch " + file("granted")}),
		llmtest.Text("MAIN done"))
	rt := newRuntime(t, cfg)
	if _, _, err := runAll(t, context.Background(), rt, "MAIN: start"); err != nil {
		t.Fatal(err)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(rewritten); err != nil {
		t.Errorf("the call did not run with the hook's input: %v", err)
	}
	if _, err := os.Stat(file("asked")); err == nil {
		t.Error("the call ran with the model's input, not the hook's")
	}
	if _, err := os.Stat(file("granted")); err != nil {
		t.Errorf("the call the granted rule covers did not run: %v", err)
	}
	if n := len(w.entries()); n != 1 {
		t.Errorf("PermissionRequest fired %d times, want once (the grant covers the second call)", n)
	}
	if len(person.asked) != 0 {
		t.Errorf("the person was asked %v", person.asked)
	}
}
