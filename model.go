package cadre

import "strings"

// Model-choice rules, as named in a spawn receipt (S-5.3).
const (
	ModelRuleForced     = "CADRE_SUBAGENT_MODEL_FORCE"
	ModelRuleCall       = "call"
	ModelRuleDefinition = "definition"
	ModelRuleEnv        = "CADRE_SUBAGENT_MODEL"
	ModelRuleParent     = "parent"
)

// modelChoice is the input of a sub-agent's model resolution.
type modelChoice struct {
	Forced, Call, Definition, Env string
	// Parent is the parent agent's model id.
	Parent string
	// Resolve maps an alias to a model id; ok is false for a non-alias.
	Resolve func(alias string) (id string, ok bool)
}

// resolveSubagentModel picks a sub-agent's model (S-5.3): the forced env
// value > the call's model > the definition's > CADRE_SUBAGENT_MODEL > the
// parent's. "inherit" is the parent's model. An alias of the parent's own
// family (sonnet for a sonnet parent) keeps the parent's exact id. It
// returns the id and the rule that chose it.
func resolveSubagentModel(c modelChoice) (id, rule string) {
	for _, cand := range []struct{ v, rule string }{
		{c.Forced, ModelRuleForced}, {c.Call, ModelRuleCall}, {c.Definition, ModelRuleDefinition}, {c.Env, ModelRuleEnv},
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
	return c.Parent, ModelRuleParent
}
