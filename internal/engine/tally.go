package engine

import (
	"slices"
	"sync"

	"github.com/cadre-dev/cadre/llm"
)

// tally is what an agent's subtree used: its own requests plus its
// finished children's subtrees, the models, and its tool calls by name.
type tally struct {
	mu        sync.Mutex
	usage     llm.Usage // own requests plus finished children's subtrees
	models    []string  // models used in the subtree
	toolStats map[string]int
}

func (a *tally) addUsage(u llm.Usage) {
	a.mu.Lock()
	a.usage = a.usage.Add(u)
	a.mu.Unlock()
}

func (a *tally) noteModel(id string) {
	a.mu.Lock()
	if !slices.Contains(a.models, id) {
		a.models = append(a.models, id)
	}
	a.mu.Unlock()
}

func (a *tally) noteTool(name string) {
	a.mu.Lock()
	if a.toolStats == nil {
		a.toolStats = map[string]int{}
	}
	a.toolStats[name]++
	a.mu.Unlock()
}

// absorb rolls a finished child's usage and models into a (S-1.4).
func (a *tally) absorb(child *tally) {
	child.mu.Lock()
	u, models := child.usage, append([]string(nil), child.models...)
	child.mu.Unlock()
	a.mu.Lock()
	a.usage = a.usage.Add(u)
	for _, m := range models {
		if !slices.Contains(a.models, m) {
			a.models = append(a.models, m)
		}
	}
	a.mu.Unlock()
}
