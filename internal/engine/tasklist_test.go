package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/hooks"
	"github.com/cadre-dev/cadre/internal/tasklist"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/run"
)

// taskHookScript refuses to create a task whose subject says
// "forbidden" and to complete task 2, logging every input it gets.
const taskHookScript = `#!/bin/sh
in=$(cat)
echo "$in" | jq -c . >> "$HOOK_LOG"
ev=$(echo "$in" | jq -r .hook_event_name)
if [ "$ev" = TaskCreated ] && echo "$in" | jq -e '.task_subject | test("forbidden")' >/dev/null; then
  echo "no forbidden tasks" >&2; exit 2
fi
if [ "$ev" = TaskCompleted ] && [ "$(echo "$in" | jq -r .task_id)" = 2 ]; then
  echo "the tests of task 2 fail" >&2; exit 2
fi
`

// TestTaskListToolsScenario: with teams on, the main agent works the
// team's task list through the four tools with Claude Code's outputs;
// links are kept both ways, TaskList shows open blockers only,
// in_progress without owner claims for the caller, and the TaskCreated
// and TaskCompleted hooks undo a create and refuse a completion.
func TestTaskListToolsScenario(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	hook := w.script("task.sh", taskHookScript)
	cfg := w.config(`{"TaskCreated": [{"hooks": [{"type": "command", "command": "` + hook + `"}]}],
		"TaskCompleted": [{"hooks": [{"type": "command", "command": "` + hook + `"}]}]}`)
	cfg.Teams = true
	cfg.TaskListID = "crew"
	steps := []struct {
		tool string
		in   map[string]any
		want string // the tool result that follows
	}{
		{"TaskCreate", map[string]any{"subject": "Write parser", "description": "parse it", "activeForm": "Writing parser"}, `{"task":{"description":"parse it","id":"1","subject":"Write parser"}}`},
		{"TaskCreate", map[string]any{"subject": "Test parser", "description": "test it"}, `{"task":{"description":"test it","id":"2","subject":"Test parser"}}`},
		{"TaskCreate", map[string]any{"subject": "A forbidden thing", "description": "x"}, "A TaskCreated hook refused task #3: no forbidden tasks"},
		{"TaskUpdate", map[string]any{"taskId": "2", "addBlockedBy": []string{"1"}}, `{"success":true,"taskId":"2","updatedFields":["blockedBy"]}`},
		{"TaskList", map[string]any{}, `{"tasks":[{"id":"1","subject":"Write parser","status":"pending","blockedBy":[]},{"id":"2","subject":"Test parser","status":"pending","blockedBy":["1"]}]}`},
		{"TaskUpdate", map[string]any{"taskId": "1", "status": "in_progress"}, `{"statusChange":{"from":"pending","to":"in_progress"},"success":true,"taskId":"1","updatedFields":["owner","status"]}`},
		{"TaskUpdate", map[string]any{"taskId": "1", "status": "completed"}, `{"statusChange":{"from":"in_progress","to":"completed"},"success":true,"taskId":"1","updatedFields":["status"]}`},
		{"TaskUpdate", map[string]any{"taskId": "2", "status": "completed"}, `{"error":"A TaskCompleted hook refused task #2: the tests of task 2 fail","success":false,"taskId":"2","updatedFields":[]}`},
		{"TaskGet", map[string]any{"taskId": "1"}, `{"task":{"blockedBy":[],"blocks":["2"],"description":"parse it","id":"1","status":"completed","subject":"Write parser"}}`},
		{"TaskList", map[string]any{}, `{"tasks":[{"id":"1","subject":"Write parser","status":"completed","owner":"team-lead","blockedBy":[]},{"id":"2","subject":"Test parser","status":"pending","blockedBy":[]}]}`},
		{"TaskGet", map[string]any{"taskId": "3"}, `{"task":null}`},
		{"TaskUpdate", map[string]any{"taskId": "9", "status": "completed"}, `{"error":"task 9: task not found","success":false,"taskId":"9","updatedFields":[]}`},
	}
	var script []llmtest.Turn
	for _, s := range steps {
		script = append(script, llmtest.ToolUse(s.tool, s.in))
	}
	w.srv.Script("MAIN", append(script, llmtest.Text("done"))...)
	evs, _, rt := mustRun(t, cfg, "MAIN: plan the work")
	// Each create and update that went through is followed by the list.
	var lists [][]run.TeamTask
	for _, ev := range evs {
		if ev.Type == run.EventTeamTasks {
			lists = append(lists, ev.TeamTasks)
		}
	}
	if len(lists) != 7 { // 2 creates and 5 updates (a refused update answers success:false); the refused create is an error
		t.Fatalf("%d team task events, want 7", len(lists))
	}
	last, _ := json.Marshal(lists[len(lists)-1])
	if string(last) != `[{"id":"1","subject":"Write parser","status":"completed","owner":"team-lead"},{"id":"2","subject":"Test parser","status":"pending"}]` {
		t.Errorf("last team task list %s", last)
	}

	reqs := w.srv.RequestsFor("MAIN")
	if len(reqs) != len(steps)+1 {
		t.Fatalf("%d requests, want %d", len(reqs), len(steps)+1)
	}
	for _, name := range []string{"TaskCreate", "TaskGet", "TaskList", "TaskUpdate"} {
		if !slices.Contains(reqs[0].ToolNames(), name) {
			t.Errorf("teams on: %s not offered (%v)", name, reqs[0].ToolNames())
		}
	}
	for i, s := range steps {
		res := reqs[i+1].LastToolResults()
		if len(res) != 1 {
			t.Fatalf("step %d: %d results", i, len(res))
		}
		if got := res[0].ResultText(); got != s.want {
			t.Errorf("step %d %s %v:\n got %s\nwant %s", i, s.tool, s.in, got, s.want)
		}
	}
	// The store on disk says the same, in the state directory.
	t.Cleanup(func() { rt.Close() }) // the list named by id is watched until then
	st, err := sessionTaskList(rt)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := tasklist.Dir(cfg.StateDir, "crew"); st.Path() != want {
		t.Errorf("list at %s, want %s", st.Path(), want)
	}
	all, err := st.List(t.Context())
	if err != nil || len(all) != 2 || all[0].Status != tasklist.Completed || all[1].Status != tasklist.Pending {
		t.Fatalf("stored tasks %+v %v", all, err)
	}
	// The hooks saw Claude Code's fields.
	var seen []string
	for _, e := range w.entries() {
		b, _ := json.Marshal(map[string]any{"ev": e["hook_event_name"], "id": e["task_id"], "subject": e["task_subject"], "desc": e["task_description"]})
		seen = append(seen, string(b))
		if e["session_id"] == "" || e["cwd"] != w.dir {
			t.Errorf("hook input without session or cwd: %v", e)
		}
	}
	want := []string{
		`{"desc":"parse it","ev":"TaskCreated","id":"1","subject":"Write parser"}`,
		`{"desc":"test it","ev":"TaskCreated","id":"2","subject":"Test parser"}`,
		`{"desc":"x","ev":"TaskCreated","id":"3","subject":"A forbidden thing"}`,
		`{"desc":"parse it","ev":"TaskCompleted","id":"1","subject":"Write parser"}`,
		`{"desc":"test it","ev":"TaskCompleted","id":"2","subject":"Test parser"}`,
	}
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Errorf("hook inputs:\n%s\nwant\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
}

// TestTaskListToolsOnlyWithTeams: without teams no agent is offered the
// task list tools.
func TestTaskListToolsOnlyWithTeams(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Script("MAIN", llmtest.Text("done"))
	mustRun(t, h.config(), "MAIN: hi")
	for _, name := range h.srv.RequestsFor("MAIN")[0].ToolNames() {
		if strings.HasPrefix(name, "Task") && name != "TaskStop" && name != "TaskOutput" {
			t.Errorf("teams off: %s offered", name)
		}
	}
}

// TestTaskListOutlivesTheProcess: the list is the session's, on disk: a
// resumed session (a new Runtime with the same session id and state
// directory) finds the tasks its earlier process made, and ids go on
// from there.
func TestTaskListOutlivesTheProcess(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cfg := h.config()
	cfg.Teams = true
	cfg.SessionID = "0b6a3c1e-5d7f-4e2a-9c8b-1f2e3d4c5b6a"
	h.srv.Script("FIRST", llmtest.ToolUse("TaskCreate", map[string]any{"subject": "Carry on", "description": "d"}), llmtest.Text("done"))
	_, _, first := mustRun(t, cfg, "FIRST: plan")
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	h.srv.Script("SECOND", llmtest.ToolUse("TaskList", map[string]any{}), llmtest.ToolUse("TaskCreate", map[string]any{"subject": "Next", "description": "d"}), llmtest.Text("done"))
	mustRun(t, cfg, "SECOND: go on")
	reqs := h.srv.RequestsFor("SECOND")
	if got := reqs[1].LastToolResults()[0].ResultText(); got != `{"tasks":[{"id":"1","subject":"Carry on","status":"pending","blockedBy":[]}]}` {
		t.Errorf("resumed TaskList %s", got)
	}
	if got := reqs[2].LastToolResults()[0].ResultText(); got != `{"task":{"description":"d","id":"2","subject":"Next"}}` {
		t.Errorf("resumed TaskCreate %s", got)
	}
	if _, err := os.Stat(filepath.Join(cfg.StateDir, "tasks", "session-0b6a3c1e", "1.json")); err != nil {
		t.Errorf("the session's list is not where Claude Code keeps it: %v", err)
	}
}

// TestSharedTaskListWakesAcrossProcesses: a list named by id (shared
// through CADRE_TASK_LIST_ID) is watched while the session lives: a task
// another process adds wakes this session's waiters; Close ends the
// watch (goleak checks at the end of the package's tests).
func TestSharedTaskListWakesAcrossProcesses(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cfg := h.config()
	cfg.Teams, cfg.TaskListID = true, "shared-crew"
	rt, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	mine, err := sessionTaskList(rt)
	if err != nil {
		t.Fatal(err)
	}
	other, err := tasklist.Open(mine.Path()) // the other process's view
	if err != nil {
		t.Fatal(err)
	}
	ch := mine.Changed()
	if _, err := other.Create(t.Context(), tasklist.NewTask{Subject: "from the other process"}); err != nil {
		t.Fatal(err)
	}
	<-ch
	if ok, err := mine.HasClaimable(t.Context()); !ok || err != nil {
		t.Fatalf("claimable after the other process's create: %v %v", ok, err)
	}
}

// TestTeammateTaskLife: the functions a teammate's life calls — an idle
// teammate claims the lowest claimable task (never a blocked one, never
// one twice), a stopped one gives its open tasks back and the lead is
// told which, and a TeammateIdle hook that exits 2 keeps a teammate
// working with its reason.
func TestTeammateTaskLife(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	idle := w.script("idle.sh", `#!/bin/sh
in=$(cat)
echo "$in" | jq -c . >> "$HOOK_LOG"
[ "$(echo "$in" | jq -r .teammate_name)" = tester ] && { echo "task 3 is still open" >&2; exit 2; }
exit 0
`)
	cfg := w.config(`{"TeammateIdle": [{"hooks": [{"type": "command", "command": "` + idle + `"}]}]}`)
	cfg.Teams = true
	rt := newRuntime(t, cfg)
	ctx := t.Context()
	s, err := sessionTaskList(rt)
	if err != nil {
		t.Fatal(err)
	}
	for _, subj := range []string{"one", "two", "three"} {
		if _, err := s.Create(ctx, tasklist.NewTask{Subject: subj, Description: "do " + subj}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Update(ctx, leadName, "1", tasklist.Update{AddBlocks: []string{"2"}}); err != nil {
		t.Fatal(err)
	}
	got, ok, err := teammateClaim(ctx, rt, "tester")
	if err != nil || !ok || !strings.HasPrefix(got, "You claimed task #1 from the team's task list: one\n\ndo one") {
		t.Fatalf("first claim %q %v %v", got, ok, err)
	}
	got, ok, _ = teammateClaim(ctx, rt, "reviewer")
	if !ok || !strings.HasPrefix(got, "You claimed task #3 ") {
		t.Fatalf("second claim skips blocked #2: %q", got)
	}
	if _, ok, _ := teammateClaim(ctx, rt, "third"); ok {
		t.Fatal("claimed a blocked task")
	}
	told, err := teammateReleased(ctx, rt, "tester")
	if err != nil || told != "Teammate tester stopped; its open tasks are pending and unowned again:\n- #1 one" {
		t.Fatalf("released %q %v", told, err)
	}
	if told, _ := teammateReleased(ctx, rt, "nobody"); told != "" {
		t.Fatalf("a teammate without tasks released %q", told)
	}
	if got, ok, _ := teammateClaim(ctx, rt, "third"); !ok || !strings.HasPrefix(got, "You claimed task #1 ") {
		t.Fatalf("released task not claimable again: %q", got)
	}
	a := &agent{id: "a1", hooks: rt.Hooks().ForAgent(hooks.Scope{SessionID: rt.SessionID(), Cwd: w.dir, AgentID: "a1", AgentType: "tester"})}
	keep, instruction := teammateIdleHook(ctx, a, "tester", "crew")
	if !keep || instruction != "A TeammateIdle hook keeps you working instead of going idle: task 3 is still open" {
		t.Fatalf("tester kept %v %q", keep, instruction)
	}
	if keep, _ := teammateIdleHook(ctx, a, "reviewer", "crew"); keep {
		t.Fatal("reviewer kept working though its hook exited 0")
	}
	log := w.entries()
	if len(log) != 2 || log[0]["teammate_name"] != "tester" || log[0]["team_name"] != "crew" || log[0]["agent_id"] != "a1" {
		t.Fatalf("TeammateIdle inputs %v", log)
	}
}
