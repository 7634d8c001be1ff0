package tool

import (
	"context"

	"github.com/cadre-dev/cadre/llm"
)

type conversationKey struct{}

// WithConversation returns ctx carrying the calling agent's conversation
// as it stands while its tools run: every message up to and including the
// assistant message that asked for them. The loop sets it; the Agent tool
// reads it to start a fork from the caller's whole context (S-6).
// msgs must not be changed afterwards.
func WithConversation(ctx context.Context, msgs []llm.Message) context.Context {
	return context.WithValue(ctx, conversationKey{}, msgs)
}

// Conversation returns the conversation set by WithConversation, or nil.
// The slice is shared: a caller that changes or appends to it must copy
// it first.
func Conversation(ctx context.Context) []llm.Message {
	msgs, _ := ctx.Value(conversationKey{}).([]llm.Message)
	return msgs
}
