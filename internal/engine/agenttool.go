package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/engine/tasktools"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/tool"
)

// defaultAgentType is used when a call names no type and forking is off
// (S-3.3).
const defaultAgentType = "general-purpose"

// agentInput is the Agent tool's input (package tasktools holds it and
// its schema).
type agentInput = tasktools.AgentInput

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
func (tb toolbox) visibleDefs(rules []permission.Rule, allowed []string) []*agentdef.Definition {
	r := tb.r
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
func (tb toolbox) agentSpec(rules []permission.Rule, allowed []string) *agentToolSpec {
	r := tb.r
	defs := tb.visibleDefs(rules, allowed)
	types := make([]string, len(defs))
	for i, d := range defs {
		types[i] = d.Name
	}
	fork := tb.forkState(rules, allowed)
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
	schema := tasktools.AgentSchemaWith(tasktools.SchemaOptions{ModelForced: r.cfg.ForceSubagentModel != "", Isolation: glueOf(r).isolationOffered(),
		NoBackground: !r.cfg.Background.offersRunInBackground(), Budget: r.budgets.on, Teams: r.cfg.Teams})
	if r.cfg.Remote.Executor != nil {
		schema = tasktools.OfferRemote(schema) // remote.go
	}
	s := &agentToolSpec{
		spec:  llm.ToolSpec{Name: AgentToolName, Description: desc, InputSchema: schema},
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
	w, out, err := a.spawnCall(ctx, &call, raw)
	if w == nil {
		return out, err
	}
	return w.wait(ctx) // spawn.go: the spawn path's frames are gone
}

// spawnCall is Spawn up to the wait.
func (a *agent) spawnCall(ctx context.Context, call *tool.Call, raw json.RawMessage) (*waiting, tool.Output, error) {
	var in agentInput
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		var schema json.RawMessage
		if a.spec != nil {
			schema = a.spec.spec.InputSchema
		}
		return nil, errorOutput(prompts.AgentInputInvalid(err, tasktools.OptionalFields(schema))), nil
	}
	return a.spawn(ctx, *call, in)
}

// errorOutput is a tool result the model reads as a failure.
func errorOutput(msg string) tool.Output { return tasktools.ErrorOutput(msg) }
