// Package pricing knows what a model's tokens cost and how large the model
// is: list prices per million tokens (input, output, prompt-cache writes
// and reads) and the context and output limits, so a run can report its
// cost (total_cost_usd) and usage per model (modelUsage) the way Claude
// Code does. The table is data: an embedder or a settings file may replace
// or extend it (see Table.With).
package pricing

import (
	"fmt"
	"strings"

	"github.com/cadre-dev/cadre/llm"
)

// Price is one model's list price in US dollars per million tokens, and
// its limits.
type Price struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheWrite float64 `json:"cacheWrite"`
	CacheRead  float64 `json:"cacheRead"`
	// ContextWindow is the model's context size in tokens.
	ContextWindow int64 `json:"contextWindow"`
	// MaxOutputTokens is the answer bound cadre asks for by default.
	MaxOutputTokens int64 `json:"maxOutputTokens"`
}

// Cost is what u costs at p, in US dollars.
func (p Price) Cost(u llm.Usage) float64 {
	return (float64(u.InputTokens)*p.Input + float64(u.OutputTokens)*p.Output +
		float64(u.CacheWriteTokens)*p.CacheWrite + float64(u.CacheReadTokens)*p.CacheRead) / 1e6
}

// Validate reports a price that cannot be right.
func (p Price) Validate() error {
	for _, v := range []float64{p.Input, p.Output, p.CacheWrite, p.CacheRead} {
		if v < 0 {
			return fmt.Errorf("negative price %v", v)
		}
	}
	if p.ContextWindow < 0 || p.MaxOutputTokens < 0 {
		return fmt.Errorf("negative limit")
	}
	return nil
}

// Table maps model ids to prices.
type Table map[string]Price

// claude makes the price of an Anthropic model from its input and output
// prices: a cache write costs 1.25 times an input token, a cache read a
// tenth of one.
func claude(in, out float64, maxOut int64) Price {
	return Price{Input: in, Output: out, CacheWrite: in * 1.25, CacheRead: in / 10, ContextWindow: 200_000, MaxOutputTokens: maxOut}
}

// Default returns the built-in table: Anthropic's list prices (standard
// tier, prompts within the base context window). Models of other providers
// are not listed; their cost is reported as unknown (0).
func Default() Table {
	return Table{
		"claude-fable-5-2":  claude(8, 40, 32000),
		"claude-opus-5-5":   claude(4, 20, 32000),
		"claude-sonnet-5-5": claude(2, 10, 32000),
		"claude-haiku-5-5":  claude(0.10, 0.50, 32000),
		"claude-opus-4-5":   claude(5, 25, 32000),
		"claude-opus-4-1":   claude(15, 75, 32000),
		"claude-opus-4-0":   claude(15, 75, 32000),
		"claude-opus-4":     claude(15, 75, 32000),
		"claude-sonnet-4-5": claude(3, 15, 32000),
		"claude-sonnet-4-0": claude(3, 15, 32000),
		"claude-sonnet-4":   claude(3, 15, 32000),
		"claude-haiku-4-5":  claude(1, 5, 32000),
		"claude-3-7-sonnet": claude(3, 15, 32000),
		"claude-3-5-sonnet": claude(3, 15, 8192),
		"claude-3-5-haiku":  claude(0.80, 4, 8192),
		"claude-3-opus":     claude(15, 75, 4096),
		"claude-3-haiku":    claude(0.25, 1.25, 4096),
	}
}

// With returns a copy of t with the entries of over added or replacing
// its own.
func (t Table) With(over Table) Table {
	out := make(Table, len(t)+len(over))
	for k, v := range t {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// Lookup finds the price of model: its exact id, else the longest listed
// id it starts with followed by "-" (a dated id such as
// claude-sonnet-4-5-20250929, or an alias with "-latest").
func (t Table) Lookup(model string) (Price, bool) {
	if p, ok := t[model]; ok {
		return p, true
	}
	best, found := "", false
	for id := range t {
		if strings.HasPrefix(model, id+"-") && len(id) > len(best) {
			best, found = id, true
		}
	}
	if !found {
		return Price{}, false
	}
	return t[best], true
}

// Cost is what u of model costs, and whether the model's price is known.
func (t Table) Cost(model string, u llm.Usage) (float64, bool) {
	p, ok := t.Lookup(model)
	if !ok {
		return 0, false
	}
	return p.Cost(u), true
}
