package spawn

import (
	"errors"
	"fmt"
	"slices"

	"github.com/cadre-dev/cadre/llm"
)

// ForkInput is what a fork's first request is built from (S-6.2).
type ForkInput struct {
	// Parent is the parent's request as its loop sends it: model, system
	// prompt, tools, effort, thinking and answer bound. Its Messages are
	// the parent's conversation up to and including the assistant message
	// whose Agent call starts the fork.
	Parent llm.Request
	// ToolUseID is the fork's own Agent call in that message.
	ToolUseID string
	// Placeholder is the tool result every tool use of that message gets,
	// the fork's own included, so sibling forks stay byte-identical.
	Placeholder string
	// Rules is the fork rules block, the same for every sibling; Directive
	// the fork's own last block.
	Rules, Directive string
}

// BuildFork returns the first request of a fork: the parent's model,
// system prompt bytes, tools (same order, same specs), effort, thinking and
// answer bound; the parent's whole conversation; then one user message with
// a placeholder result for every tool use of the parent's last message,
// the rules block and the directive block. The rules block is a cache hint:
// every fork of one parent turn sends bytes identical up to and including
// it, so one cache entry serves them all and only the directive differs.
// It is pure and changes nothing of the parent's; the inherited messages
// share their content blocks with the parent's, which, like all history,
// are never rewritten.
func BuildFork(in ForkInput) (*llm.Request, error) {
	msgs := in.Parent.Messages
	if len(msgs) == 0 {
		return nil, errors.New("fork: the parent has no conversation")
	}
	last := msgs[len(msgs)-1]
	if last.Role != llm.RoleAssistant {
		return nil, fmt.Errorf("fork: the parent's conversation ends with a %s message, not the assistant message that called Agent", last.Role)
	}
	uses := last.ToolUses()
	if !slices.ContainsFunc(uses, func(b llm.Block) bool { return b.ID == in.ToolUseID }) {
		return nil, fmt.Errorf("fork: tool use %q is not in the parent's last message", in.ToolUseID)
	}
	if in.Placeholder == "" || in.Rules == "" || in.Directive == "" {
		return nil, errors.New("fork: placeholder, rules and directive must not be empty")
	}
	content := make([]llm.Block, 0, len(uses)+2)
	for _, u := range uses {
		content = append(content, llm.ToolResultBlock(u.ID, in.Placeholder, false))
	}
	content = append(content, llm.TextBlock(in.Rules), llm.TextBlock(in.Directive))
	req := in.Parent
	req.Tools = slices.Clone(in.Parent.Tools)
	req.Messages = append(slices.Clip(msgs), llm.Message{Role: llm.RoleUser, Content: content})
	req.CacheHints = []llm.CacheHint{{Message: len(msgs), Block: len(content) - 2}}
	return &req, nil
}
