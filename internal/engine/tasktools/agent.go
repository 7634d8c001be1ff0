package tasktools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/invopop/jsonschema"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/prompts"
)

// AgentInput is the Agent tool's input (S-3.1). Fields the runtime does not
// support yet are not in it; a call that sends them anyway gets an error
// naming the field. The field descriptions the model reads are in package
// prompts.
type AgentInput struct {
	Description  string          `json:"description"`
	Prompt       string          `json:"prompt"`
	SubagentType string          `json:"subagent_type,omitempty"`
	Model        string          `json:"model,omitempty"`
	Effort       agentdef.Effort `json:"effort,omitempty" jsonschema:"enum=low,enum=medium,enum=high,enum=max"`
	Cwd          string          `json:"cwd,omitempty"`
	// Isolation is offered only inside a git repository (the engine's worktree.go).
	Isolation agentdef.Isolation `json:"isolation,omitempty" jsonschema:"enum=worktree"`
	// RunInBackground asks for the background (S-7.1); the schema leaves
	// it out when background is off or forced (S-3.2).
	RunInBackground *bool `json:"run_in_background,omitempty"`
	// Name, TeamName and Mode start a teammate (issue 25); the schema
	// shows them only with agent teams on (S-3.2).
	Name     string `json:"name,omitempty"`
	TeamName string `json:"team_name,omitempty"`
	Mode     string `json:"mode,omitempty" jsonschema:"enum=plan,enum=default"`
}

// JSONSchemaExtend puts the descriptions from package prompts on the
// reflected schema.
func (AgentInput) JSONSchemaExtend(s *jsonschema.Schema) {
	for name, p := range s.Properties.FromOldest() {
		p.Description = prompts.AgentInputField(name)
	}
}

// AgentSchema reflects the input schema from AgentInput the way tool.Func
// does for every other tool. modelForced drops the model field (S-3.2);
// isolation keeps the isolation field, offered only where it can work;
// noBackground drops run_in_background (background off or forced); teams
// keeps name, team_name and mode.
func AgentSchema(modelForced, isolation, noBackground, teams bool) json.RawMessage {
	r := jsonschema.Reflector{DoNotReference: true, ExpandedStruct: true, AllowAdditionalProperties: false}
	s := r.Reflect(&AgentInput{})
	s.Version, s.ID = "", ""
	if modelForced {
		s.Properties.Delete("model")
	}
	if !isolation {
		s.Properties.Delete("isolation")
	}
	if noBackground {
		s.Properties.Delete("run_in_background")
	}
	if !teams {
		for _, f := range []string{"name", "team_name", "mode"} {
			s.Properties.Delete(f)
		}
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("agent tool schema: %v", err)) // static data
	}
	return b
}

// OptionalFields lists, in schema order, the optional fields of an input
// schema: what this Agent tool offers (isolation and run_in_background
// only where they can work).
func OptionalFields(schema json.RawMessage) []string {
	var s struct {
		Properties orderedKeys `json:"properties"`
		Required   []string    `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	out := []string{}
	for _, k := range s.Properties {
		if !slices.Contains(s.Required, k) {
			out = append(out, k)
		}
	}
	return out
}

// orderedKeys are the keys of a JSON object in document order.
type orderedKeys []string

// UnmarshalJSON implements json.Unmarshaler.
func (o *orderedKeys) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("properties: %w", err)
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return fmt.Errorf("properties: %w", err)
		}
		key, _ := k.(string)
		*o = append(*o, key)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return fmt.Errorf("properties: %w", err)
		}
	}
	return nil
}
