package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/spawn"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/pricing"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/transcript"
)

// Budgets (S-15.2). An agent's account (spawn.Account) is its
// reservation: the session's for the main agent, the least of what the
// Agent call asked, what its definition sets and what its parent had left
// for a child. Spend is charged up the account chain as each response
// arrives; the loop checks before each request and after each response
// (loop.Budget), tells the agent once to wrap up at 85 % and stops it at
// 100 % with a partial report. With no budget anywhere an agent has no
// account and nothing here runs.

// budgetBook is the session's budgets: whether they are on (a session
// budget or a definition's: the Agent tool then offers budget), the
// session's account, and the prices spend is figured with.
type budgetBook struct {
	on      bool
	session *spawn.Account
	prices  pricing.Table
}

// newBudgetBook opens the session's budgets for cfg and its definitions.
func newBudgetBook(cfg *Config, defs []*agentdef.Definition) budgetBook {
	b := budgetBook{on: !cfg.Budget.IsZero(), prices: cfg.Prices}
	for _, d := range defs {
		if !d.Budget.IsZero() {
			b.on = true
		}
	}
	if b.on && b.prices == nil {
		b.prices = pricing.Default() // built only when budgets are on
	}
	if !cfg.Budget.IsZero() {
		b.session = spawn.NewAccount(cfg.Budget, time.Now())
	}
	return b
}

// budgetGlue is an agent's side of budgets.
type budgetGlue struct{ a *agent }

func budgetsOf(a *agent) budgetGlue { return budgetGlue{a} }

// reserve opens child's account under a's (a refusal when a has nothing
// left) and writes the reservation into child's receipt. A bad budget in
// the call is a refusal naming the field.
func (bg budgetGlue) reserve(child *agent, in agentInput) *refusal {
	a := bg.a
	if !a.run.rt.budgets.on && a.account == nil {
		return nil // no budget anywhere: no cost
	}
	asked, err := in.Budget.Budget()
	if err != nil {
		return &refusal{msg: prompts.AgentInputInvalid(err, nil)}
	}
	var def agentdef.Budget
	if child.def != nil && !child.fork {
		def = child.def.Budget
	}
	acct, ref := spawn.Reserve(a.account, asked, def, time.Now())
	if ref != nil {
		return &refusal{run.RefusedBudget, ref.Message()}
	}
	if acct == nil {
		return nil
	}
	child.account = acct
	l := acct.Limits()
	child.spawnReceipt.Budget = &run.BudgetGrant{USD: l.USD, Tokens: l.Tokens, Turns: l.Turns, WallTime: l.WallTime, Why: acct.Why()}
	return nil
}

// request puts the reservation into a child's spawn request, so an
// executor elsewhere holds it to the same limits.
func (bg budgetGlue) request(req *executor.SpawnRequest) {
	req.Budget = executor.Budget(bg.a.account.Limits())
}

// close ends the agent's account: its unspent reservation returns to its
// parent. It returns what it spent and what went back (nil without an
// account). Idempotent.
func (bg budgetGlue) close() *run.BudgetSpend {
	acct := bg.a.account
	if acct == nil {
		return nil
	}
	back := acct.Close()
	return &run.BudgetSpend{Spent: run.Spend(acct.Spent()), Returned: run.Spend(back)}
}

// line is a finished agent's spend against its budget for reports and
// notifications ("" without a budget).
func (bg budgetGlue) line(s *run.BudgetSpend) string {
	if s == nil {
		return ""
	}
	l := bg.a.account.Limits()
	return prompts.BudgetLine(s.Spent.USD, s.Spent.Tokens, s.Spent.Turns, l.USD, l.Tokens, l.Turns, s.Returned.USD, s.Returned.Tokens, s.Returned.Turns)
}

// bind sets the loop's budget and the wall-time deadline on ctx; the
// returned cancel must be called when the loop ends.
func (bg budgetGlue) bind(ctx context.Context, cfg *loop.Config) (context.Context, context.CancelFunc) {
	acct := bg.a.account
	if acct == nil {
		return ctx, func() {}
	}
	cfg.Budget = loopBudget{acct: acct, prices: bg.a.run.rt.budgets.prices}
	if d, ok := acct.Deadline(); ok {
		return context.WithDeadlineCause(ctx, d, loop.ErrWallTime)
	}
	return ctx, func() {}
}

// loopBudget is an account as the loop sees it.
type loopBudget struct {
	acct   *spawn.Account
	prices pricing.Table
}

// Check implements loop.Budget.
func (b loopBudget) Check() loop.BudgetLevel { return loop.BudgetLevel(b.acct.Level()) }

// Charge implements loop.Budget: one response's cost at list prices
// (unknown models count as free, as in the run's cost), its tokens as
// billed, and one turn.
func (b loopBudget) Charge(model string, u llm.Usage) loop.BudgetLevel {
	cost, _ := b.prices.Cost(model, u)
	return loop.BudgetLevel(b.acct.Charge(spawn.Spend{USD: cost, Tokens: u.Total(), Turns: 1}))
}

// WrapUp implements loop.Budget: the reminder once per agent, however
// many times its loop runs (a child that waits for its background
// children runs it again on their notifications).
func (b loopBudget) WrapUp() string {
	if !b.acct.WarnOnce() {
		return ""
	}
	return prompts.BudgetWrapUp(fmt.Sprintf("%.0f%%", 100*b.acct.Fraction()))
}

// What implements loop.Budget.
func (b loopBudget) What() string {
	if l := b.acct.Limits(); !l.IsZero() {
		return l.String()
	}
	return "shared"
}

// restore charges a resumed session's account with what the session
// spent before: the usage of every assistant entry of its main transcript
// and of its agents' transcripts, each written as the response arrived
// (the transcripts are the spend journal; the agents' .meta.json files
// hold their reservations and final spend). Nothing is read without a
// session budget or without history.
func (b *budgetBook) restore(stateDir, cwd, session, tpath string, resumed bool) error {
	if b.session == nil || !resumed || tpath == "" {
		return nil
	}
	files := []string{tpath}
	dir := filepath.Dir(transcript.AgentPath(stateDir, cwd, session, "x"))
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("restore the session's budget: %w", err)
	}
	for _, e := range entries {
		if n := e.Name(); !e.IsDir() && strings.HasPrefix(n, "agent-") && strings.HasSuffix(n, ".jsonl") {
			files = append(files, filepath.Join(dir, n))
		}
	}
	var spent spawn.Spend
	for _, f := range files {
		es, _, err := transcript.ScanFile(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("restore the session's budget: %w", err)
		}
		for _, e := range es {
			if e.Type != string(llm.RoleAssistant) || e.Usage == nil {
				continue
			}
			cost, _ := b.prices.Cost(e.Model, *e.Usage)
			spent = spent.Add(spawn.Spend{USD: cost, Tokens: e.Usage.Total(), Turns: 1})
		}
	}
	b.session.Restore(spent)
	return nil
}
