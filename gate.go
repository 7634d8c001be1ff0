package cadre

import (
	"fmt"
	"sync"
)

// Limits bound sub-agent spawning for a session (S-5.7). Zero fields take
// the defaults.
type Limits struct {
	// MaxDepth is how deep sub-agents may nest: the main agent is depth 0,
	// its children depth 1; an agent at MaxDepth cannot spawn. Default 3.
	MaxDepth int
	// MaxRunning bounds sub-agents running at once. Default 20.
	MaxRunning int
	// MaxTotal bounds sub-agents spawned in one session. Default 1000.
	MaxTotal int
}

// Default limits.
const (
	DefaultMaxDepth   = 3
	DefaultMaxRunning = 20
	DefaultMaxTotal   = 1000
)

func (l Limits) withDefaults() Limits {
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxRunning <= 0 {
		l.MaxRunning = DefaultMaxRunning
	}
	if l.MaxTotal <= 0 {
		l.MaxTotal = DefaultMaxTotal
	}
	return l
}

// Refusal reasons, as counted in the run's sub-agent stats.
const (
	RefusedDepth       = "depth"
	RefusedConcurrency = "concurrency"
	RefusedTotal       = "total"
	RefusedPermission  = "permission"
	RefusedUnknownType = "unknown_type"
	RefusedNoTools     = "no_tools"
)

// refusal is a spawn the gate (or a check before it) turned down. Its
// message goes to the model.
type refusal struct {
	reason string
	msg    string
}

func (r *refusal) Error() string { return r.msg }

// gate is the one place every spawn path reserves a slot (S-15.4). A
// reservation is taken before the child starts and must be released on
// every exit path; counters never go negative.
type gate struct {
	limits Limits

	mu      sync.Mutex
	running int
	total   int
}

func newGate(l Limits) *gate { return &gate{limits: l.withDefaults()} }

// reserve takes a slot for a child of an agent at parentDepth. It returns
// the release function (idempotent) or a refusal that says which limit and
// not to retry.
func (g *gate) reserve(parentDepth int) (release func(), ref *refusal) {
	if parentDepth >= g.limits.MaxDepth {
		return nil, &refusal{RefusedDepth, fmt.Sprintf("Cannot start a sub-agent: nesting limit reached (depth %d of %d). Do not retry; do the work yourself with your own tools.", parentDepth, g.limits.MaxDepth)}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running >= g.limits.MaxRunning {
		return nil, &refusal{RefusedConcurrency, fmt.Sprintf("Cannot start a sub-agent: the limit of %d sub-agents running at once is reached. Do not retry this call now; wait for running agents to finish, or do the work yourself.", g.limits.MaxRunning)}
	}
	if g.total >= g.limits.MaxTotal {
		return nil, &refusal{RefusedTotal, fmt.Sprintf("Cannot start a sub-agent: this session has already started the limit of %d sub-agents. Do not retry; finish the work with your own tools.", g.limits.MaxTotal)}
	}
	g.running++
	g.total++
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			g.running--
			g.mu.Unlock()
		})
	}, nil
}

// counts returns the running and total counters.
func (g *gate) counts() (running, total int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.running, g.total
}
