package cli

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
)

// TestBudgetStreamJSON: --max-budget-usd is the session's budget (S-15.2):
// the Agent tool offers budget, a child's task_started says what it
// reserved and why, its task_progress carries its spend, and its
// task_notification what it spent and returned; the run still ends with
// error_max_budget_usd once the session's budget is spent.
func TestBudgetStreamJSON(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	// claude-sonnet-4-5 at $3/M input, $15/M output: 10,000 tokens cost about $0.03.
	u := func(n int64) llm.Usage { return llm.Usage{InputTokens: n - 10, OutputTokens: 10} }
	s.Script("MAIN", llmtest.ToolUse("Agent", map[string]any{"description": "a part", "prompt": "KID: do a part",
		"subagent_type": "general-purpose", "budget": map[string]any{"usd": 0.06}}).WithUsage(u(10000)),
		llmtest.ToolUse("Glob", map[string]any{"pattern": "*"}).WithUsage(u(20000)), llmtest.Text("never reached"))
	s.Script("KID", llmtest.ToolUse("Glob", map[string]any{"pattern": "*"}).WithUsage(u(5000)), llmtest.Text("kid done").WithUsage(u(5000)))
	p := runCadre(t, env, "", "-p", "MAIN go", "--model", "sonnet", "--output-format", "stream-json", "--verbose", "--max-budget-usd", "0.1")
	var progress, note, started map[string]any
	sc := bufio.NewScanner(strings.NewReader(p.stdout))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		switch ev["subtype"] {
		case "task_started":
			started = ev
		case "task_progress":
			progress = ev
		case "task_notification":
			note = ev
		}
	}
	res := resultOf(t, p.stdout)
	if p.code != ExitFailed || res["subtype"] != "error_max_budget_usd" || res["terminal_reason"] != "budget_exhausted" {
		t.Fatalf("code %d result %v stderr %s", p.code, res, p.stderr)
	}
	if started == nil || progress == nil || note == nil {
		t.Fatalf("missing task events:\n%s", p.stdout)
	}
	grant := started["cadre"].(map[string]any)["receipt"].(map[string]any)["budget"].(map[string]any)
	if grant["usd"] != 0.06 || !strings.Contains(grant["why"].(string), "(asked)") {
		t.Errorf("reservation %v", grant)
	}
	spent := progress["cadre"].(map[string]any)["budget_spent"].(map[string]any)
	if spent["tokens"] != 5000.0 || spent["turns"] != 1.0 {
		t.Errorf("progress spend %v", spent)
	}
	b := note["cadre"].(map[string]any)["budget"].(map[string]any)
	if b["spent"].(map[string]any)["tokens"] != 10000.0 || b["returned"].(map[string]any)["usd"].(float64) < 0.029 {
		t.Errorf("notification budget %v", b)
	}
	reqs := s.RequestsFor("MAIN")
	if len(reqs) == 0 || !strings.Contains(string(reqs[0].Body), `"budget"`) {
		t.Error("the Agent tool does not offer budget under --max-budget-usd")
	}
}
