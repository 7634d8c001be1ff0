package tui

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
	taskpkg "github.com/cadre-dev/cadre/task"
)

func TestTreeStates(t *testing.T) {
	t.Parallel()
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	end := func(id, status string) run.Event {
		return run.Event{Type: run.EventTaskCompleted, AgentID: id, Subagent: &run.SubagentResult{AgentID: id, Status: taskpkg.Status(status), ToolUses: 2}}
	}
	pending := func(id, parent string) run.Event {
		return run.Event{Type: run.EventTaskPending, AgentID: id, Task: &run.TaskInfo{AgentID: id, AgentType: "Explore", Parent: parent, ToolUseID: "call-" + id}}
	}
	tests := []struct {
		name string
		evs  []run.Event
		want map[string]State
	}{
		{"init runs main", []run.Event{initEvent()}, map[string]State{"": StateRunning}},
		{"result idles main", []run.Event{initEvent(), {Type: run.EventResult, Result: &run.Result{}}}, map[string]State{"": StateIdle}},
		{"a started child runs", []run.Event{initEvent(), task("a1", "Explore", "d", "main", "c1", 1, "m")}, map[string]State{"a1": StateRunning}},
		{"a queued child is pending, then runs", []run.Event{initEvent(), pending("a1", "main")}, map[string]State{"a1": StatePending}},
		{"pending then started", []run.Event{initEvent(), pending("a1", "main"), task("a1", "Explore", "d", "main", "c1", 1, "m")}, map[string]State{"a1": StateRunning}},
		{"a background child", []run.Event{initEvent(), func() run.Event {
			e := task("a1", "Explore", "d", "main", "c1", 1, "m")
			e.Task.Background = true
			return e
		}()}, map[string]State{"a1": StateBackground}},
		{"ends by status", []run.Event{initEvent(), task("a1", "X", "", "main", "c1", 1, ""), task("a2", "X", "", "main", "c2", 1, ""), task("a3", "X", "", "main", "c3", 1, ""),
			end("a1", "completed"), end("a2", "failed"), end("a3", "killed")}, map[string]State{"a1": StateCompleted, "a2": StateFailed, "a3": StateKilled}},
		{"unknown status ends completed", []run.Event{initEvent(), task("a1", "X", "", "main", "c1", 1, ""), end("a1", "weird")}, map[string]State{"a1": StateCompleted}},
		{"events of unknown agents are ignored", []run.Event{initEvent(), end("zz", "failed"), {Type: run.EventToolStart, AgentID: "zz"}}, map[string]State{"": StateRunning}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr := NewTree()
			for i, e := range tt.evs {
				tr.Apply(e, at(i))
			}
			got := map[string]State{}
			for id := range tt.want {
				if n := tr.Get(id); n != nil {
					got[id] = tr.State(n)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("states (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTreeShapeProgressAndClear(t *testing.T) {
	t.Parallel()
	tr := NewTree()
	tr.Apply(initEvent(), t0)
	tr.Apply(task("a1", "Explore", "one", "main", "c1", 1, "haiku"), t0)
	tr.Apply(task("a2", "general-purpose", "two", "main", "c2", 1, "sonnet"), t0)
	tr.Apply(task("a3", "verification", "three", "a2", "c3", 2, "sonnet"), t0)
	// A child whose parent is unknown hangs under main rather than nowhere.
	tr.Apply(task("a4", "Plan", "four", "a-gone", "c4", 2, ""), t0)
	tr.Apply(run.Event{Type: run.EventToolStart, AgentID: "a2", Call: call("x", "Bash", map[string]any{"command": "ls"})}, t0.Add(time.Second))
	tr.Apply(run.Event{Type: run.EventAssistant, AgentID: "a2", Usage: usage(100, 20)}, t0.Add(time.Second))
	tr.Apply(run.Event{Type: run.EventAssistant, AgentID: "a2", Usage: usage(150, 30)}, t0.Add(time.Second))

	var got [][2]string
	for _, r := range tr.Rows() {
		got = append(got, [2]string{r.Guide, nodeLabel(r.Node)})
	}
	want := [][2]string{{"", "main"}, {"├─ ", "Explore a1"}, {"├─ ", "general-purpose a2"}, {"│  └─ ", "verification a3"}, {"└─ ", "Plan a4"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("rows (-want +got):\n%s", diff)
	}
	a2 := tr.Get("a2")
	if a2.ToolUses != 1 || a2.LastTool != "Bash" || a2.Tokens != 300 || a2.Model != "sonnet" {
		t.Fatalf("progress of a2: %+v", a2)
	}
	if tr.ByToolUse("c3") != tr.Get("a3") {
		t.Fatal("ByToolUse does not find the agent of its call")
	}

	// Waiting shows while a prompt is open.
	tr.Waiting("a3", 1)
	if tr.State(tr.Get("a3")) != StateWaiting {
		t.Fatal("an agent with an open prompt is not waiting")
	}
	tr.Waiting("a3", -1)
	if tr.State(tr.Get("a3")) != StateRunning {
		t.Fatal("answered prompt left the agent waiting")
	}

	// Only ended subtrees are cleared: a2 ended but a3 runs.
	tr.Apply(run.Event{Type: run.EventTaskCompleted, AgentID: "a1", Subagent: &run.SubagentResult{AgentID: "a1", Status: "completed"}}, t0.Add(2*time.Second))
	tr.Apply(run.Event{Type: run.EventTaskCompleted, AgentID: "a2", Subagent: &run.SubagentResult{AgentID: "a2", Status: "completed"}}, t0.Add(2*time.Second))
	if n := tr.ClearFinished(); n != 1 || tr.Get("a1") != nil || tr.Get("a2") == nil || tr.ByToolUse("c1") != nil {
		t.Fatalf("first clear removed %d; a1 %v a2 %v", n, tr.Get("a1"), tr.Get("a2"))
	}
	tr.Apply(run.Event{Type: run.EventTaskCompleted, AgentID: "a3", Subagent: &run.SubagentResult{AgentID: "a3", Status: "failed"}}, t0.Add(3*time.Second))
	if n := tr.ClearFinished(); n != 2 || tr.Len() != 2 {
		t.Fatalf("second clear removed %d, %d left", n, tr.Len())
	}

	// The end of a turn kills what the turn still ran; the background
	// goes on.
	tr.Apply(task("a5", "X", "", "main", "c5", 1, ""), t0)
	tr.SetStatus("a5", "backgrounded", t0)
	tr.Apply(task("a6", "X", "", "main", "c6", 1, ""), t0)
	tr.Apply(task("a7", "X", "", "a5", "c7", 2, ""), t0) // the background agent's foreground child
	tr.EndTurn(true, "", t0.Add(5*time.Second))
	if tr.State(tr.Get("a5")) != StateBackground || tr.State(tr.Get("a6")) != StateKilled || tr.State(tr.Main()) != StateInterrupted ||
		tr.State(tr.Get("a7")) != StateRunning {
		t.Fatalf("after the turn: a5 %s a6 %s a7 %s main %s", tr.State(tr.Get("a5")), tr.State(tr.Get("a6")), tr.State(tr.Get("a7")), tr.State(tr.Main()))
	}
	if d := tr.Get("a6").Elapsed(t0.Add(time.Hour)); d != 5*time.Second {
		t.Fatalf("a killed agent's elapsed keeps running: %v", d)
	}
}

// TestTreeShowsTeammates: a teammate's row names it, its team and its
// state, and follows the state as progress events change it.
func TestTreeShowsTeammates(t *testing.T) {
	tr := NewTree()
	at := time.Unix(0, 0)
	info := &run.TaskInfo{AgentID: "a1", AgentType: "general-purpose", Description: "build", Background: true, Parent: "main", Depth: 1,
		Teammate: &run.TeammateInfo{Name: "alice", Team: "session-12345678", State: "working"}}
	tr.Apply(run.Event{Type: run.EventTaskStarted, AgentID: "a1", Task: info}, at)
	n := tr.Get("a1")
	if n == nil || n.Description != "@alice (session-12345678) working · build" {
		t.Fatalf("teammate row %+v", n)
	}
	idle := *info
	idle.Teammate = &run.TeammateInfo{Name: "alice", Team: "session-12345678", State: "idle"}
	tr.Apply(run.Event{Type: run.EventTaskProgress, AgentID: "a1", Task: &idle}, at)
	if got := tr.Get("a1").Description; got != "@alice (session-12345678) idle · build" {
		t.Fatalf("after idle: %q", got)
	}
}

// TestPromptLabelNamesTeammate: a teammate's permission prompt is
// labelled with its name, also when the prompt came before the tree
// learnt of the teammate; other sub-agents keep "TYPE ID", main "main".
func TestPromptLabelNamesTeammate(t *testing.T) {
	tr := NewTree()
	at := time.Unix(0, 0)
	d := &permissionDialog{}
	reply := make(chan permission.Reply, 1)
	d.add(promptMsg{id: 1, prompt: permission.Prompt{Request: permission.Request{Tool: "Bash", AgentID: "a1", AgentType: "general-purpose"}}, reply: reply}, tr)
	d.add(promptMsg{id: 2, prompt: permission.Prompt{Request: permission.Request{Tool: "Bash", AgentID: "a2", AgentType: "Explore"}}, reply: reply}, tr)
	d.add(promptMsg{id: 3, prompt: permission.Prompt{Request: permission.Request{Tool: "Bash"}}, reply: reply}, tr)
	if got := d.prompts[0].label(); got != "general-purpose a1" {
		t.Fatalf("before the tree knows a1: %q", got)
	}
	tr.Apply(run.Event{Type: run.EventTaskStarted, AgentID: "a1", Task: &run.TaskInfo{AgentID: "a1", AgentType: "general-purpose", Background: true, Parent: "main", Depth: 1,
		Teammate: &run.TeammateInfo{Name: "wes", Team: "session-1", State: "working"}}}, at)
	tr.Apply(run.Event{Type: run.EventTaskStarted, AgentID: "a2", Task: &run.TaskInfo{AgentID: "a2", AgentType: "Explore", Parent: "main", Depth: 1}}, at)
	d.nameTeammates(tr)
	for i, want := range []string{"@wes (general-purpose a1)", "Explore a2", "main"} {
		if got := d.prompts[i].label(); got != want {
			t.Errorf("prompt %d label %q, want %q", i+1, got, want)
		}
	}
}
