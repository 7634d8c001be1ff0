package agentwf_test

import (
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/remote/agentwf"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/task"
)

// An Agent call the agent's ceiling does not allow — the tool not given,
// or given but unavailable at the depth limit — starts no sub-agent: the
// model reads why.
func TestAgentCallOutsideTheCeilingStartsNothing(t *testing.T) {
	for _, tc := range []struct {
		name        string
		tools       []string
		unavailable map[string]string
		want        string
	}{
		{"not given", []string{"Bash", "Read"}, nil, "No such tool: Agent"},
		{"depth limit", []string{"Bash", "Agent"}, map[string]string{"Agent": "DEPTH-LIMIT-NOTE"}, "DEPTH-LIMIT-NOTE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer()
			t.Cleanup(srv.Close)
			e := env(t, srv)
			srv.Script("KIDNOTALLOWED", llmtest.Text("kid ran"))
			srv.Script("NOAGENT", llmtest.ToolUse("Agent", map[string]any{"description": "kid", "prompt": "KIDNOTALLOWED go"}), llmtest.Text("done"))
			req := spawn(t, "NOAGENT try", 0, permission.ModeBypassPermissions)
			req.Ceiling.Tools, req.Ceiling.Unavailable = tc.tools, tc.unavailable
			e.ExecuteWorkflow(agentwf.WorkflowName, agentwf.Input{Request: req})
			if err := e.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			var out agentwf.Output
			if err := e.GetWorkflowResult(&out); err != nil {
				t.Fatal(err)
			}
			if out.Result.Status != task.Completed {
				t.Fatalf("result %+v", out.Result)
			}
			reqs := srv.RequestsFor("NOAGENT")
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			if got := reqs[1].LastToolResults(); len(got) != 1 || !got[0].IsError || !strings.Contains(got[0].ResultText(), tc.want) {
				t.Fatalf("the Agent call got %+v", got)
			}
			if n := len(srv.RequestsFor("KIDNOTALLOWED")); n != 0 {
				t.Fatalf("a sub-agent ran (%d requests)", n)
			}
		})
	}
}
