// Package compact holds the pure parts of context compaction (S-1.5):
// when an agent must compact (the thresholds of its model's context
// window), the request that asks its own model for a summary, how the
// summary is read from the answer, how the new conversation is rebuilt
// from the summary and what must survive, and the breaker that stops an
// agent whose context refills right after each compaction. It makes no
// request and keeps no state beyond a Breaker; the query loop
// (internal/loop) drives it.
package compact

import (
	"errors"
	"strings"

	"github.com/cadre-dev/cadre/llm"
)

// Trigger says why a compaction happened.
type Trigger string

// Triggers, as Claude Code names them in hooks and records.
const (
	// Auto is a compaction the loop started: the context reached the
	// threshold, or the provider said the prompt is too long.
	Auto Trigger = "auto"
	// Manual is a compaction asked for (/compact, Runtime.Compact).
	Manual Trigger = "manual"
)

// Claude Code's margins, in tokens, for a 200,000-token window.
const (
	// MaxOutputReserve caps what is kept free for the answer.
	MaxOutputReserve = 20_000
	// AutoCompactBuffer is how far below the effective window automatic
	// compaction starts.
	AutoCompactBuffer = 13_000
	// WarningMargin is how far below the compaction threshold the
	// warning comes.
	WarningMargin = 20_000
)

// Thresholds are the token counts at which an agent is warned and
// compacted.
type Thresholds struct {
	// Window is the model's context window; Effective what remains of it
	// once room for the answer is kept free.
	Window, Effective int64
	// Compact is the context size at which automatic compaction starts;
	// Warn the size at which the agent's stream is warned.
	Compact, Warn int64
}

// Compute returns the thresholds for a context window, the answer bound
// the agent asks for (maxOutput, 0 when the adapter chooses) and an
// optional percentage override (CLAUDE_AUTOCOMPACT_PCT_OVERRIDE; 0 for
// none, else in (0, 100]).
//
// The formula is Claude Code's: effective = window − min(maxOutput,
// 20,000); compact at effective − 13,000; warn 20,000 before; an override
// percentage of the effective window lowers the compaction point. On
// windows too small for those margins (a test's 8,000 tokens, a small
// local model) each margin is cut to a fraction of the window — answer
// reserve a quarter, buffer and warning margin an eighth each — so the
// thresholds stay positive and ordered.
func Compute(window, maxOutput int64, pct float64) Thresholds {
	if window <= 0 {
		return Thresholds{}
	}
	reserve := int64(MaxOutputReserve)
	if maxOutput > 0 && maxOutput < reserve {
		reserve = maxOutput
	}
	reserve = min(reserve, window/4)
	buffer := min(int64(AutoCompactBuffer), window/8)
	warn := min(int64(WarningMargin), window/8)
	t := Thresholds{Window: window, Effective: window - reserve}
	t.Compact = t.Effective - buffer
	if pct > 0 && pct < 100 {
		t.Compact = min(t.Compact, int64(float64(t.Effective)*pct/100))
	}
	t.Warn = max(t.Compact-warn, 0)
	return t
}

// Size is how many tokens of context a request used, read from the usage
// of its answer: every input token (cached or not) and the answer, which
// the next request sends back.
func Size(u llm.Usage) int64 {
	return u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens + u.OutputTokens
}

// Estimate guesses the tokens of text (about four bytes a token), for
// what has no measured usage yet.
func Estimate(text string) int64 {
	return int64(len(text)+3) / 4
}

// EstimateMessages guesses the tokens of msgs (see Estimate).
func EstimateMessages(msgs []llm.Message) int64 {
	var n int64
	for _, m := range msgs {
		for _, b := range m.Content {
			n += Estimate(b.Text) + Estimate(string(b.Input))
			for _, c := range b.Content {
				n += Estimate(c.Text)
			}
		}
	}
	return n
}

// PromptTooLong reports whether err is a provider saying the request
// does not fit the model's context window (Anthropic "prompt is too
// long", OpenAI-compatible "maximum context length", "context_length_exceeded").
func PromptTooLong(err error) bool {
	var api *llm.APIError
	if !errors.As(err, &api) {
		return false
	}
	if api.Status != 400 && api.Status != 413 {
		return false
	}
	msg := strings.ToLower(api.Message + " " + api.Type)
	for _, s := range []string{"prompt is too long", "maximum context length", "context_length_exceeded", "context window", "too many tokens"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
