package compact

import (
	"strings"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/prompts"
)

// SummaryRequest returns the request that asks the agent's own model to
// summarise msgs: base's model, system prompt, tools and answer bounds
// unchanged (so the cached prefix of the agent's requests is read, not
// written again), the conversation as it is, and the compaction
// instructions (with custom ones, "" for none) as the last user text —
// joined to the last message when that is already a user message, so
// roles keep alternating and tool results stay paired.
func SummaryRequest(base llm.Request, msgs []llm.Message, custom string) llm.Request {
	req := base
	ask := llm.TextBlock(prompts.CompactInstructions(custom))
	out := make([]llm.Message, len(msgs), len(msgs)+1)
	copy(out, msgs)
	if n := len(out); n > 0 && out[n-1].Role == llm.RoleUser {
		last := out[n-1]
		last.Content = append(append([]llm.Block(nil), last.Content...), ask)
		out[n-1] = last
	} else {
		out = append(out, llm.Message{Role: llm.RoleUser, Content: []llm.Block{ask}})
	}
	req.Messages = out
	return req
}

// Trim returns msgs without its oldest part, for a summary request that
// was itself too long: it drops about half of the messages, cutting only
// before a user message that holds no tool result (so no result loses its
// call) and keeping the first message (the task). It returns msgs itself
// when nothing can be dropped.
func Trim(msgs []llm.Message) []llm.Message {
	if len(msgs) < 4 {
		return msgs
	}
	for i := len(msgs) / 2; i < len(msgs); i++ {
		if i > 1 && msgs[i].Role == llm.RoleUser && !hasResult(msgs[i]) {
			first := msgs[0]
			out := []llm.Message{first}
			if msgs[i].Role == first.Role {
				// Keep roles alternating: join the kept message to the first.
				merged := llm.Message{Role: first.Role, Content: append(append([]llm.Block(nil), first.Content...), msgs[i].Content...)}
				out = []llm.Message{merged}
				return append(out, msgs[i+1:]...)
			}
			return append(out, msgs[i:]...)
		}
	}
	return msgs
}

func hasResult(m llm.Message) bool {
	for _, b := range m.Content {
		if b.Type == llm.BlockToolResult {
			return true
		}
	}
	return false
}

// Summary reads the summary from the model's answer: what is inside the
// last <summary> tags, else the answer without its <analysis> part.
func Summary(answer string) string {
	if i := strings.LastIndex(answer, "<summary>"); i >= 0 {
		rest := answer[i+len("<summary>"):]
		if j := strings.Index(rest, "</summary>"); j >= 0 {
			rest = rest[:j]
		}
		return strings.TrimSpace(rest)
	}
	if i := strings.Index(answer, "<analysis>"); i >= 0 {
		if j := strings.Index(answer[i:], "</analysis>"); j >= 0 {
			answer = answer[:i] + answer[i+j+len("</analysis>"):]
		}
	}
	return strings.TrimSpace(answer)
}
