package engine

import (
	"encoding/json"
	"slices"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/tool"
)

// A team message is sent once per SendMessage call, across a crash
// (issue 25). Its mailbox post carries a key derived from the sender and
// the call's tool_use id (task.Message.Key), kept in the mailbox
// journal: a post made again for the same call keeps nothing. And a
// teammate killed after its post but before its tool result was written
// rejoins (teamresume.go) with that call answered as sent, from the
// journal, instead of "interrupted": it has no reason to send the message
// a second time. So does the lead of a resumed session (leadSentAnswers).

// sendKey is the idempotency key of the post that agent id's SendMessage
// call callID makes.
func sendKey(agentID, callID string) string {
	if agentID == "" {
		agentID = task.Main
	}
	return "send:" + agentID + ":" + callID
}

// sentAnswers rewrites, in msgs (a rejoining teammate's continuation),
// the "interrupted" results of agent id's SendMessage calls whose message
// the mailbox journal holds as posted: they read as sent.
func sentAnswers(msgs []llm.Message, agentID string, mail *task.Mailboxes) []llm.Message {
	n := len(msgs)
	if n < 2 || msgs[n-1].Role != llm.RoleUser || msgs[n-2].Role != llm.RoleAssistant {
		return msgs
	}
	to := map[string]string{} // posted SendMessage calls of the last answer → receiver
	for _, u := range msgs[n-2].ToolUses() {
		if u.Name != tool.SendMessage || !mail.Posted(sendKey(agentID, u.ID)) {
			continue
		}
		var in struct {
			To string `json:"to"`
		}
		_ = json.Unmarshal(u.Input, &in)
		to[u.ID] = in.To
	}
	if len(to) == 0 {
		return msgs
	}
	last := msgs[n-1]
	last.Content = slices.Clone(last.Content)
	for i, b := range last.Content {
		if r, ok := to[b.ToolUseID]; ok && b.Type == llm.BlockToolResult && b.IsError && b.ResultText() == prompts.CallInterrupted() {
			last.Content[i] = llm.ToolResultBlock(b.ToolUseID, prompts.TeamMessageSent(r, ""), false)
		}
	}
	msgs = slices.Clone(msgs)
	msgs[n-1] = last
	return msgs
}

// leadSentAnswers rewrites, in the conversation a resumed session's lead
// starts from, the "interrupted" results of its last answer's
// SendMessage calls whose message the mailbox journal holds as posted
// (the process died between the post and the results): they read as
// sent, as a rejoining teammate's do. Called once the mailbox journal is
// replayed (background.open).
func (tm teamMail) leadSentAnswers() {
	b := tm.b
	r := b.rt
	r.mu.Lock()
	defer r.mu.Unlock()
	r.messages = sentAnswers(r.messages, task.Main, b.mailboxes())
}
