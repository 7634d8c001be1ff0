package llmtest

import (
	"fmt"

	"github.com/cadre-dev/cadre/llm"
)

// maxBreakpoints is the most cache_control markers one Anthropic request
// may carry.
const maxBreakpoints = 4

// checkRequest returns the invariant violations of a decoded request:
// tool_use/tool_result pairing between neighbouring messages, role
// alternation (Anthropic only, starting with user), at most four cache
// breakpoints, plus the wire-level problems found while decoding (empty
// text blocks, duplicate tool names, tool input that is not JSON).
func checkRequest(p Protocol, d *decoded) []string {
	out := append([]string(nil), d.problems...)
	msgs := d.messages
	if p == Anthropic {
		if d.breakpoints > maxBreakpoints {
			out = append(out, fmt.Sprintf("%d cache_control breakpoints (at most %d allowed)", d.breakpoints, maxBreakpoints))
		}
		if len(msgs) > 0 && msgs[0].Role != llm.RoleUser {
			out = append(out, fmt.Sprintf("messages[0]: conversation starts with %q, not user", msgs[0].Role))
		}
		for i := 1; i < len(msgs); i++ {
			if msgs[i].Role == msgs[i-1].Role {
				out = append(out, fmt.Sprintf("messages[%d]: two %s messages in a row", i, msgs[i].Role))
			}
		}
	}
	for i, m := range msgs {
		switch m.Role {
		case llm.RoleAssistant:
			uses := m.ToolUses()
			if len(uses) == 0 {
				continue
			}
			answered := map[string]bool{}
			if i+1 < len(msgs) && msgs[i+1].Role == llm.RoleUser {
				for _, b := range msgs[i+1].Content {
					if b.Type == llm.BlockToolResult {
						answered[b.ToolUseID] = true
					}
				}
			}
			seen := map[string]bool{}
			for _, u := range uses {
				if seen[u.ID] {
					out = append(out, fmt.Sprintf("messages[%d]: tool_use id %s appears twice", i, u.ID))
				}
				seen[u.ID] = true
				if !answered[u.ID] {
					out = append(out, fmt.Sprintf("messages[%d]: tool_use %s (%s) is not answered by a tool_result in the next user message", i, u.ID, u.Name))
				}
			}
		case llm.RoleUser:
			var prev map[string]bool
			if i > 0 && msgs[i-1].Role == llm.RoleAssistant {
				prev = map[string]bool{}
				for _, u := range msgs[i-1].ToolUses() {
					prev[u.ID] = true
				}
			}
			seen := map[string]bool{}
			for _, b := range m.Content {
				if b.Type != llm.BlockToolResult {
					continue
				}
				if seen[b.ToolUseID] {
					out = append(out, fmt.Sprintf("messages[%d]: tool_result %s appears twice", i, b.ToolUseID))
				}
				seen[b.ToolUseID] = true
				if !prev[b.ToolUseID] {
					out = append(out, fmt.Sprintf("messages[%d]: tool_result %s has no tool_use in the immediately preceding assistant message", i, b.ToolUseID))
				}
			}
		}
	}
	return out
}
