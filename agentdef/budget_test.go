package agentdef

import (
	"strings"
	"testing"
	"time"
)

func TestBudgetFrontmatter(t *testing.T) {
	t.Parallel()
	def, diags := ParseFile("a.md", []byte("---\nname: a\ndescription: d\nbudget:\n  usd: 0.5\n  tokens: 20000\n  turns: 12\n  wallTime: 10m\n---\nbody\n"), SourceProject)
	if def == nil || len(diags) != 0 {
		t.Fatalf("def %v diags %v", def, diags)
	}
	want := Budget{USD: 0.5, Tokens: 20000, Turns: 12, WallTime: 10 * time.Minute}
	if def.Budget != want {
		t.Fatalf("budget %+v, want %+v", def.Budget, want)
	}
	if s := def.Budget.String(); s != "usd 0.5, tokens 20000, turns 12, wallTime 10m0s" {
		t.Fatalf("String %q", s)
	}
}

func TestBudgetJSONSeconds(t *testing.T) {
	t.Parallel()
	defs, diags, err := ParseJSON("--agents", []byte(`{"r": {"description": "d", "prompt": "p", "budget": {"turns": 4, "wallTime": 90}}}`), SourceFlag)
	if err != nil || len(defs) != 1 || len(diags) != 0 {
		t.Fatalf("%v %v %v", defs, diags, err)
	}
	if b := defs[0].Budget; b != (Budget{Turns: 4, WallTime: 90 * time.Second}) {
		t.Fatalf("budget %+v", b)
	}
}

// TestBadBudgetNotLoaded: a budget that cannot be read keeps the agent
// from loading, naming the field (a typo must not lift a limit).
func TestBadBudgetNotLoaded(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"budget: 5":                   "must be a mapping",
		"budget: {usd: -1}":           "budget.usd must be a positive number",
		"budget: {tokens: 1.5}":       "budget.tokens must be a positive whole number",
		"budget: {turns: 0}":          "budget.turns must be a positive whole number",
		"budget: {wallTime: forever}": "budget.wallTime must be a positive duration",
		"budget: {dollars: 3}":        `unknown budget key "dollars"`,
	} {
		def, diags := ParseFile("a.md", []byte("---\nname: a\ndescription: d\n"+in+"\n---\n"), SourceProject)
		if def != nil || len(diags) != 1 || diags[0].Severity != SeverityError || !strings.Contains(diags[0].Message, want) {
			t.Errorf("%s: def %v diags %v", in, def, diags)
		}
	}
}

// TestNoBudgetUnchanged: a definition without budget loads as before.
func TestNoBudgetUnchanged(t *testing.T) {
	t.Parallel()
	def, _ := ParseFile("a.md", []byte("---\nname: a\ndescription: d\n---\n"), SourceProject)
	if def == nil || !def.Budget.IsZero() || def.Budget.String() != "none" {
		t.Fatalf("def %+v", def)
	}
}
