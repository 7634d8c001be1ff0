package engine

import "github.com/cadre-dev/cadre/permission"

// Grants returns the allow rules a person granted "always for this
// session" so far. They hold for every agent of the session — the main
// agent, its sub-agents, later runs — below deny and ask rules, plan mode
// and read-only agents.
func (r *Runtime) Grants() []permission.Rule { return r.grants.Rules() }
