package permission

import "sync"

// Grants holds the allow rules a person granted with "always for this
// session", shared by every agent of a session and every run of it: what
// was approved once for the session is not asked again by a sub-agent or
// the next turn. Deny and ask rules, plan mode and read-only agents still
// win over a grant. Safe for concurrent use; the zero value is empty.
type Grants struct {
	mu    sync.Mutex
	rules []Rule
}

// Add records granted rules.
func (g *Grants) Add(rules ...Rule) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.rules = append(g.rules, rules...)
}

// Rules returns every granted rule, oldest first.
func (g *Grants) Rules() []Rule {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]Rule(nil), g.rules...)
}

// since returns the rules granted after the first n, and the new count.
func (g *Grants) since(n int) ([]Rule, int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if n >= len(g.rules) {
		return nil, len(g.rules)
	}
	return append([]Rule(nil), g.rules[n:]...), len(g.rules)
}
