package agentdef

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Budget is what an agent may spend (S-15.2): cost in US dollars at list
// prices, tokens (input, output and cache, as the provider bills them),
// model turns, and wall time. A zero field sets no limit of its own; the
// agent is still held to what its parent reserved for it.
type Budget struct {
	USD      float64       `json:"usd,omitempty"`
	Tokens   int64         `json:"tokens,omitempty"`
	Turns    int           `json:"turns,omitempty"`
	WallTime time.Duration `json:"wallTime,omitempty"`
}

// IsZero reports whether b sets no limit.
func (b Budget) IsZero() bool { return b == Budget{} }

// String renders b as its frontmatter would read ("usd 0.5, turns 10").
func (b Budget) String() string {
	var parts []string
	if b.USD > 0 {
		parts = append(parts, fmt.Sprintf("usd %g", b.USD))
	}
	if b.Tokens > 0 {
		parts = append(parts, fmt.Sprintf("tokens %d", b.Tokens))
	}
	if b.Turns > 0 {
		parts = append(parts, fmt.Sprintf("turns %d", b.Turns))
	}
	if b.WallTime > 0 {
		parts = append(parts, "wallTime "+b.WallTime.String())
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// ParseBudget reads a budget mapping ({usd, tokens, turns, wallTime}) as
// frontmatter, JSON or an Agent call give it. wallTime is a Go duration
// ("90s", "10m") or a number of seconds. Every field must be a positive
// number; an unknown key is an error naming it.
func ParseBudget(v any) (Budget, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return Budget{}, fmt.Errorf("budget must be a mapping of usd, tokens, turns and wallTime, not a %s", kind(v))
	}
	var b Budget
	for k, val := range m {
		switch k {
		case "usd":
			f, ok := toFloat(val)
			if !ok || f <= 0 || math.IsInf(f, 0) || math.IsNaN(f) {
				return Budget{}, fmt.Errorf("budget.usd must be a positive number of US dollars, not %s", show(val))
			}
			b.USD = f
		case "tokens":
			f, ok := toFloat(val)
			if !ok || f < 1 || f != math.Trunc(f) || f > math.MaxInt64/2 {
				return Budget{}, fmt.Errorf("budget.tokens must be a positive whole number, not %s", show(val))
			}
			b.Tokens = int64(f)
		case "turns":
			n, ok := toInt(val)
			if !ok || n < 1 {
				return Budget{}, fmt.Errorf("budget.turns must be a positive whole number, not %s", show(val))
			}
			b.Turns = n
		case "wallTime":
			d, err := wallTime(val)
			if err != nil {
				return Budget{}, err
			}
			b.WallTime = d
		default:
			return Budget{}, fmt.Errorf("unknown budget key %q; valid keys: usd, tokens, turns, wallTime", k)
		}
	}
	return b, nil
}

// wallTime reads a duration string or a number of seconds.
func wallTime(v any) (time.Duration, error) {
	if s, ok := v.(string); ok {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil || d <= 0 {
			return 0, fmt.Errorf("budget.wallTime must be a positive duration such as \"90s\" or \"10m\", not %s", show(v))
		}
		return d, nil
	}
	f, ok := toFloat(v)
	if !ok || f <= 0 || f > float64(math.MaxInt64/int64(time.Second)) {
		return 0, fmt.Errorf("budget.wallTime must be a positive duration such as \"90s\" or a number of seconds, not %s", show(v))
	}
	return time.Duration(f * float64(time.Second)), nil
}

// toFloat reads any number frontmatter or JSON yields.
func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case uint64:
		return float64(n), true
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case float64:
		return n, true
	case interface{ Float64() (float64, error) }:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}
