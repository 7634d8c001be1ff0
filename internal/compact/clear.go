package compact

import (
	"strings"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/prompts"
)

// Clearing old tool results (issue 27 point 7, Claude Code's
// "microcompaction"): before a full compaction is needed, the content of
// old, large tool results is replaced by a short marker naming the
// transcript that keeps it. The tool calls stay, so the model knows what
// it did and can run a call again.
const (
	// MinClearSavings is the fewest tokens a clearing must save to be
	// worth the prompt cache it breaks (everything after the first
	// cleared result is written again).
	MinClearSavings = 20_000
	// KeepRecentResults is how many of the latest tool results are never
	// cleared: the model is most likely still working from them.
	KeepRecentResults = 3
	// MinClearResultTokens is the smallest result worth clearing; smaller
	// ones save less than the marker and the cache cost.
	MinClearResultTokens = 500
)

// ClearPlan says which tool results a clearing replaces.
type ClearPlan struct {
	// Saved estimates the tokens the clearing takes out (the cleared
	// contents less their markers).
	Saved int64
	// Cleared is how many results it replaces.
	Cleared int
}

// ClearOldResults returns msgs with the content of old, large tool
// results replaced by prompts.ClearedToolResult(transcript, tokens), and
// what that saves. Old means not among the keepRecent latest results;
// large means at least minTokens (Estimate); results of calls to a tool
// keep names (the skill instructions, a child agent's report) and results
// cleared before are left alone. msgs is not modified: the returned slice
// shares every message that did not change. With nothing to clear it
// returns msgs itself and a zero plan.
func ClearOldResults(msgs []llm.Message, keepRecent int, minTokens int64, transcript string, keep func(tool string) bool) ([]llm.Message, ClearPlan) {
	names := map[string]string{} // tool use id → tool name
	total := 0
	for _, m := range msgs {
		for _, b := range m.Content {
			switch b.Type {
			case llm.BlockToolUse:
				names[b.ID] = b.Name
			case llm.BlockToolResult:
				total++
			}
		}
	}
	var plan ClearPlan
	var out []llm.Message
	seen := 0
	for i, m := range msgs {
		var content []llm.Block
		for j, b := range m.Content {
			if b.Type != llm.BlockToolResult {
				continue
			}
			seen++
			if seen > total-keepRecent {
				continue
			}
			if keep != nil && keep(names[b.ToolUseID]) {
				continue
			}
			tokens := resultTokens(b)
			if tokens < minTokens || cleared(b) {
				continue
			}
			marker := prompts.ClearedToolResult(transcript, tokens)
			if content == nil {
				content = append([]llm.Block(nil), m.Content...)
			}
			content[j] = llm.Block{Type: llm.BlockToolResult, ToolUseID: b.ToolUseID, IsError: b.IsError, Content: []llm.Block{llm.TextBlock(marker)}}
			plan.Saved += tokens - Estimate(marker)
			plan.Cleared++
		}
		if content != nil {
			if out == nil {
				out = append([]llm.Message(nil), msgs...)
			}
			out[i] = llm.Message{Role: m.Role, Content: content}
		}
	}
	if out == nil {
		return msgs, ClearPlan{}
	}
	return out, plan
}

// resultTokens estimates a tool result's content: its text, and an image
// at its base64 size.
func resultTokens(b llm.Block) int64 {
	var n int64
	for _, c := range b.Content {
		n += Estimate(c.Text) + Estimate(c.Data)
	}
	return n
}

// cleared reports whether b is a result cleared before.
func cleared(b llm.Block) bool {
	return len(b.Content) == 1 && strings.HasPrefix(b.Content[0].Text, prompts.ClearedToolResultPrefix)
}
