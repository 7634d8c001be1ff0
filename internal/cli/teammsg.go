package cli

import (
	"github.com/google/uuid"

	"github.com/cadre-dev/cadre/run"
)

// teammateMessageJSON is cadre's system/teammate_message: one message of
// an agent team's mailbox traffic (run.EventTeamMessage, issue 25).
// The Agent SDK's message types (0.3.328, for Claude Code 2.1.328) have
// none for a teammate's message, so the subtype is cadre's own; a consumer written for Claude Code ignores it,
// as the SDK asks of subtypes it does not know.
type teammateMessageJSON struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	*run.TeamMessage
	UUID      string `json:"uuid"`
	SessionID string `json:"session_id"`
}

// teamLines is the stream printer's part that writes a team's lines.
type teamLines struct{ p *streamPrinter }

// message writes ev's team message.
func (tl teamLines) message(ev run.Event) error {
	p := tl.p
	if ev.TeamMessage == nil {
		return nil
	}
	return p.write(teammateMessageJSON{Type: "system", Subtype: "teammate_message", TeamMessage: ev.TeamMessage, UUID: uuid.NewString(), SessionID: p.session})
}
