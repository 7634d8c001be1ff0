package engine

import (
	"context"

	"github.com/cadre-dev/cadre/run"
)

// The team's mailbox traffic on the run's stream (issue 25, point 10):
// every message a member posts to another — SendMessage between the lead
// and a teammate or between teammates, and a teammate's idle notice to
// the lead — is also an EventTeamMessage, sent once the message is in
// the receiver's mailbox (so never for one refused or taken back). So are
// the notices the team posts itself: a task_assignment to the new owner
// of a task (teamclaim.go), teammate_terminated when a teammate that left
// its shutdown_request unanswered is stopped (teammail.go), and
// tasks_released when a teammate that stopped gave its open tasks back
// (teamclaim.go), each sent as from the teammate it is about.
// stream-json writes it as cadre's system/teammate_message
// (internal/cli/teammsg.go); the Agent SDK's types have none for it.

// announce sends the event of message ev, posted by agent from.
func (tmail teamMail) announce(ctx context.Context, from *agent, ev run.TeamMessage) {
	t := tmail.b.team
	t.mu.Lock()
	ev.Team = t.teamName()
	t.mu.Unlock()
	// An error is ctx's end: the stream is gone.
	_ = from.run.send(ctx, run.Event{Type: run.EventTeamMessage, AgentID: from.id, ParentToolUseID: from.toolUseID, TeamMessage: &ev})
}
