package cadre

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/spawn"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/skills"
	"github.com/cadre-dev/cadre/tool"
	"github.com/cadre-dev/cadre/tool/builtin"
)

// This file wires the built-in tool set into a Runtime (S-2): the small
// model WebFetch applies its prompt with, the WebSearch backend, the Skill
// tool over the session's skills, and the truthful answer to "which tools
// does this agent definition get".

// defaultSmallModel is the alias of the model that applies WebFetch's
// prompt when Config.SmallModel names none.
const defaultSmallModel = "haiku"

// defaultTools is the tool set of a Runtime whose Config.Tools is nil: the
// built-in tools, configured from cfg, and the Skill tool. The Skill tool
// is always there, so an agent definition naming it gets it; with no
// skills installed it says so.
func defaultTools(cfg *Config) []tool.Tool {
	bc := builtin.Config{Web: builtin.WebConfig{
		SmallModel: builtin.NewSmallModel(cfg.Model, smallModelID(cfg), 0),
		Search:     cfg.WebSearch,
		Now:        cfg.Now,
	}}
	return append(builtin.Tools(bc), skills.NewTool(cfg.Skills))
}

// smallModelID is the model id that applies WebFetch's prompt:
// Config.SmallModel resolved as an alias (or taken as an id), else the
// provider's "haiku" alias, else the main model when the provider has no
// such alias.
func smallModelID(cfg *Config) string {
	resolve := func(name string) (string, bool) {
		if cfg.ResolveModel == nil {
			return "", false
		}
		return cfg.ResolveModel(name)
	}
	if name := strings.TrimSpace(cfg.SmallModel); name != "" {
		if id, ok := resolve(name); ok {
			return id
		}
		return name
	}
	if id, ok := resolve(defaultSmallModel); ok {
		return id
	}
	return cfg.ModelID
}

// SmallModelID is the model id that applies WebFetch's prompt to a
// fetched page in this session (see Config.SmallModel).
func (r *Runtime) SmallModelID() string { return smallModelID(&r.cfg) }

// skillListing is the block of a system prompt that lists the session's
// skills; "" when there are none or the agent has no Skill tool.
func (r *Runtime) skillListing(pool *tool.Pool) string {
	if _, ok := pool.Get(tool.Skill); !ok {
		return ""
	}
	return r.cfg.Skills.Listing()
}

// preloadSkills renders the skills a definition's `skills:` preloads
// (S-4.1: the first skills.MaxPreloaded names) for the child's system
// prompt; names that match no skill are receipt warnings.
func (c *agent) preloadSkills() string {
	if len(c.def.Skills) == 0 {
		return ""
	}
	if n := len(c.def.Skills); n > skills.MaxPreloaded {
		c.warn(fmt.Sprintf("skills: %d names given; only the first %d are preloaded", n, skills.MaxPreloaded))
	}
	text, missing := c.run.rt.cfg.Skills.Preload(c.def.Skills)
	for _, name := range missing {
		c.warn(fmt.Sprintf("skills: no skill named %q is installed; it was not preloaded", name))
	}
	return text
}

// AgentTools is what an agent definition gets from the main agent's tools
// when it is spawned at depth 1 (S-5.1): the tools it would really run
// with, the main agent's tools it does not get with why, and its `tools`
// entries that name no tool this session has.
type AgentTools struct {
	// Tools are the granted tools, in the order the model sees them.
	Tools []string
	// Dropped are the main agent's tools the agent does not get, each
	// with the reason.
	Dropped []DroppedTool
	// Unknown are `tools` entries (as written) that match no tool of the
	// session: a misspelling, a tool cadre does not have, or an MCP tool
	// of a server that is not connected.
	Unknown []string
}

// AgentTools computes the tools the agent type name would get if the main
// agent spawned it now (false when there is no such type). `cadre agents
// show` prints it as the agent's effective tools.
func (r *Runtime) AgentTools(name string) (AgentTools, bool) {
	def := r.defs[name]
	if def == nil {
		return AgentTools{}, false
	}
	return r.toolsFor(def), true
}

func (r *Runtime) toolsFor(def *agentdef.Definition) AgentTools {
	return computeAgentTools(def, r.mainPool.Names(), r.rootPerms(), r.gate.Limits().MaxDepth)
}

// ToolsFor computes what def gets from a main agent whose tools are
// parentTools, with no permission rules and the default nesting limit.
// Tools that need a session (MCP servers) are Unknown unless parentTools
// names them. BuiltinToolNames gives the main agent's tools of a Runtime
// with the built-in tool set.
func ToolsFor(def *agentdef.Definition, parentTools []string) AgentTools {
	return computeAgentTools(def, parentTools, permission.Effective{Mode: permission.ModeBypassPermissions}, DefaultMaxDepth)
}

// BuiltinToolNames lists the main agent's tools of a Runtime configured
// with the built-in tools (Config.Tools nil) and sub-agents on: the Agent
// tool, then the built-in tools and Skill.
func BuiltinToolNames() []string {
	names := []string{AgentToolName}
	for _, t := range builtin.Tools(builtin.Config{}) {
		names = append(names, t.Spec().Name)
	}
	return append(names, tool.Skill)
}

func computeAgentTools(def *agentdef.Definition, parentTools []string, perms permission.Effective, maxDepth int) AgentTools {
	c := spawn.ComputeCeiling(spawn.CeilingInput{ParentTools: parentTools, ParentPerms: perms, Def: def, Depth: 1, MaxDepth: maxDepth})
	out := AgentTools{Tools: c.Tools}
	for _, d := range c.Dropped {
		out.Dropped = append(out.Dropped, DroppedTool{Name: d.Name, Reason: d.Reason})
	}
	for _, e := range def.EffectiveTools() {
		if !slices.ContainsFunc(parentTools, func(n string) bool { return spawn.EntryMatches(e, n) }) {
			out.Unknown = append(out.Unknown, cmp.Or(e.Raw, e.Name))
		}
	}
	return out
}
