package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// --output-format json reports every task of the run under cadre.tasks
// (Claude Code's result has no such key): the foreground child and the
// background one, each with its id, type, description, status, usage and
// output file (its transcript, which exists).
func TestJSONOutputReportsEveryTask(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	fg := llmtest.Call{Name: "Agent", Input: map[string]any{"description": "look around", "prompt": "FGCHILD: look", "subagent_type": "Explore"}}
	s.Script("MAIN", llmtest.ToolUses(fg, bgAgentCall(1)))
	s.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
		return llmtest.Text(fmt.Sprintf("heard %d", countIn(r, "<task-notification>")))
	})
	s.Script("FGCHILD", llmtest.ToolUse("Glob", map[string]string{"pattern": "*"}), llmtest.Text("nothing here"))
	s.Script("BGCHILD-1", llmtest.Text("done 1"))
	p := runCadre(t, env, "", "-p", "MAIN: two children", "--output-format", "json")
	if p.code != 0 {
		t.Fatalf("code %d stderr %s", p.code, p.stderr)
	}
	var res struct {
		Result string `json:"result"`
		Cadre  struct {
			Tasks []struct {
				TaskID         string `json:"task_id"`
				ToolUseID      string `json:"tool_use_id"`
				SubagentType   string `json:"subagent_type"`
				Description    string `json:"description"`
				IsBackgrounded bool   `json:"is_backgrounded"`
				Status         string `json:"status"`
				OutputFile     string `json:"output_file"`
				Usage          struct {
					TotalTokens int64 `json:"total_tokens"`
					ToolUses    int   `json:"tool_uses"`
				} `json:"usage"`
				TokenUsage *struct {
					OutputTokens int64 `json:"output_tokens"`
				} `json:"token_usage"`
			} `json:"tasks"`
		} `json:"cadre"`
	}
	if err := json.Unmarshal([]byte(p.stdout), &res); err != nil {
		t.Fatalf("%v: %s", err, p.stdout)
	}
	if res.Result != "heard 1" || len(res.Cadre.Tasks) != 2 {
		t.Fatalf("result %q, tasks %+v", res.Result, res.Cadre.Tasks)
	}
	byType := map[string]int{}
	for i, tk := range res.Cadre.Tasks {
		byType[tk.SubagentType] = i
		if tk.TaskID == "" || !strings.HasPrefix(tk.ToolUseID, "toolu_") || tk.Status != "completed" || tk.Usage.TotalTokens <= 0 ||
			tk.TokenUsage == nil || tk.TokenUsage.OutputTokens <= 0 {
			t.Fatalf("task %+v", tk)
		}
		if _, err := os.Stat(tk.OutputFile); err != nil {
			t.Fatalf("output file of %s: %v", tk.TaskID, err)
		}
	}
	ex, gp := res.Cadre.Tasks[byType["Explore"]], res.Cadre.Tasks[byType["general-purpose"]]
	if ex.SubagentType != "Explore" || ex.Description != "look around" || ex.IsBackgrounded || ex.Usage.ToolUses != 1 {
		t.Fatalf("foreground task %+v", ex)
	}
	if gp.SubagentType != "general-purpose" || gp.Description != "job 1" || !gp.IsBackgrounded {
		t.Fatalf("background task %+v", gp)
	}
}
