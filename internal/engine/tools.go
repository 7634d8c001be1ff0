package engine

import (
	"fmt"
	"strings"

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
func (sp systemPrompts) skillListing(pool *tool.Pool) string {
	r := sp.r
	if _, ok := pool.Get(tool.Skill); !ok {
		return ""
	}
	return r.cfg.Skills.Listing()
}

// preloadSkills renders the skills a definition's `skills:` preloads
// (S-4.1: the first skills.MaxPreloaded names) for the child's system
// prompt; names that match no skill are receipt warnings.
func (su toolSetup) preloadSkills() string {
	c := su.a
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
