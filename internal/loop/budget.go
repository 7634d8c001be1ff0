package loop

import (
	"context"
	"errors"
	"strings"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/prompts"
)

// BudgetLevel is how far a run is into its budget (Config.Budget).
type BudgetLevel int

// The levels: under 85 %, past it (the agent is told to wrap up, once),
// all spent (the run stops).
const (
	BudgetUnder BudgetLevel = iota
	BudgetLow
	BudgetSpent
)

// Budget bounds what a run may spend (S-15.2). The loop asks Check before
// every model request and Charge after every response; at BudgetLow it
// tells the model once to wrap up (WrapUp's text, with its next tool
// results), at BudgetSpent it stops with Result.BudgetExhausted and a
// partial report. A run whose context ends with ErrWallTime as its cause
// stops the same way (its wall time is a deadline on its context).
type Budget interface {
	Check() BudgetLevel
	Charge(model string, u llm.Usage) BudgetLevel
	// WrapUp is the reminder given once at BudgetLow; "" gives none.
	WrapUp() string
	// What names the budget for the partial report ("usd 0.5").
	What() string
}

// ErrWallTime is the cause of a context ended by an agent's wall-time
// budget.
var ErrWallTime = errors.New("the agent's wall-time budget is spent")

// wallTimeUp reports whether ctx ended because a wall-time budget ran out.
func wallTimeUp(ctx context.Context) bool {
	return ctx.Err() != nil && errors.Is(context.Cause(ctx), ErrWallTime)
}

// budgetPart is the runner's side of budgets (a part, so the runner
// keeps few methods).
type budgetPart struct{ r *runner }

func budgetOf(r *runner) budgetPart { return budgetPart{r} }

// stop is the result of a run stopped by its budget: the partial report
// (its last text and what it was doing), with the history so far.
func (bp budgetPart) stop(stop llm.StopReason) *Result {
	r := bp.r
	what := "wall-time"
	if r.cfg.Budget != nil {
		what = r.cfg.Budget.What()
	}
	text, last := PartialReport(r.msgs, what)
	res := r.result(last, stop, false)
	res.Text = text
	res.BudgetExhausted = true
	return res
}

// PartialReport is the report of an agent its budget (what names it)
// stopped, from its conversation msgs: its last text and the tools it
// was calling. last is the assistant message the text comes from. An
// agent run elsewhere (a remote worker's loop) reports the same way.
func PartialReport(msgs []llm.Message, what string) (text string, last llm.Message) {
	var doing []string
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != llm.RoleAssistant {
			continue
		}
		if doing == nil {
			for _, c := range m.ToolUses() {
				doing = append(doing, c.Name)
			}
			if doing == nil {
				doing = []string{}
			}
		}
		if strings.TrimSpace(m.Text()) != "" {
			last = m
			break
		}
	}
	return prompts.BudgetExhausted(what, strings.TrimSpace(last.Text()), strings.Join(doing, ", ")), last
}

// SkipAll answers every call with the budget's refusal (the run stops
// after the answer that made them), keeping the history valid.
func SkipAll(calls []llm.Block) []llm.Block { return skipAll(calls) }

// wrapUp returns the wrap-up reminder when the budget is past 85 % and
// the model was not told yet.
func (bp budgetPart) wrapUp() (llm.Block, bool) {
	r := bp.r
	b := r.cfg.Budget
	if b == nil || r.budgetWarned || b.Check() < BudgetLow {
		return llm.Block{}, false
	}
	r.budgetWarned = true
	text := b.WrapUp()
	if text == "" {
		return llm.Block{}, false
	}
	return llm.TextBlock(text), true
}

// skipAll answers every call with the budget's refusal (the run stops
// after the answer that made them), keeping the history valid.
func skipAll(calls []llm.Block) []llm.Block {
	out := make([]llm.Block, len(calls))
	for i, c := range calls {
		out[i] = llm.ToolResultBlock(c.ID, prompts.BudgetToolSkipped, true)
	}
	return out
}
