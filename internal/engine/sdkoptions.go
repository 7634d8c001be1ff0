package engine

import (
	"fmt"

	"github.com/cadre-dev/cadre/tool"
	"github.com/cadre-dev/cadre/tool/builtin"
)

// The session options a Claude Agent SDK program sets through Claude
// Code's flags (issue 29): Config.Effort and Config.ToolNames.

// checkSDKOptions validates Config.Effort. A name of Config.ToolNames
// that is no tool matches nothing.
func checkSDKOptions(cfg *Config) error {
	if cfg.Effort != "" && !cfg.Effort.Valid() {
		return fmt.Errorf("Config.Effort %q: want one of low, medium, high, xhigh, max", cfg.Effort)
	}
	return nil
}

// namedTool reports whether names lists the tool, by its name or an alias
// (Task for Agent).
func namedTool(names []string, name string) bool {
	for _, n := range names {
		if tool.Canonical(n) == tool.Canonical(name) {
			return true
		}
	}
	return false
}

// addStructuredOutput compiles Config.OutputSchema into the main agent's
// StructuredOutput tool.
func (tb toolbox) addStructuredOutput() error {
	r := tb.r
	if len(r.cfg.OutputSchema) == 0 {
		return nil
	}
	so, err := builtin.NewStructuredOutput(r.cfg.OutputSchema)
	if err != nil {
		return fmt.Errorf("Config.OutputSchema: %w", err)
	}
	r.structured = so
	r.mainPool = tool.NewPool(append(r.mainPool.Tools(), so)...)
	return nil
}

// outputSlot makes the run's structured output slot; nil without an
// output schema.
func (s *runState) outputSlot() *builtin.OutputSlot {
	if s.rt.structured == nil {
		return nil
	}
	s.output = builtin.NewOutputSlot(s.rt.cfg.OutputRetries)
	return s.output
}
