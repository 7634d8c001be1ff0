package cadre

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

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
// support yet are not in the schema; a call that sends them anyway gets an
// error naming the field.
type agentInput struct {
	Description  string `json:"description"`
	Prompt       string `json:"prompt"`
	SubagentType string `json:"subagent_type,omitempty"`
	Model        string `json:"model,omitempty"`
	Effort       string `json:"effort,omitempty"`
	Cwd          string `json:"cwd,omitempty"`
}

// agentToolSpec is the rendered spec of an Agent tool: description with the
// listing an agent may see, and the schema. Agents that see the same
// listing share one spec, so their request bytes match.
type agentToolSpec struct {
	spec  llm.ToolSpec
	types []string // the types listed, in listing order
}

// agentSchema renders the input schema. modelForced drops the model field
// (S-3.2).
func agentSchema(modelForced bool) json.RawMessage {
	props := map[string]any{
		"description":   map[string]any{"type": "string", "description": "A short (3-5 word) label for the task, shown to the user."},
		"prompt":        map[string]any{"type": "string", "description": "The complete task for the agent: goal, context, what is known, scope and the report you want back."},
		"subagent_type": map[string]any{"type": "string", "description": "The agent type to start, from the list in this tool's description."},
		"effort":        map[string]any{"type": "string", "enum": []string{"low", "medium", "high", "max"}, "description": "Reasoning effort for the agent; omit for its default."},
		"cwd":           map[string]any{"type": "string", "description": "Absolute path of the directory the agent works in; omit for yours."},
	}
	if !modelForced {
		props["model"] = map[string]any{"type": "string", "description": "Model for the agent: sonnet, opus, haiku or a configured alias; omit to use the agent's default."}
	}
	b, err := json.Marshal(map[string]any{
		"type": "object", "properties": props, "required": []string{"description", "prompt"}, "additionalProperties": false,
	})
	if err != nil {
		panic(fmt.Sprintf("agent tool schema: %v", err)) // static data
	}
	return b
}

// visibleTypes are the definitions an agent with these rules and allowed
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
	key := strings.Join(types, "\x00")
	r.specMu.Lock()
	defer r.specMu.Unlock()
	if s, ok := r.specs[key]; ok {
		return s
	}
	listing := agentdef.Listing(defs)
	if strings.TrimSpace(listing) == "" {
		listing = "(none: no agent type is available to you)"
	}
	defType := defaultAgentType
	if r.defs[defaultAgentType] == nil {
		defType = ""
	}
	forced := r.cfg.Getenv("CADRE_SUBAGENT_MODEL_FORCE") != ""
	s := &agentToolSpec{
		spec:  llm.ToolSpec{Name: AgentToolName, Description: prompts.AgentTool(listing, defType), InputSchema: agentSchema(forced)},
		types: types,
	}
	r.specs[key] = s
	return s
}

// agentTool is the Agent tool. Which agent is calling comes from the
// context (see withAgent), so one value serves every agent that sees the
// same listing.
type agentTool struct{ spec *agentToolSpec }

// Spec implements tool.Tool.
func (t *agentTool) Spec() llm.ToolSpec { return t.spec.spec }

// ReadOnly implements tool.Tool: a sub-agent may change things.
func (t *agentTool) ReadOnly() bool { return false }

// ConcurrencySafe implements tool.ConcurrencySafe: several Agent calls of
// one message run in parallel, each child in its own context.
func (t *agentTool) ConcurrencySafe() bool { return true }

// Run implements tool.Tool: it starts a sub-agent and returns its report.
func (t *agentTool) Run(ctx context.Context, _ *tool.Env, raw json.RawMessage) (tool.Output, error) {
	owner := agentFrom(ctx)
	if owner == nil {
		return tool.Errorf("The Agent tool can only run inside a cadre session."), nil
	}
	var in agentInput
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return tool.Errorf("Invalid input for Agent: %v. Required: description and prompt; optional: subagent_type, model, effort, cwd.", err), nil
	}
	return owner.spawn(ctx, tool.CallID(ctx), in)
}
