package agentwf

// A remote agent's budget (S-15.2) on the worker. The reservation travels
// in the spawn request (executor.SpawnRequest.Budget), so it is in the
// workflow's input and survives any worker: the spend is recomputed from
// the recorded model answers when the workflow is replayed elsewhere. The
// workflow holds the agent to it as the local loop does (internal/loop's
// budget.go): checked before every model call and after every answer,
// told once to wrap up at 85 %, stopped at 100 % with budget_exhausted
// and a partial report, its wall time a deadline (a workflow timer that
// cancels its calls). Its sub-agents reserve from it as a local child
// does (spawn.Reserve), and their spend is charged to it when they end.

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/internal/engine/tasktools"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/spawn"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/pricing"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
)

// budget is a remote agent's account in its workflow (nil: no budget).
type budget struct {
	acct   *spawn.Account
	prices pricing.Table
	// wallUp is set when the wall-time timer fired and cancelled the
	// agent's calls.
	wallUp bool
}

// newBudget opens the account of req's reservation (nil without one).
func newBudget(ctx workflow.Context, req executor.SpawnRequest) *budget {
	lim := agentdef.Budget(req.Budget)
	if lim.IsZero() {
		return nil
	}
	return &budget{acct: spawn.NewAccount(lim, workflow.Now(ctx)), prices: pricing.Default().With(req.Prices)}
}

// watchWall returns ctx bounded by the agent's wall time: when it runs
// out, the context is cancelled and wallUp set. cancel ends the watch.
func (b *budget) watchWall(ctx workflow.Context) (workflow.Context, workflow.CancelFunc) {
	wctx, cancel := workflow.WithCancel(ctx)
	if b == nil {
		return wctx, cancel
	}
	d, ok := b.acct.Deadline()
	if !ok {
		return wctx, cancel
	}
	workflow.Go(wctx, func(g workflow.Context) {
		if err := workflow.NewTimer(g, d.Sub(workflow.Now(g))).Get(g, nil); err == nil {
			b.wallUp = true
			cancel()
		}
	})
	return wctx, cancel
}

// exhausted reports whether the agent may make no more model calls.
func (b *budget) exhausted() bool {
	return b != nil && (b.wallUp || b.acct.Level() == spawn.Spent)
}

// charge counts one answer of model: its cost at the launcher's prices,
// its tokens as billed, one turn. It reports whether the budget is spent.
func (b *budget) charge(model string, u llm.Usage) bool {
	if b == nil {
		return false
	}
	cost, _ := b.prices.Cost(model, u)
	return b.acct.Charge(spawn.Spend{USD: cost, Tokens: u.Total(), Turns: 1}) == spawn.Spent
}

// wrapUp is the reminder, once, when the agent is past 85 %.
func (b *budget) wrapUp() (llm.Block, bool) {
	if b == nil || b.acct.Level() < spawn.Low || !b.acct.WarnOnce() {
		return llm.Block{}, false
	}
	return llm.TextBlock(prompts.BudgetWrapUp(fmt.Sprintf("%.0f%%", 100*b.acct.Fraction()))), true
}

// what names the budget in the partial report.
func (b *budget) what() string {
	if b.wallUp {
		return "wall-time"
	}
	return b.acct.Limits().String()
}

// spend is what the agent's subtree spent, for its result.
func (b *budget) spend() *run.BudgetSpend {
	if b == nil {
		return nil
	}
	return &run.BudgetSpend{Spent: run.Spend(b.acct.Spent())}
}

// stop ends the agent at its budget: calls its last answer asked for are
// answered as not run (the conversation stays valid for continuing it),
// and its result is the partial report.
func (a *agent) budgetStop() (task.Status, string, string, bool) {
	if n := len(a.msgs); n > 0 && a.msgs[n-1].Role == llm.RoleAssistant {
		if calls := a.msgs[n-1].ToolUses(); len(calls) > 0 {
			user := llm.Message{Role: llm.RoleUser, Content: loop.SkipAll(calls)}
			a.msgs = append(a.msgs, user)
			a.emit(run.Event{Type: run.EventUser, Message: &user})
		}
	}
	text, _ := loop.PartialReport(a.msgs, a.bud.what())
	return task.BudgetExhausted, text, "", false
}

// reserve opens a sub-agent's account under the agent's: the least of
// what its Agent call asked, what its type's definition sets (def) and
// what the agent has free (a limit neither sets is shared, bounded by
// what is free now). A refusal is the message its call returns.
func (b *budget) reserve(ctx workflow.Context, asked, def agentdef.Budget) (*spawn.Account, executor.Budget, string) {
	var parent *spawn.Account
	if b != nil {
		parent = b.acct
	}
	now := workflow.Now(ctx)
	acct, ref := spawn.Reserve(parent, asked, def, now)
	if ref != nil {
		return nil, executor.Budget{}, ref.Message()
	}
	return acct, executor.Budget(acct.Effective(now)), ""
}

// settleChild charges what a sub-agent reported it spent to its account
// (and so up to the agent's) and closes it: what it did not spend
// returns.
func settleChild(acct *spawn.Account, res run.SubagentResult) {
	if acct == nil {
		return
	}
	if res.Budget != nil {
		acct.Charge(spawn.Spend(res.Budget.Spent))
	} else {
		acct.Charge(spawn.Spend{Tokens: res.Usage.Total(), Turns: res.Turns})
	}
	acct.Close()
}

// cmpStr is s, or def when s is empty.
func cmpStr(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

// prepareChild gives a sub-agent's request what of the agent it carries
// on the worker: its own call's output schema (never its parent's),
// checked; its reservation from the agent's budget; the trace its span
// hangs under. A refusal is the message its Agent call returns; acct is
// the reservation to settle when it ends.
func (a *agent) prepareChild(ctx workflow.Context, in tasktools.AgentInput, req *executor.SpawnRequest) (acct *spawn.Account, refused string) {
	req.Definition.OutputSchema = in.OutputSchema
	if _, err := newTyped(in.OutputSchema, req.Definition.OutputAttempts); err != nil {
		return nil, prompts.OutputSchemaInvalid("output_schema", err)
	}
	asked, err := in.Budget.Budget()
	if err != nil {
		return nil, prompts.AgentInputInvalid(err, nil)
	}
	def := agentdef.Budget(a.req.TypeBudgets[req.Definition.Name]) // childreceipt.go: its type's own
	acct, limits, refused := a.bud.reserve(ctx, asked, def)
	if refused != "" {
		return nil, refused
	}
	req.Budget = limits
	req.Trace = a.trace
	req.Receipt = childReceipt(*req, acct) // childreceipt.go
	return acct, ""
}
