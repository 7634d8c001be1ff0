package cadre

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/invopop/jsonschema"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/tool"
)

// defaultAgentType is used when a call names no type and forking is off
// (S-3.3).
const defaultAgentType = "general-purpose"

// agentInput is the Agent tool's input (S-3.1). Fields the runtime does not
// support yet are not in it; a call that sends them anyway gets an error
// naming the field. The field descriptions the model reads are in package
// prompts.
type agentInput struct {
	Description  string          `json:"description"`
	Prompt       string          `json:"prompt"`
	SubagentType string          `json:"subagent_type,omitempty"`
	Model        string          `json:"model,omitempty"`
	Effort       agentdef.Effort `json:"effort,omitempty" jsonschema:"enum=low,enum=medium,enum=high,enum=max"`
	Cwd          string          `json:"cwd,omitempty"`
	// Isolation is offered only inside a git repository (worktree.go).
	Isolation agentdef.Isolation `json:"isolation,omitempty" jsonschema:"enum=worktree"`
	// RunInBackground asks for the background (S-7.1); the schema leaves
	// it out when background is off or forced (S-3.2).
	RunInBackground *bool `json:"run_in_background,omitempty"`
}

// JSONSchemaExtend puts the descriptions from package prompts on the
// reflected schema.
func (agentInput) JSONSchemaExtend(s *jsonschema.Schema) {
	for name, p := range s.Properties.FromOldest() {
		p.Description = prompts.AgentInputField(name)
	}
}

// agentSchema reflects the input schema from agentInput the way tool.Func
// does for every other tool. modelForced drops the model field (S-3.2);
// isolation keeps the isolation field, offered only where it can work;
// noBackground drops run_in_background (background off or forced).
func agentSchema(modelForced, isolation, noBackground bool) json.RawMessage {
	r := jsonschema.Reflector{DoNotReference: true, ExpandedStruct: true, AllowAdditionalProperties: false}
	s := r.Reflect(&agentInput{})
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
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("agent tool schema: %v", err)) // static data
	}
	return b
}

// agentToolSpec is the rendered spec of an Agent tool: description with the
// listing an agent may see, and the schema. Agents that see the same
// listing share one spec, so their request bytes match.
type agentToolSpec struct {
	spec  llm.ToolSpec
	types []string  // the types listed, in listing order
	fork  forkState // whether a call without subagent_type forks (fork.go)
}

// visibleDefs are the definitions an agent with these rules and allowed
// types may start, in listing order (S-3.4: denied types are never listed).
func (r *Runtime) visibleDefs(rules []permission.Rule, allowed []string) []*agentdef.Definition {
	var out []*agentdef.Definition
	for _, d := range r.defList {
		if _, denied := permission.AgentTypeDenied(rules, d.Name); denied {
			continue
		}
		if allowed != nil && !slices.Contains(allowed, d.Name) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// agentSpec returns the Agent tool spec for an agent with these rules and
// allowed types. Agents that see the same listing share one spec value, so
// their tool bytes are identical and it is rendered once.
func (r *Runtime) agentSpec(rules []permission.Rule, allowed []string) *agentToolSpec {
	defs := r.visibleDefs(rules, allowed)
	types := make([]string, len(defs))
	for i, d := range defs {
		types[i] = d.Name
	}
	fork := r.forkState(rules, allowed)
	key := fork.key() + "\x01" + strings.Join(types, "\x00")
	r.specMu.Lock()
	defer r.specMu.Unlock()
	if s, ok := r.specs[key]; ok {
		return s
	}
	listing := agentdef.Listing(defs)
	if strings.TrimSpace(listing) == "" {
		listing = prompts.NoAgentTypes
	}
	defType := defaultAgentType
	if r.defs[defaultAgentType] == nil {
		defType = ""
	}
	desc := prompts.AgentTool(listing, defType)
	switch {
	case fork.on: // the fork path is the default (S-3.3)
		desc = prompts.AgentToolFork(listing)
	case fork.reason != "":
		desc = prompts.AgentTool(strings.TrimRight(listing, "\n")+"\n"+prompts.ForkListingLine(fork.reason), defType)
	}
	s := &agentToolSpec{
		spec: llm.ToolSpec{Name: AgentToolName, Description: desc,
			InputSchema: agentSchema(r.cfg.ForceSubagentModel != "", r.isolationOffered(), !r.cfg.Background.offersRunInBackground())},
		types: types, fork: fork,
	}
	r.specs[key] = s
	return s
}

// agentTool is the Agent tool. Which agent is calling comes from the
// Env (Env.Spawner), so one value serves every agent that sees the
// same listing.
type agentTool struct{ spec *agentToolSpec }

// Spec implements tool.Tool.
func (t *agentTool) Spec() llm.ToolSpec { return t.spec.spec }

// Subject implements tool.SubjectDeclarer: the agent type Agent rules match.
func (t *agentTool) Subject(input json.RawMessage) (tool.Subject, error) {
	return tool.BuiltinSubject(tool.Agent)(input)
}

// ReadOnly implements tool.Tool: a sub-agent may change things.
func (t *agentTool) ReadOnly() bool { return false }

// ConcurrencySafe implements tool.ConcurrencySafe: several Agent calls of
// one message run in parallel, each child in its own context.
func (t *agentTool) ConcurrencySafe() bool { return true }

// Run implements tool.Tool: it starts a sub-agent and returns its report.
func (t *agentTool) Run(ctx context.Context, env *tool.Env, raw json.RawMessage) (tool.Output, error) {
	if env == nil || env.Spawner == nil {
		return errorOutput(prompts.AgentOutsideSession()), nil
	}
	return env.Spawner.Spawn(ctx, env.Call, raw)
}

// Spawn implements tool.Spawner: the Agent tool's call, decoded against
// the agent's own Agent tool spec, starts a sub-agent.
func (a *agent) Spawn(ctx context.Context, call tool.Call, raw json.RawMessage) (tool.Output, error) {
	var in agentInput
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		var schema json.RawMessage
		if a.spec != nil {
			schema = a.spec.spec.InputSchema
		}
		return errorOutput(prompts.AgentInputInvalid(err, optionalFields(schema))), nil
	}
	return a.spawn(ctx, call, in)
}

// optionalFields lists, in schema order, the optional fields of an input
// schema: what this Agent tool offers (isolation and run_in_background
// only where they can work).
func optionalFields(schema json.RawMessage) []string {
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

// errorOutput is a tool result the model reads as a failure.
func errorOutput(msg string) tool.Output { return tool.Output{Text: msg, IsError: true} }
