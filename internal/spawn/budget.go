package spawn

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/prompts"
)

// Spend is what an agent's subtree used of a budget: cost at list prices,
// tokens as the provider bills them, and model turns.
type Spend struct {
	USD    float64 `json:"usd"`
	Tokens int64   `json:"tokens"`
	Turns  int     `json:"turns"`
}

// Add returns the sum of s and o.
func (s Spend) Add(o Spend) Spend {
	return Spend{USD: s.USD + o.USD, Tokens: s.Tokens + o.Tokens, Turns: s.Turns + o.Turns}
}

// Level is how far an account is into its budget.
type Level int

// The levels: under 85 %, at 85 % or more (the agent is told to wrap up),
// all of it (the agent stops).
const (
	Under Level = iota
	Low
	Spent
)

// LowFraction is the share of a budget at which an agent is told to wrap up.
const LowFraction = 0.85

// Account is one agent's budget (S-15.2): the limits reserved for it,
// what its subtree spent, and what it holds reserved for its live
// children. Spend is charged up the ancestor chain as it happens, each
// account under its own small mutex (never two held at once); what a
// child did not spend returns to its parent when it closes. A nil
// *Account is valid and never limits (an agent with no budget anywhere
// above it pays nothing for this).
type Account struct {
	parent *Account
	limits agentdef.Budget
	// deadline ends the agent's wall time (zero: none).
	deadline time.Time
	// why says, per limit, where it came from (the receipt's words).
	why string

	mu    sync.Mutex
	spent Spend
	// held is reserved for live children, less what they spent.
	held Spend
	// inParent is what the parent holds for this account now; seen the
	// most this account had spent when the parent last looked. Both are
	// guarded by the parent's mu.
	inParent Spend
	seen     Spend
	closed   bool
	warned   bool
}

// NewAccount opens a root account (the session's, or an agent's whose
// parent has none) with limits; deadline is zero for no wall time.
func NewAccount(limits agentdef.Budget, now time.Time) *Account {
	a := &Account{limits: limits, why: whyOwn(limits, "session")}
	if limits.WallTime > 0 {
		a.deadline = now.Add(limits.WallTime)
	}
	return a
}

// Limits returns what the account may spend.
func (a *Account) Limits() agentdef.Budget {
	if a == nil {
		return agentdef.Budget{}
	}
	return a.limits
}

// Deadline is when the account's wall time ends; ok is false for none.
func (a *Account) Deadline() (time.Time, bool) {
	if a == nil || a.deadline.IsZero() {
		return time.Time{}, false
	}
	return a.deadline, true
}

// Why says where each limit came from.
func (a *Account) Why() string {
	if a == nil {
		return ""
	}
	return a.why
}

// Spent returns what the account's subtree has spent so far.
func (a *Account) Spent() Spend {
	if a == nil {
		return Spend{}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.spent
}

// Held returns what the account holds reserved for its live children,
// less what they spent.
func (a *Account) Held() Spend {
	if a == nil {
		return Spend{}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.held
}

// Remaining is what the account can still spend or reserve: its limit
// less its subtree's spend and what it holds for live children, in each
// dimension; a dimension it does not limit reads as minus what was spent
// (check Limits first).
func (a *Account) Remaining() Spend {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.remaining()
}

func (a *Account) remaining() Spend {
	return Spend{
		USD:    a.limits.USD - a.spent.USD - a.held.USD,
		Tokens: a.limits.Tokens - a.spent.Tokens - a.held.Tokens,
		Turns:  a.limits.Turns - a.spent.Turns - a.held.Turns,
	}
}

// BudgetRefusal is a spawn refused because its parent's budget has
// nothing left to reserve; Message is what the model reads.
type BudgetRefusal struct {
	// Dimension names the exhausted limit (usd, tokens, turns, wallTime).
	Dimension string
}

// Message says which budget is spent and not to retry.
func (r *BudgetRefusal) Message() string { return prompts.BudgetRefused(r.Dimension) }

// Reserve opens the account of a child of parent: each limit is the
// least of what the call asked, what the child's definition sets and what
// parent has left; parent holds the reservation until the child closes.
// With nothing left in a dimension parent limits, the spawn is refused.
// It returns nil, nil when nothing limits the child (no cost then).
func Reserve(parent *Account, asked, def agentdef.Budget, now time.Time) (*Account, *BudgetRefusal) {
	if parent == nil && asked.IsZero() && def.IsZero() {
		return nil, nil
	}
	var rem Spend
	var remWall time.Duration
	var pl agentdef.Budget
	if parent != nil {
		parent.mu.Lock()
		defer parent.mu.Unlock()
		pl, rem = parent.limits, parent.remaining()
		if !parent.deadline.IsZero() {
			remWall = parent.deadline.Sub(now)
		}
		switch {
		case pl.USD > 0 && rem.USD <= 0:
			return nil, &BudgetRefusal{"usd"}
		case pl.Tokens > 0 && rem.Tokens <= 0:
			return nil, &BudgetRefusal{"tokens"}
		case pl.Turns > 0 && rem.Turns <= 0:
			return nil, &BudgetRefusal{"turns"}
		case !parent.deadline.IsZero() && remWall <= 0:
			return nil, &BudgetRefusal{"wallTime"}
		}
	}
	var why []string
	pick := func(name string, askedV, defV, parentV float64, parentSet bool, show func(float64) string) float64 {
		v, from := 0.0, ""
		for _, c := range []struct {
			v    float64
			set  bool
			from string
		}{{askedV, askedV > 0, "asked"}, {defV, defV > 0, "definition"}, {parentV, parentSet, "parent's remainder"}} {
			if c.set && (from == "" || c.v < v) {
				v, from = c.v, c.from
			}
		}
		if from != "" {
			why = append(why, fmt.Sprintf("%s %s (%s)", name, show(v), from))
		}
		return v
	}
	f := func(v float64) string { return fmt.Sprintf("%g", v) }
	c := &Account{parent: parent}
	c.limits.USD = pick("usd", asked.USD, def.USD, rem.USD, pl.USD > 0, func(v float64) string { return fmt.Sprintf("%.4g", v) })
	c.limits.Tokens = int64(pick("tokens", float64(asked.Tokens), float64(def.Tokens), float64(rem.Tokens), pl.Tokens > 0, f))
	c.limits.Turns = int(pick("turns", float64(asked.Turns), float64(def.Turns), float64(rem.Turns), pl.Turns > 0, f))
	c.limits.WallTime = time.Duration(pick("wallTime", float64(asked.WallTime), float64(def.WallTime), float64(remWall), remWall > 0,
		func(v float64) string { return time.Duration(v).Round(time.Millisecond).String() }))
	if c.limits.WallTime > 0 {
		c.deadline = now.Add(c.limits.WallTime)
	}
	c.why = strings.Join(why, "; ")
	if parent != nil {
		// The parent holds, in each dimension it limits, what it reserved.
		if pl.USD > 0 {
			c.inParent.USD = c.limits.USD
		}
		if pl.Tokens > 0 {
			c.inParent.Tokens = c.limits.Tokens
		}
		if pl.Turns > 0 {
			c.inParent.Turns = c.limits.Turns
		}
		parent.held = parent.held.Add(c.inParent)
	}
	return c, nil
}

// Charge counts s against the account and every ancestor, as it happens,
// and returns the account's level after it.
func (a *Account) Charge(s Spend) Level {
	if a == nil {
		return Under
	}
	a.mu.Lock()
	a.spent = a.spent.Add(s)
	lvl := a.level()
	subtree := a.spent
	a.mu.Unlock()
	for c, p := a, a.parent; p != nil; c, p = p, p.parent {
		p.mu.Lock()
		p.spent = p.spent.Add(s)
		if !c.closed {
			// What p holds for c shrinks by what c spent (never below 0:
			// an overshoot of c's last response is in p.spent already).
			c.seen = maxSpend(c.seen, subtree)
			hold := Spend{
				USD:    holdOf(c.inParent.USD > 0, c.limits.USD-c.seen.USD),
				Tokens: int64(holdOf(c.inParent.Tokens > 0, float64(c.limits.Tokens-c.seen.Tokens))),
				Turns:  int(holdOf(c.inParent.Turns > 0, float64(c.limits.Turns-c.seen.Turns))),
			}
			p.held = p.held.Add(Spend{hold.USD - c.inParent.USD, hold.Tokens - c.inParent.Tokens, hold.Turns - c.inParent.Turns})
			c.inParent = hold
		}
		subtree = p.spent
		p.mu.Unlock()
	}
	return lvl
}

// holdOf is what a parent holds in one dimension: the unspent part of the
// reservation when it holds that dimension at all.
func holdOf(held bool, left float64) float64 {
	if !held || left < 0 {
		return 0
	}
	return left
}

func maxSpend(a, b Spend) Spend {
	return Spend{max(a.USD, b.USD), max(a.Tokens, b.Tokens), max(a.Turns, b.Turns)}
}

// Level is where the account stands now.
func (a *Account) Level() Level {
	if a == nil {
		return Under
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.level()
}

// level is the highest of the limited dimensions' levels. a.mu held.
func (a *Account) level() Level {
	frac := 0.0
	if a.limits.USD > 0 {
		frac = max(frac, a.spent.USD/a.limits.USD)
	}
	if a.limits.Tokens > 0 {
		frac = max(frac, float64(a.spent.Tokens)/float64(a.limits.Tokens))
	}
	if a.limits.Turns > 0 {
		frac = max(frac, float64(a.spent.Turns)/float64(a.limits.Turns))
	}
	switch {
	case frac >= 1:
		return Spent
	case frac >= LowFraction:
		return Low
	}
	return Under
}

// WarnOnce reports true the first time it is called on an account at
// Low or beyond, false after.
func (a *Account) WarnOnce() bool {
	if a == nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.warned {
		return false
	}
	a.warned = true
	return true
}

// Close ends the account: what its parent still holds for it (its
// unspent reservation) returns to the parent, and is returned.
func (a *Account) Close() Spend {
	if a == nil || a.parent == nil {
		return Spend{}
	}
	p := a.parent
	p.mu.Lock()
	defer p.mu.Unlock()
	if a.closed {
		return Spend{}
	}
	a.closed = true
	back := a.inParent
	p.held = Spend{p.held.USD - back.USD, p.held.Tokens - back.Tokens, p.held.Turns - back.Turns}
	a.inParent = Spend{}
	return back
}

// Restore sets what the account spent before (a resumed session's
// journal), without charging ancestors (their own records hold it).
func (a *Account) Restore(s Spend) {
	if a == nil {
		return
	}
	a.mu.Lock()
	a.spent = s
	a.mu.Unlock()
}

// whyOwn is the receipt's account of limits set by one source.
func whyOwn(b agentdef.Budget, from string) string {
	if b.IsZero() {
		return ""
	}
	return b.String() + " (" + from + ")"
}
