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

// The dimensions an account counts, as indexes of vec.
const (
	dimUSD = iota
	dimTokens
	dimTurns
	nDims
)

var dimNames = [nDims]string{"usd", "tokens", "turns"}

// leastLimit is the smallest limit per dimension that still limits.
var leastLimit = vec{1e-9, 1, 1}

// vec is a Spend or a set of limits, one number a dimension.
type vec [nDims]float64

func vecOf(s Spend) vec { return vec{s.USD, float64(s.Tokens), float64(s.Turns)} }

func (v vec) spend() Spend {
	return Spend{USD: v[dimUSD], Tokens: int64(v[dimTokens]), Turns: int(v[dimTurns])}
}

func limitsVec(b agentdef.Budget) vec { return vec{b.USD, float64(b.Tokens), float64(b.Turns)} }

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

// Account is one agent's budget (S-15.2). In each dimension (cost,
// tokens, turns) an account either has a limit of its own — what its
// spawn reserved: the least of what the call asked, its definition's and
// what its pool had free, held by that pool until it closes — or shares
// its pool's: the nearest account above it with a limit there, whose
// free part bounds it as it goes. So a child that asks for nothing does
// not take its parent's whole remainder from its siblings.
//
// Spend is charged up the ancestor chain as it happens, each account
// under its own small mutex (never two held at once); as a reserved
// account spends, what its pool holds for it shrinks, and what it did not
// spend returns when it closes. An account's level counts what it spent
// and what it holds for live children. A nil *Account is valid and never
// limits (no budget anywhere above an agent: nothing here runs).
type Account struct {
	parent *Account
	// lim is the account's own limit per dimension (0: it shares its
	// pool's); holder is the pool holding that reservation (nil: nothing
	// above limits the dimension).
	lim    vec
	holder [nDims]*Account
	// wall is the wall time it was given; deadline when it ends (zero:
	// none).
	wall     time.Duration
	deadline time.Time
	// why says, per limit, where it came from (the receipt's words).
	why string

	mu     sync.Mutex
	spent  vec // the subtree's spend
	held   vec // held for reserved accounts below, less what they spent
	warned bool

	// Guarded by holder[d].mu: hold[d] is what the holder holds for this
	// account now, seen[d] the most it had spent when the holder last
	// looked, released[d] whether it went back.
	hold, seen vec
	released   [nDims]bool
}

// NewAccount opens a root account (the session's, or an agent's whose
// parent has none) with limits; deadline is zero for no wall time.
func NewAccount(limits agentdef.Budget, now time.Time) *Account {
	a := &Account{lim: limitsVec(limits)}
	if !limits.IsZero() {
		a.why = limits.String() + " (session)"
	}
	if limits.WallTime > 0 {
		a.wall, a.deadline = limits.WallTime, now.Add(limits.WallTime)
	}
	return a
}

// Limits returns the account's own limits (a dimension it shares reads 0).
func (a *Account) Limits() agentdef.Budget {
	if a == nil {
		return agentdef.Budget{}
	}
	s := a.lim.spend()
	return agentdef.Budget{USD: s.USD, Tokens: s.Tokens, Turns: s.Turns, WallTime: a.wall}
}

// wallLeft is the wall time the account has left at now (0: none).
func (a *Account) wallLeft(now time.Time) time.Duration {
	if a == nil || a.deadline.IsZero() {
		return 0
	}
	return a.deadline.Sub(now)
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
	return a.spent.spend()
}

// Held returns what the account holds for reserved accounts below it,
// less what they spent.
func (a *Account) Held() Spend {
	if a == nil {
		return Spend{}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.held.spend()
}

// Remaining is what the account can still spend or reserve in the
// dimensions it limits: its limit less its subtree's spend and what it
// holds; a dimension it does not limit reads 0.
func (a *Account) Remaining() Spend {
	a.mu.Lock()
	defer a.mu.Unlock()
	var r vec
	for d := range nDims {
		if a.lim[d] > 0 {
			r[d] = a.free(d)
		}
	}
	return r.spend()
}

// free is what is left in dimension d. a.mu held.
func (a *Account) free(d int) float64 { return a.lim[d] - a.spent[d] - a.held[d] }

// pool is the nearest account from a up with a limit in dimension d.
func pool(a *Account, d int) *Account {
	for x := a; x != nil; x = x.parent {
		if x.lim[d] > 0 {
			return x
		}
	}
	return nil
}

// freeIn is what p has free in d, under its lock.
func freeIn(p *Account, d int) float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.free(d)
}

// BudgetRefusal is a spawn refused because the budget it would draw on
// has nothing left; Message is what the model reads.
type BudgetRefusal struct {
	// Dimension names the exhausted limit (usd, tokens, turns, wallTime).
	Dimension string
}

// Message says which budget is spent and not to retry.
func (r *BudgetRefusal) Message() string { return prompts.BudgetRefused(r.Dimension) }

// Reserve opens the account of a child of parent. In each dimension the
// call or the definition sets, the child reserves the least of the two
// and of what its pool has free, and the pool holds it; in the others it
// shares its pool's. With nothing free in a dimension a pool limits, the
// spawn is refused. It returns nil, nil when nothing limits the child.
func Reserve(parent *Account, asked, def agentdef.Budget, now time.Time) (*Account, *BudgetRefusal) {
	if parent == nil && asked.IsZero() && def.IsZero() {
		return nil, nil
	}
	if w := parent.wallLeft(now); !parent.deadlineZero() && w <= 0 {
		return nil, &BudgetRefusal{"wallTime"}
	}
	pools := [nDims]*Account{}
	for d := range nDims {
		if pools[d] = pool(parent, d); pools[d] != nil && freeIn(pools[d], d) <= 0 {
			return nil, &BudgetRefusal{dimNames[d]}
		}
	}
	c := &Account{parent: parent}
	av, dv := limitsVec(asked), limitsVec(def)
	var why []string
	for d := range nDims {
		want, from := least(av[d], "asked", dv[d], "definition")
		p := pools[d]
		if want == 0 {
			if p != nil {
				why = append(why, dimNames[d]+" shared with the parent's")
			}
			continue
		}
		if p != nil {
			p.mu.Lock()
			if f := p.free(d); f < want {
				want, from = f, "parent's remainder"
			}
			if want <= 0 {
				p.mu.Unlock()
				c.Close() // give back what the earlier dimensions took
				return nil, &BudgetRefusal{dimNames[d]}
			}
			p.held[d] += want
			c.hold[d], c.holder[d] = want, p
			p.mu.Unlock()
		}
		c.lim[d] = want
		why = append(why, fmt.Sprintf("%s %s (%s)", dimNames[d], showDim(d, want), from))
	}
	wall, from := least(float64(asked.WallTime), "asked", float64(def.WallTime), "definition")
	if pw := parent.wallLeft(now); !parent.deadlineZero() && (wall == 0 || float64(pw) < wall) {
		wall, from = float64(pw), "parent's remainder"
	}
	if wall > 0 {
		c.wall, c.deadline = time.Duration(wall), now.Add(time.Duration(wall))
		why = append(why, fmt.Sprintf("wallTime %s (%s)", time.Duration(wall).Round(time.Millisecond), from))
	}
	c.why = strings.Join(why, "; ")
	return c, nil
}

// deadlineZero reports whether a has no wall time (true for nil).
func (a *Account) deadlineZero() bool { return a == nil || a.deadline.IsZero() }

// least is the smaller set value of two (0 is unset) and where it came from.
func least(x float64, xFrom string, y float64, yFrom string) (float64, string) {
	switch {
	case x > 0 && (y == 0 || x <= y):
		return x, xFrom
	case y > 0:
		return y, yFrom
	}
	return 0, ""
}

func showDim(d int, v float64) string {
	if d == dimUSD {
		return fmt.Sprintf("%.4g", v)
	}
	return fmt.Sprintf("%g", v)
}

// Charge counts s against the account and every ancestor, as it happens,
// shrinks what each reserved account's pool holds for it by what it
// spent, and returns the account's level after it.
func (a *Account) Charge(s Spend) Level {
	if a == nil {
		return Under
	}
	v := vecOf(s)
	for x := a; x != nil; x = x.parent {
		x.mu.Lock()
		for d := range nDims {
			x.spent[d] += v[d]
		}
		spent := x.spent
		x.mu.Unlock()
		for d, h := range x.holder {
			if h == nil {
				continue
			}
			h.mu.Lock()
			if !x.released[d] {
				x.seen[d] = max(x.seen[d], spent[d])
				hold := max(x.lim[d]-x.seen[d], 0) // an overshoot is in h.spent already
				h.held[d] += hold - x.hold[d]
				x.hold[d] = hold
			}
			h.mu.Unlock()
		}
	}
	return a.Level()
}

// Level is where the account stands now: the highest share, over its
// dimensions, of its own limit it spent or holds for children, or of its
// pool's where it shares.
func (a *Account) Level() Level {
	if a == nil {
		return Under
	}
	frac := 0.0
	for d := range nDims {
		p := pool(a, d)
		if p == nil {
			continue
		}
		p.mu.Lock()
		frac = max(frac, (p.spent[d]+p.held[d])/p.lim[d])
		p.mu.Unlock()
	}
	switch {
	case frac >= 1:
		return Spent
	case frac >= LowFraction:
		return Low
	}
	return Under
}

// Fraction is the share of its budget the account has used or holds,
// for messages (0 without a limit).
func (a *Account) Fraction() float64 {
	frac := 0.0
	for d := range nDims {
		if p := pool(a, d); p != nil {
			p.mu.Lock()
			frac = max(frac, (p.spent[d]+p.held[d])/p.lim[d])
			p.mu.Unlock()
		}
	}
	return frac
}

// WarnOnce reports true the first time it is called, false after.
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

// Close ends the account: what its pools still hold for it (its unspent
// reservation) returns to them, and is returned. Idempotent.
func (a *Account) Close() Spend {
	if a == nil {
		return Spend{}
	}
	var back vec
	for d, h := range a.holder {
		if h == nil {
			continue
		}
		h.mu.Lock()
		if !a.released[d] {
			back[d] = a.hold[d]
			h.held[d] -= a.hold[d]
			a.hold[d], a.released[d] = 0, true
		}
		h.mu.Unlock()
	}
	return back.spend()
}

// Restore sets what the account spent before (a resumed session's
// journal), without charging ancestors (their own records hold it).
func (a *Account) Restore(s Spend) {
	if a == nil {
		return
	}
	a.mu.Lock()
	a.spent = vecOf(s)
	a.mu.Unlock()
}

// Effective is what the account may spend at now, as limits an agent
// running elsewhere can be held to on its own: in each dimension its own
// limit, or where it shares, what its pool has free now; the wall time
// left until its deadline. Zero fields do not limit.
func (a *Account) Effective(now time.Time) agentdef.Budget {
	if a == nil {
		return agentdef.Budget{}
	}
	var v vec
	for d := range nDims {
		switch p := pool(a, d); {
		case p == nil:
		case p == a:
			v[d] = a.lim[d]
		default:
			// Nothing free reads as the least that still limits (0
			// would not limit at all).
			v[d] = max(freeIn(p, d), leastLimit[d])
		}
	}
	s := v.spend()
	out := agentdef.Budget{USD: s.USD, Tokens: s.Tokens, Turns: s.Turns}
	if !a.deadline.IsZero() {
		out.WallTime = max(a.deadline.Sub(now), time.Nanosecond)
	}
	return out
}
