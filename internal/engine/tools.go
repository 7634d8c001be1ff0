package engine

import (
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
