package spawn

import "testing"

func TestChooseModel(t *testing.T) {
	t.Parallel()
	aliases := map[string]string{"sonnet": "claude-sonnet-4-5", "opus": "claude-opus-4-1", "haiku": "claude-haiku-4-5"}
	resolve := func(a string) (string, bool) { id, ok := aliases[a]; return id, ok }
	const parent = "claude-sonnet-4-5-20250929"
	cases := []struct {
		name                              string
		forced, call, def, sessionDefault string
		wantID                            string
		wantRule                          ModelRule
	}{
		{"forced beats all", "opus", "haiku", "haiku", "haiku", "claude-opus-4-1", ModelForced},
		{"call beats definition", "", "haiku", "opus", "opus", "claude-haiku-4-5", ModelCall},
		{"definition beats the session default", "", "", "opus", "haiku", "claude-opus-4-1", ModelDefinition},
		{"session default beats parent", "", "", "", "haiku", "claude-haiku-4-5", ModelSessionDefault},
		{"parent last", "", "", "", "", parent, ModelParent},
		{"inherit is the parent", "", "", "inherit", "haiku", parent, ModelDefinition},
		{"own family keeps the exact id", "", "sonnet", "", "", parent, ModelCall},
		{"own family, case aside", "", "Sonnet", "", "", "Sonnet", ModelCall}, // not an alias: passes through
		{"an id passes through", "", "my-model-7", "", "", "my-model-7", ModelCall},
		{"blank values are unset", " ", "\t", "", "", parent, ModelParent},
	}
	for _, c := range cases {
		id, rule := ChooseModel(ModelChoice{Forced: c.forced, Call: c.call, Definition: c.def, Default: c.sessionDefault, Parent: parent, Resolve: resolve})
		if id != c.wantID || rule != c.wantRule {
			t.Errorf("%s: got %s by %s, want %s by %s", c.name, id, rule, c.wantID, c.wantRule)
		}
	}
	if id, rule := ChooseModel(ModelChoice{Call: "sonnet", Parent: "p"}); id != "sonnet" || rule != ModelCall {
		t.Errorf("without a resolver: %s %s", id, rule)
	}
}
