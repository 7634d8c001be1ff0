package engine

import (
	"github.com/cadre-dev/cadre/internal/spawn"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/tool"
)

// AgentToolName is the name of the tool that spawns sub-agents; TaskAlias
// is its old name, accepted in rules and definitions.
const (
	AgentToolName = tool.Agent
	TaskAlias     = tool.Task
)

// Limits bound sub-agent spawning for a session (S-5.7). Zero fields take
// the defaults.
type Limits struct {
	// MaxDepth is how deep sub-agents may nest: the main agent is depth 0,
	// its children depth 1; an agent at MaxDepth cannot spawn. Default 3.
	MaxDepth int
	// MaxRunning bounds the sub-agents running at once; further Agent
	// calls wait in a FIFO queue (shown as pending) and start as slots
	// free. An agent waiting for its own children does not hold a slot.
	// Default 20.
	MaxRunning int
	// MaxTotal bounds the sub-agents started in one session; calls beyond
	// it are refused. Default 1000.
	MaxTotal int
}

// Default limits.
const (
	DefaultMaxDepth   = spawn.DefaultMaxDepth
	DefaultMaxRunning = spawn.DefaultMaxRunning
	DefaultMaxTotal   = spawn.DefaultMaxTotal
)

func (l Limits) gate() spawn.Limits {
	return spawn.Limits{MaxDepth: l.MaxDepth, MaxRunning: l.MaxRunning, MaxTotal: l.MaxTotal}
}

// refusalReason maps a gate refusal onto the public reason.
func refusalReason(l spawn.Limit) run.RefusalReason {
	if l == spawn.LimitDepth {
		return run.RefusedDepth
	}
	return run.RefusedTotal
}

// newReceipt builds a child's receipt from its ceiling.
func newReceipt(def string, depth int, background bool, c *spawn.Ceiling) run.Receipt {
	r := run.Receipt{AgentType: def, Depth: depth, Background: background, Tools: c.Tools, PermissionMode: c.Perms.Mode,
		Warnings: c.Warnings}
	if len(c.Dropped) > 0 {
		r.Dropped = make([]run.DroppedTool, len(c.Dropped))
		for i, d := range c.Dropped {
			r.Dropped[i] = run.DroppedTool(d)
		}
	}
	for _, name := range c.Tools {
		if name == AgentToolName {
			r.AllowedAgentTypes = c.Types
		}
	}
	return r
}
