package cli

import (
	"encoding/json"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// modelPrices in settings (here --settings as inline JSON) replaces the
// built-in price of a model in total_cost_usd and modelUsage.
func TestSettingsPricesTheRun(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	s.Script("", llmtest.Text("priced"))
	// A dollar per output token and nothing for the rest: the cost is the
	// output token count.
	p := runCadre(t, env, "", "-p", "hi", "--output-format", "json",
		"--settings", `{"modelPrices": {"claude-sonnet-4-5": {"output": 1000000}}}`)
	if p.code != 0 {
		t.Fatalf("code %d stderr %s", p.code, p.stderr)
	}
	var res struct {
		Cost       float64 `json:"total_cost_usd"`
		ModelUsage map[string]struct {
			Output int64   `json:"outputTokens"`
			Cost   float64 `json:"costUSD"`
		} `json:"modelUsage"`
	}
	if err := json.Unmarshal([]byte(p.stdout), &res); err != nil {
		t.Fatal(err)
	}
	mu := res.ModelUsage["claude-sonnet-4-5"]
	if mu.Output == 0 || res.Cost != float64(mu.Output) || mu.Cost != res.Cost {
		t.Fatalf("cost %v, model usage %+v", res.Cost, mu)
	}

	bad := runCadre(t, env, "", "-p", "hi", "--settings", `{"modelPrices": {"m": {"input": -3}}}`)
	if bad.code != ExitUsage {
		t.Fatalf("a negative price: code %d stderr %s", bad.code, bad.stderr)
	}
}
