package tasklisttools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/hooks"
	"github.com/cadre-dev/cadre/internal/tasklist"
	"github.com/cadre-dev/cadre/tool"
)

// mate is a teammate calling the tools over a shared store.
type mate struct {
	name  string
	store *tasklist.Store
	err   error
	mu    sync.Mutex
	fired []hooks.Input
}

func (m *mate) TaskList(context.Context) (*tasklist.Store, error) { return m.store, m.err }
func (m *mate) Name() string                                      { return m.name }
func (m *mate) Teammate() bool                                    { return m.name != "team-lead" }
func (m *mate) FireTaskHook(_ context.Context, in *hooks.Input) hooks.Outcome {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fired = append(m.fired, *in)
	return hooks.Outcome{}
}

func byName(tools []tool.Tool, name string) tool.Tool {
	i := slices.IndexFunc(tools, func(t tool.Tool) bool { return t.Spec().Name == name })
	return tools[i]
}

func call(t *testing.T, c Caller, name string, in any) tool.Output {
	t.Helper()
	tools := Tools(func(context.Context, *tool.Env) Caller { return c })
	b, _ := json.Marshal(in)
	out, err := byName(tools, name).Run(context.Background(), &tool.Env{}, b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSchemasAreClaudeCodes: the four tools take Claude Code's fields,
// with its required ones.
func TestSchemasAreClaudeCodes(t *testing.T) {
	want := map[string][2][]string{
		"TaskCreate": {{"subject", "description", "activeForm", "metadata"}, {"subject", "description"}},
		"TaskGet":    {{"taskId"}, {"taskId"}},
		"TaskList":   {{}, {}},
		"TaskUpdate": {{"taskId", "subject", "description", "activeForm", "status", "addBlocks", "addBlockedBy", "owner", "metadata"}, {"taskId"}},
	}
	for _, tl := range Tools(func(context.Context, *tool.Env) Caller { return nil }) {
		var s struct {
			Properties map[string]struct {
				Enum []string `json:"enum"`
			} `json:"properties"`
			Required []string `json:"required"`
		}
		if err := json.Unmarshal(tl.Spec().InputSchema, &s); err != nil {
			t.Fatal(err)
		}
		w, ok := want[tl.Spec().Name]
		if !ok {
			t.Fatalf("unexpected tool %s", tl.Spec().Name)
		}
		var props []string
		for p := range s.Properties {
			props = append(props, p)
		}
		slices.Sort(props)
		wantProps := slices.Clone(w[0])
		slices.Sort(wantProps)
		if !slices.Equal(props, wantProps) || !slices.Equal(s.Required, w[1]) && len(s.Required)+len(w[1]) > 0 {
			t.Errorf("%s: properties %v required %v, want %v %v", tl.Spec().Name, props, s.Required, wantProps, w[1])
		}
		if tl.Spec().Name == "TaskUpdate" && !slices.Equal(s.Properties["status"].Enum, []string{"pending", "in_progress", "completed", "deleted"}) {
			t.Errorf("status enum %v", s.Properties["status"].Enum)
		}
	}
}

// TestToolsRaceForOneTask: twenty teammates set one task in_progress
// through TaskUpdate at once; one gets it, every other is told who owns
// it, and the hooks name the teammate that completes it.
func TestToolsRaceForOneTask(t *testing.T) {
	s, err := tasklist.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	lead := &mate{name: "team-lead", store: s}
	call(t, lead, "TaskCreate", map[string]any{"subject": "Only one", "description": "d"})
	var wg sync.WaitGroup
	outs := make([]string, 20)
	mates := make([]*mate, 20)
	for i := range outs {
		mates[i] = &mate{name: fmt.Sprintf("mate%d", i), store: s}
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = call(t, mates[i], "TaskUpdate", map[string]any{"taskId": "1", "status": "in_progress"}).Text
		}()
	}
	wg.Wait()
	winner := -1
	for i, o := range outs {
		if strings.HasPrefix(o, `{"statusChange"`) {
			if winner >= 0 {
				t.Fatalf("two winners: %d and %d", winner, i)
			}
			winner = i
		} else if !strings.Contains(o, `"success":false`) || !strings.Contains(o, "already claimed by mate") {
			t.Errorf("loser %d: %s", i, o)
		}
	}
	if winner < 0 {
		t.Fatal("no winner")
	}
	out := call(t, mates[winner], "TaskUpdate", map[string]any{"taskId": "1", "status": "completed"})
	if !strings.Contains(out.Text, `"success":true`) {
		t.Fatal(out.Text)
	}
	if f := mates[winner].fired; len(f) != 1 || f[0].HookEventName != hooks.TaskCompleted || f[0].TeammateName != mates[winner].name || f[0].TaskSubject != "Only one" {
		t.Fatalf("hooks fired %+v", f)
	}
	if f := lead.fired; len(f) != 1 || f[0].HookEventName != hooks.TaskCreated || f[0].TeammateName != "" {
		t.Fatalf("lead's create fired %+v (the lead is no teammate)", f)
	}
}

// TestToolsWithoutAList: outside a session, or with no list to open, the
// tools answer with an error the model reads.
func TestToolsWithoutAList(t *testing.T) {
	inputs := map[string]map[string]any{"TaskCreate": {"subject": "s", "description": "d"}, "TaskGet": {"taskId": "1"},
		"TaskList": {}, "TaskUpdate": {"taskId": "1", "status": "completed"}}
	for name, in := range inputs {
		b, _ := json.Marshal(in)
		tools := Tools(func(context.Context, *tool.Env) Caller { return nil })
		out, err := byName(tools, name).Run(context.Background(), &tool.Env{}, b)
		if err != nil || !out.IsError || !strings.Contains(out.Text, "session") {
			t.Errorf("%s outside a session: %+v %v", name, out, err)
		}
		out = call(t, &mate{name: "x", err: errors.New("no state directory")}, name, in)
		if !out.IsError || !strings.Contains(out.Text, "The team's task list is not available: no state directory") {
			t.Errorf("%s without a list: %+v", name, out)
		}
	}
}

// assigningMate records the tasks its TaskUpdate calls gave to others.
type assigningMate struct {
	mate
	assigned []string
}

func (m *assigningMate) TaskAssigned(_ context.Context, t tasklist.Task, by string) {
	m.assigned = append(m.assigned, t.ID+" to "+t.Owner+" by "+by)
}

// TestAssignmentTold: giving a task to another agent tells it (through
// the Caller's Assigner); claiming for oneself, or changing something
// else, does not.
func TestAssignmentTold(t *testing.T) {
	s, err := tasklist.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	lead := &assigningMate{mate: mate{name: "team-lead", store: s}}
	call(t, lead, "TaskCreate", map[string]any{"subject": "a", "description": "d"})
	call(t, lead, "TaskCreate", map[string]any{"subject": "b", "description": "d"})
	call(t, lead, "TaskUpdate", map[string]any{"taskId": "1", "owner": "tester"})
	call(t, lead, "TaskUpdate", map[string]any{"taskId": "1", "owner": "tester"}) // no change
	call(t, lead, "TaskUpdate", map[string]any{"taskId": "2", "status": "in_progress"})
	call(t, lead, "TaskUpdate", map[string]any{"taskId": "2", "subject": "b2"})
	if want := []string{"1 to tester by team-lead"}; !slices.Equal(lead.assigned, want) {
		t.Fatalf("assignments told %v, want %v", lead.assigned, want)
	}
}
