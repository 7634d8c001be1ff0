package engine

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/tool"
)

// Coordinator mode (S-11.2): the main agent only delegates. It keeps the
// Agent, SendMessage, TaskStop and ListAgents tools and nothing else (no
// MCP tools either); every worker it starts runs in the background
// (BackgroundForced) and is continued with SendMessage; the fork path is
// off. Workers get their tools from the session's whole tool set, as the
// main agent's children would outside coordinator mode, but not the Agent
// tool: the coordinator is the only one that starts agents.

// coordinatorTools are the main agent's tools in coordinator mode, in the
// order the model sees them.
var coordinatorTools = []string{AgentToolName, tool.SendMessage, tool.TaskStop, tool.ListAgents}

// applyCoordinator makes cfg consistent with coordinator mode: background
// forced, no forks. Background turned off contradicts it.
func applyCoordinator(cfg *Config) error {
	if !cfg.Coordinator {
		return nil
	}
	if cfg.Background == BackgroundOff {
		return errors.New("Config.Coordinator needs background sub-agents, but Config.Background is off")
	}
	cfg.Background, cfg.ForkSubagent = BackgroundForced, false
	return nil
}

// coordinatorPool narrows the main agent's pool to the coordinator's
// tools, adding ListAgents; outside coordinator mode it returns p.
func (tb toolbox) coordinatorPool(p *tool.Pool) *tool.Pool {
	r := tb.r
	if !r.cfg.Coordinator {
		return p
	}
	var out []tool.Tool
	for _, name := range coordinatorTools {
		if name == tool.ListAgents {
			out = append(out, listAgentsTool())
			continue
		}
		if t, ok := p.Get(name); ok {
			out = append(out, t)
		}
	}
	return tool.NewPool(out...)
}

// ceilingPool is the pool a's children's tools are taken from: the
// agent's own, but for the coordinator, whose workers draw on the
// session's whole tool set.
func (su toolSetup) ceilingPool() *tool.Pool {
	a := su.a
	if a.id == "" && a.run.rt.cfg.Coordinator {
		return a.run.rt.base
	}
	return a.pool
}

// dynamicTools is the source of the agent's MCP tools turn by turn: none
// for the coordinator (its children still draw on the session's servers
// through a.mcp).
func (su toolSetup) dynamicTools() loop.ToolSource {
	a := su.a
	if a.id == "" && a.run.rt.cfg.Coordinator {
		return nil
	}
	return a.mcp
}

type listAgentsInput struct{}

// listAgentsTool lists the session's agents (ListAgents).
func listAgentsTool() tool.Tool {
	return tool.Func(tool.FuncConfig{Name: tool.ListAgents, Description: prompts.ListAgentsTool, ReadOnly: true},
		func(_ context.Context, env *tool.Env, _ listAgentsInput) (tool.Output, error) {
			a := agentFrom(env)
			if a == nil {
				return errorOutput(prompts.AgentOutsideSession()), nil
			}
			return tool.Output{Text: prompts.AgentList(a.run.rt.bg.agentList())}, nil
		})
}

// agentList is every agent of the session for ListAgents: the registry's
// tasks in the order they started, then agents an earlier process left
// (ended or interrupted), which can be continued.
func (b *background) agentList() []prompts.AgentEntry {
	var out []prompts.AgentEntry
	seen := map[string]bool{}
	for _, t := range b.reg.List() {
		seen[t.ID] = true
		e := prompts.AgentEntry{ID: t.ID, Type: t.AgentType, Description: t.Description, State: string(t.Status),
			Background: t.Background, Parent: t.Parent, ToolUses: t.Progress.ToolUses, LastTool: t.Progress.LastTool,
			Continuable: t.Status.Terminal() && b.continuable(t.ID)}
		if h := b.handle(t.ID); h != nil && h.child != nil && !t.Status.Terminal() {
			if tm := teammateOf(h.child).info(); tm != nil { // team.go
				e.Teammate, e.Team, e.State = tm.Name, tm.Team, tm.State
			}
		}
		out = append(out, e)
	}
	b.mu.Lock()
	var earlier []prompts.AgentEntry
	for id, h := range b.agents {
		if seen[id] || h.resumable == nil {
			continue
		}
		earlier = append(earlier, prompts.AgentEntry{ID: id, Type: h.resumable.typ, Description: h.resumable.description,
			State: prompts.AgentStateEarlier, Background: true, Parent: "main", Continuable: h.resumable.transcript != ""})
	}
	b.mu.Unlock()
	slices.SortFunc(earlier, func(x, y prompts.AgentEntry) int { return strings.Compare(x.ID, y.ID) })
	return append(out, earlier...)
}

// continuable reports whether SendMessage can continue the ended agent id.
func (b *background) continuable(id string) bool {
	h := b.handle(id)
	if h == nil {
		return false
	}
	h.mu.Lock()
	info := h.resumable
	h.mu.Unlock()
	return info != nil && info.transcript != "" && info.typ != agentdef.ForkName && !resumeOf(b).oneShot(h)
}
