package tasktools

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestAgentSchemaBudget: the budget field is in the schema only when
// budgets are on, last, with its four limits; the schema without it is
// byte for byte the one before budgets existed (no budget key at all).
func TestAgentSchemaBudget(t *testing.T) {
	t.Parallel()
	off, on := AgentSchema(false, true, false), AgentSchemaBudget(false, true, false, true)
	if strings.Contains(string(off), "budget") {
		t.Fatalf("budgets off, schema has budget: %s", off)
	}
	var s struct {
		Properties map[string]struct {
			Description string                     `json:"description"`
			Properties  map[string]json.RawMessage `json:"properties"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(on, &s); err != nil {
		t.Fatal(err)
	}
	b := s.Properties["budget"]
	for _, k := range []string{"usd", "tokens", "turns", "wallTime"} {
		if _, ok := b.Properties[k]; !ok {
			t.Errorf("budget lacks %s: %s", k, on)
		}
	}
	if b.Description == "" {
		t.Error("budget has no description")
	}
	if keys := OptionalFields(on); keys[len(keys)-1] != "budget" {
		t.Errorf("optional fields %v", keys)
	}
}

func TestBudgetInput(t *testing.T) {
	t.Parallel()
	var in AgentInput
	if err := json.Unmarshal([]byte(`{"description":"d","prompt":"p","budget":{"usd":0.2,"turns":3,"wallTime":"2m"}}`), &in); err != nil {
		t.Fatal(err)
	}
	b, err := in.Budget.Budget()
	if err != nil || b.USD != 0.2 || b.Turns != 3 || b.WallTime != 2*time.Minute {
		t.Fatalf("budget %+v %v", b, err)
	}
	bad := &BudgetInput{Turns: -1}
	if _, err := bad.Budget(); err == nil || !strings.Contains(err.Error(), "budget.turns") {
		t.Fatalf("a negative turn count: %v", err)
	}
	var none *BudgetInput
	if b, err := none.Budget(); err != nil || !b.IsZero() {
		t.Fatalf("no budget: %+v %v", b, err)
	}
}
