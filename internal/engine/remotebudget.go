package engine

// A remote agent's budget, trace and spend (issues 26 and 28): what the
// launcher puts into its spawn request for the worker to hold it to, and
// how its spend, reported by its events and its result, is charged up the
// launcher's account chain (budget.go) before what it did not spend goes
// back to its parent.

import (
	"context"

	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/internal/spawn"
	"github.com/cadre-dev/cadre/llm/pricing"
	"github.com/cadre-dev/cadre/run"
)

// spec completes the remote child's request: its reservation as limits a
// worker can hold it to alone (a dimension it shares with its parent is
// what the pool has free now), the launcher's price of its model when
// cost counts, and the trace context of its invoke_agent span (ctx holds
// it: telemetry.go's startChild), so the worker's spans join the tree.
func (rr remoteRun) spec(ctx context.Context, req *executor.SpawnRequest) {
	c := rr.a
	rt := c.run.rt
	if rt.tel != nil {
		req.Trace = executor.TraceContext(rt.tel.Inject(ctx))
	}
	rr.typeBudgets(req) // remoteusage.go: the budgets of the types it may start
	if c.account == nil {
		return
	}
	req.Budget = executor.Budget(c.account.Effective(rt.cfg.Now()))
	if req.Budget.USD > 0 {
		if p, ok := rt.budgets.prices.Lookup(req.Model.ID); ok {
			req.Prices = pricing.Table{req.Model.ID: p}
		}
	}
}

// remoteSpend is what the launcher charged for a remote subtree's
// responses as their events arrived.
type remoteSpend struct{ charged spawn.Spend }

// charge counts one forwarded event of the remote subtree: a model
// response is charged up the child's account chain as it arrives, at the
// launcher's prices, as a local child's is.
func (rr remoteRun) charge(s *remoteSpend, ev run.Event) {
	c := rr.a
	if c.account == nil || ev.Type != run.EventAssistant {
		return
	}
	cost, _ := c.run.rt.budgets.prices.Cost(ev.Model, ev.Usage)
	one := spawn.Spend{USD: cost, Tokens: ev.Usage.Total(), Turns: 1}
	s.charged = s.charged.Add(one)
	c.account.Charge(one)
}

// settle charges what the worker reported the subtree spent beyond what
// its events brought (events dropped when the agent was stopped or
// lost), closes the child's account — its unspent reservation returns to
// its parent — and returns the spend for its result (nil without a
// budget).
func (rr remoteRun) settle(res *run.SubagentResult, s remoteSpend) *run.BudgetSpend {
	c := rr.a
	if c.account == nil {
		return nil
	}
	if res != nil && res.Budget != nil {
		rep := res.Budget.Spent
		more := spawn.Spend{USD: max(rep.USD-s.charged.USD, 0), Tokens: max(rep.Tokens-s.charged.Tokens, 0), Turns: max(rep.Turns-s.charged.Turns, 0)}
		if more != (spawn.Spend{}) {
			c.account.Charge(more)
		}
	}
	return budgetsOf(c).close()
}
