package engine

import (
	"fmt"

	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/tool"
)

// extraToolNames are the names of the embedder's tools (Config.Tools)
// that are not built-in, so permission rules may name them; taken before
// deny rules filter the pool, since a rule that removes a tool names it.
func (tb toolbox) extraToolNames() []string {
	r := tb.r
	var names []string
	for _, t := range r.cfg.Tools {
		name := t.Spec().Name
		if _, ok := tool.Lookup(name); !ok {
			names = append(names, name)
		}
	}
	return names
}

// checkRules builds the main agent's checker once so that a rule naming no
// tool (a deny that would protect nothing) fails New rather than the
// first run (issue 9).
func (tb toolbox) checkRules() error {
	r := tb.r
	cc := glueOf(r).rootPerms().CheckerConfig(r.cfg.Cwd, r.cfg.AddDirs, r.cfg.Home)
	cc.Tools = tb.extraToolNames()
	if _, err := permission.NewChecker(cc); err != nil {
		return fmt.Errorf("cadre: permissions: %w", err)
	}
	return nil
}
