package spawn

import "strings"

// ModelRule names the rule that chose a sub-agent's model (S-5.3).
type ModelRule string

// Model rules, strongest first.
const (
	// ModelForced: the session forces one model on every sub-agent.
	ModelForced ModelRule = "forced"
	// ModelCall: the Agent call's model field.
	ModelCall ModelRule = "call"
	// ModelDefinition: the definition's model key.
	ModelDefinition ModelRule = "definition"
	// ModelSessionDefault: the session's default sub-agent model.
	ModelSessionDefault ModelRule = "subagent_model"
	// ModelParent: nothing chose, so the parent's model.
	ModelParent ModelRule = "parent"
)

// ModelChoice is the input of a sub-agent's model choice.
type ModelChoice struct {
	// Forced is the session's forced sub-agent model; Call the Agent
	// call's; Definition the definition's; Default the session's default
	// sub-agent model. "" means not set.
	Forced, Call, Definition, Default string
	// Parent is the parent agent's model id.
	Parent string
	// Resolve maps an alias to a model id; ok is false for a non-alias.
	// Nil means every value is a model id.
	Resolve func(alias string) (id string, ok bool)
}

// ChooseModel picks a sub-agent's model (S-5.3): forced > the call's >
// the definition's > the session default > the parent's. "inherit" is the
// parent's model. An alias of the parent's own family (sonnet for a sonnet
// parent) keeps the parent's exact id. It returns the id and the rule that
// chose it.
func ChooseModel(c ModelChoice) (id string, rule ModelRule) {
	for _, cand := range []struct {
		v    string
		rule ModelRule
	}{
		{c.Forced, ModelForced}, {c.Call, ModelCall}, {c.Definition, ModelDefinition}, {c.Default, ModelSessionDefault},
	} {
		v := strings.TrimSpace(cand.v)
		if v == "" {
			continue
		}
		if v == "inherit" {
			return c.Parent, cand.rule
		}
		if c.Resolve != nil {
			if resolved, ok := c.Resolve(v); ok {
				if strings.Contains(strings.ToLower(c.Parent), strings.ToLower(v)) {
					return c.Parent, cand.rule
				}
				return resolved, cand.rule
			}
		}
		return v, cand.rule
	}
	return c.Parent, ModelParent
}
