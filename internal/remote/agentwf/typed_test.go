package agentwf_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/remote/agentwf"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
)

const countSchema = `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}`

// A remote agent with an output schema is offered the StructuredOutput
// tool of that schema; its first answer does not match and it is told
// why, with the path; its second matches, which ends it with the JSON as
// its result's structured output.
func TestRemoteTypedAgentToldWhyThenMatches(t *testing.T) {
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	e := env(t, srv)
	srv.Script("TYPED",
		llmtest.ToolUse("StructuredOutput", map[string]any{"n": "three"}),
		llmtest.ToolUse("StructuredOutput", map[string]any{"n": 3}),
		llmtest.Text("never reached"))
	req := spawn(t, "TYPED count", 0, permission.ModeBypassPermissions)
	req.Definition.OutputSchema = json.RawMessage(countSchema)
	req.Ceiling.Tools = append(req.Ceiling.Tools, "StructuredOutput")
	e.ExecuteWorkflow(agentwf.WorkflowName, agentwf.Input{Request: req})
	res := result(t, e).Result
	if res.Status != task.Completed || string(res.StructuredOutput) != `{"n":3}` || res.Subtype != "" {
		t.Fatalf("result %+v, structured %s", res, res.StructuredOutput)
	}
	reqs := srv.RequestsFor("TYPED")
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	if names := reqs[0].ToolNames(); !slices.Contains(names, "StructuredOutput") || !strings.Contains(string(reqs[0].Body), `"required":["n"]`) {
		t.Fatalf("the model was not offered the schema's tool: %v", names)
	}
	told := reqs[1].LastToolResults()
	if len(told) != 1 || !told[0].IsError || !strings.Contains(told[0].ResultText(), "/n") {
		t.Fatalf("the mismatch was not told with its path: %+v", told)
	}
}

// One that never matches fails after its 5 attempts with
// error_max_structured_output_retries; one that ends its turn without the
// call is reminded once, then fails.
func TestRemoteTypedAgentNeverComplies(t *testing.T) {
	for _, tc := range []struct {
		name  string
		turn  llmtest.Turn
		calls int
	}{
		{"mismatches", llmtest.ToolUse("StructuredOutput", map[string]any{"n": "x"}), 5},
		{"no call", llmtest.Text("here is prose"), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer()
			t.Cleanup(srv.Close)
			e := env(t, srv)
			srv.ScriptFunc("NEVER", func(*llmtest.Request) llmtest.Turn { return tc.turn })
			req := spawn(t, "NEVER comply", 0, permission.ModeBypassPermissions)
			req.Definition.OutputSchema = json.RawMessage(countSchema)
			e.ExecuteWorkflow(agentwf.WorkflowName, agentwf.Input{Request: req})
			res := result(t, e).Result
			if res.Status != task.Failed || res.Subtype != run.ErrorMaxStructuredOutputRetries || res.StructuredOutput != nil ||
				!strings.Contains(res.Error, "error_max_structured_output_retries") {
				t.Fatalf("result %+v", res)
			}
			if got := len(srv.RequestsFor("NEVER")); got != tc.calls {
				t.Fatalf("%d model requests, want %d", got, tc.calls)
			}
		})
	}
}

// A background sub-agent of a remote agent gets its own call's output
// schema and a reservation from the agent's budget: its matched JSON is in
// the notification its parent reads, and its turns are charged to the
// parent's spend when it ends.
func TestRemoteBackgroundSubagentTypedAndBudgeted(t *testing.T) {
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	e := env(t, srv)
	srv.Script("BGCHILD", llmtest.ToolUse("StructuredOutput", map[string]any{"n": 4}), llmtest.Text("never reached"))
	srv.ScriptFunc("BGPARENT", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.ToolUse("Agent", map[string]any{"description": "bg", "prompt": "BGCHILD count", "run_in_background": true,
				"output_schema": json.RawMessage(countSchema), "budget": map[string]any{"turns": 3}})
		}
		return llmtest.Text("parent heard")
	})
	req := spawn(t, "BGPARENT delegate", 0, permission.ModeBypassPermissions)
	req.Ceiling.Tools = append(req.Ceiling.Tools, "Agent")
	req.Budget.Turns = 10
	e.ExecuteWorkflow(agentwf.WorkflowName, agentwf.Input{Request: req})
	res := result(t, e).Result
	if res.Status != task.Completed || res.Text != "parent heard" {
		t.Fatalf("result %+v", res)
	}
	if res.Budget == nil || res.Budget.Spent.Turns != 4 {
		t.Fatalf("the parent's spend %+v, want 4 turns (3 its own: the call, its answer, its answer to the notification; 1 its child's)", res.Budget)
	}
	var heard string
	for _, r := range srv.RequestsFor("BGPARENT") {
		heard += string(r.Body)
	}
	if !strings.Contains(heard, `\u003cstructured-output\u003e\n{\"n\":4}`) && !strings.Contains(heard, `<structured-output>\n{\"n\":4}`) {
		t.Fatalf("the parent did not read the child's structured output: %s", heard)
	}
}
