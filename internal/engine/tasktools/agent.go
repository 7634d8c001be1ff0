package tasktools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

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
	// OutputSchema is a JSON Schema (root "type": "object") the child's
	// result must match (S-15.6); it takes the place of its definition's
	// outputSchema.
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	// Budget limits the child's subtree (S-15.2); the schema has it only
	// when budgets are on (a session budget or a definition's), added by
	// AgentSchemaBudget so that a schema without it costs nothing more.
	Budget *BudgetInput `json:"budget,omitempty" jsonschema:"-"`
	// Name, TeamName and Mode start a teammate (issue 25); the schema
	// shows them only with agent teams on (S-3.2).
	Name     string `json:"name,omitempty"`
	TeamName string `json:"team_name,omitempty"`
	Mode     string `json:"mode,omitempty" jsonschema:"enum=plan,enum=default"`
}

// BudgetInput is the Agent call's budget: what the child and its subtree
// may spend, each field optional.
type BudgetInput struct {
	USD      float64 `json:"usd,omitempty"`
	Tokens   int64   `json:"tokens,omitempty"`
	Turns    int     `json:"turns,omitempty"`
	WallTime string  `json:"wallTime,omitempty"`
}

// Budget returns the call's budget, or an error naming the bad field.
func (b *BudgetInput) Budget() (agentdef.Budget, error) {
	if b == nil {
		return agentdef.Budget{}, nil
	}
	m := map[string]any{}
	if b.USD != 0 {
		m["usd"] = b.USD
	}
	if b.Tokens != 0 {
		m["tokens"] = b.Tokens
	}
	if b.Turns != 0 {
		m["turns"] = b.Turns
	}
	if b.WallTime != "" {
		m["wallTime"] = b.WallTime
	}
	out, err := agentdef.ParseBudget(m)
	if err != nil {
		return agentdef.Budget{}, fmt.Errorf("invalid budget: %w", err)
	}
	return out, nil
}

// JSONSchemaExtend puts the descriptions from package prompts on the
// reflected schema.
func (AgentInput) JSONSchemaExtend(s *jsonschema.Schema) {
	for name, p := range s.Properties.FromOldest() {
		p.Description = prompts.AgentInputField(name)
		if name == "output_schema" {
			// A schema document, whatever its keywords: an object.
			*p = jsonschema.Schema{Type: "object", Description: p.Description}
		}
	}
}

// AgentSchema reflects the input schema from AgentInput the way tool.Func
// does for every other tool. modelForced drops the model field (S-3.2);
// isolation keeps the isolation field, offered only where it can work;
// noBackground drops run_in_background (background off or forced).
func AgentSchema(modelForced, isolation, noBackground bool) json.RawMessage {
	return AgentSchemaWith(SchemaOptions{ModelForced: modelForced, Isolation: isolation, NoBackground: noBackground})
}

// AgentSchemaBudget is AgentSchema with the budget field kept when budget
// is true (budgets are on in the session).
func AgentSchemaBudget(modelForced, isolation, noBackground, budget bool) json.RawMessage {
	return AgentSchemaWith(SchemaOptions{ModelForced: modelForced, Isolation: isolation, NoBackground: noBackground, Budget: budget})
}

// SchemaOptions say which optional fields the Agent tool's schema shows.
type SchemaOptions struct {
	// ModelForced drops model; Isolation keeps isolation; NoBackground
	// drops run_in_background.
	ModelForced, Isolation, NoBackground bool
	// Budget keeps budget (budgets on); Teams keeps name, team_name and
	// mode (agent teams on).
	Budget, Teams bool
}

// AgentSchemaWith is the Agent tool's input schema with the fields o
// keeps. The 32 variants are generated ahead (agentschemas_gen.go, checked
// against reflectAgentSchema by TestAgentSchemasGenerated), so a run
// reflects nothing before its first request (issue 24).
//
// The bytes are made once per process and variant and shared: a caller
// must not change them in place (appending copies: the slice has no spare
// room).
func AgentSchemaWith(o SchemaOptions) json.RawMessage {
	i := o.index()
	if b, ok := agentSchemas.Load(i); ok {
		return b.(json.RawMessage)
	}
	b := json.RawMessage(generatedAgentSchemas[i])
	got, _ := agentSchemas.LoadOrStore(i, b[:len(b):len(b)])
	return got.(json.RawMessage)
}

// agentSchemas maps a variant's index to its bytes (at most 32 entries;
// the values are never changed).
var agentSchemas sync.Map

// index numbers the variant: one bit per option.
func (o SchemaOptions) index() int {
	i := 0
	for bit, on := range [...]bool{o.ModelForced, o.Isolation, o.NoBackground, o.Budget, o.Teams} {
		if on {
			i |= 1 << bit
		}
	}
	return i
}

// reflectAgentSchema reflects the Agent tool's input schema with the
// fields o keeps: the source of generatedAgentSchemas.
func reflectAgentSchema(o SchemaOptions) json.RawMessage {
	modelForced, isolation, noBackground, budget, teams := o.ModelForced, o.Isolation, o.NoBackground, o.Budget, o.Teams
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
	if budget {
		b := r.Reflect(&BudgetInput{})
		b.Version, b.ID, b.Description = "", "", prompts.AgentInputField("budget")
		s.Properties.Set("budget", b)
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

// OfferRemote adds "remote" to the isolation values an Agent schema made
// by AgentSchema offers (a session with a remote executor); a schema
// without the isolation field is returned as it is.
func OfferRemote(schema json.RawMessage) json.RawMessage {
	// Only the isolation field's enum is ["worktree"]; the rest of the
	// bytes stay as AgentSchema wrote them (their order is the cache's).
	return bytes.Replace(schema, []byte(`"enum":["worktree"]`), []byte(`"enum":["worktree","remote"]`), 1)
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
