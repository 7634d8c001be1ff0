package agentwf_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/internal/remote/agentwf"
	"github.com/cadre-dev/cadre/llm/anthropic"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/tool/builtin"
)

// env is the SDK's in-memory test environment running the agent workflow
// with real activities against a scripted model.
func env(t *testing.T, srv *llmtest.Server, workerRules ...permission.Rule) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	m, err := anthropic.New(anthropic.Config{APIKey: "test", BaseURL: srv.URL(), HTTPClient: &http.Client{Transport: tr}, RetryBase: 1, RetryMax: 2})
	if err != nil {
		t.Fatal(err)
	}
	var s testsuite.WorkflowTestSuite
	e := s.NewTestWorkflowEnvironment()
	acts := &agentwf.Activities{Model: m, Tools: builtin.Tools(builtin.Config{}), Rules: workerRules}
	e.RegisterWorkflowWithOptions(agentwf.Agent, workflow.RegisterOptions{Name: agentwf.WorkflowName})
	e.RegisterActivityWithOptions(acts.ModelCall, activity.RegisterOptions{Name: agentwf.ModelActivity})
	e.RegisterActivityWithOptions(acts.ToolCall, activity.RegisterOptions{Name: agentwf.ToolActivity})
	return e
}

func spawn(t *testing.T, prompt string, maxTurns int, mode permission.Mode, rules ...permission.Rule) executor.SpawnRequest {
	return executor.SpawnRequest{
		AgentID: "unit-agent", ParentID: "main", ToolUseID: "toolu_unit", Depth: 1,
		Definition: executor.Definition{Name: "general-purpose", System: "Do the task.", MaxTurns: maxTurns},
		Prompt:     prompt,
		Ceiling:    executor.Ceiling{Tools: []string{"Bash", "Read"}, Rules: rules},
		Model:      executor.Model{ID: "claude-sonnet-4-5"},
		Mode:       mode,
		Cwd:        t.TempDir(),
	}
}

// A message signalled while the model answers its last turn is not lost
// with the agent's end: it becomes the next turn.
func TestMessageAtTheLastTurnIsTheNextTurn(t *testing.T) {
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	e := env(t, srv)
	srv.Script("LAST", llmtest.Text("first answer"), llmtest.Text("answered the note"))
	e.RegisterDelayedCallback(func() {
		e.SignalWorkflow(agentwf.SignalMessage, executor.Message{From: "main", Text: "NOTE-AT-THE-END"})
	}, 0)
	e.ExecuteWorkflow(agentwf.WorkflowName, agentwf.Input{Request: spawn(t, "LAST answer", 0, permission.ModeBypassPermissions)})
	if err := e.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var out agentwf.Output
	if err := e.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	if out.Result.Status != task.Completed || out.Result.Text != "answered the note" || out.Result.Turns != 2 {
		t.Fatalf("result %+v", out.Result)
	}
	reqs := srv.RequestsFor("LAST")
	if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "NOTE-AT-THE-END") || strings.Contains(string(reqs[0].Body), "NOTE-AT-THE-END") {
		t.Fatalf("%d requests; the note is not in the second alone", len(reqs))
	}
}

// The turn limit ends the agent with the limit's note; a deny rule holds
// on the worker whether the launcher's ceiling or the worker's own
// settings hold it (the call is denied and does not run, the model reads
// why), and nothing denies the call without one.
func TestTurnLimitAndCeilingRules(t *testing.T) {
	deny := permission.Rule{Tool: "Bash", Behavior: permission.Deny, Source: "test"}
	for _, tc := range []struct {
		name             string
		launcher, worker []permission.Rule
		denied           bool
	}{
		{"launcher ceiling", []permission.Rule{deny}, nil, true},
		{"worker ceiling", nil, []permission.Rule{deny}, true},
		{"no rule", nil, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer()
			t.Cleanup(srv.Close)
			e := env(t, srv, tc.worker...)
			srv.Script("LIMIT", llmtest.ToolUse("Bash", map[string]string{"command": "echo ran > ran.txt"}), llmtest.Text("never reached"))
			req := spawn(t, "LIMIT try bash", 1, permission.ModeBypassPermissions, tc.launcher...)
			e.ExecuteWorkflow(agentwf.WorkflowName, agentwf.Input{Request: req})
			checkLimit(t, e, tc.denied)
			_, err := os.Stat(filepath.Join(req.Cwd, "ran.txt"))
			if ran := err == nil; ran == tc.denied {
				t.Fatalf("the call ran: %v, denied: %v", ran, tc.denied)
			}
		})
	}
}

func checkLimit(t *testing.T, e *testsuite.TestWorkflowEnvironment, denied bool) {
	t.Helper()
	if err := e.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var out agentwf.Output
	if err := e.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	if !out.Result.MaxTurnsHit || out.Result.Turns != 1 || out.Result.ToolUses != 1 {
		t.Fatalf("result %+v", out.Result)
	}
	var end *run.ToolResult
	for _, ev := range out.Events {
		if ev.Type == run.EventToolEnd {
			end = ev.ToolResult
		}
	}
	if end == nil || end.Denied != denied || end.IsError != denied {
		t.Fatalf("the call's result: %+v, want denied %v", end, denied)
	}
}
