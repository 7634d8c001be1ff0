package cli

import (
	"github.com/google/uuid"

	"github.com/cadre-dev/cadre/run"
)

// Context compaction in stream-json (issue 27), in Claude Code's shapes:
// system/status with status "compacting" while the main agent's
// conversation is summarised, then system/compact_boundary with its
// compact_metadata. A sub-agent's compaction is its own business, as in
// Claude Code: it shows in its transcript, not in the stream.

// statusJSON is system/status.
type statusJSON struct {
	Type    string  `json:"type"`
	Subtype string  `json:"subtype"`
	Status  *string `json:"status"`
	// CompactResult is "success" on the status that ends a compaction.
	CompactResult string `json:"compact_result,omitempty"`
	UUID          string `json:"uuid"`
	// SessionID names the session.
	SessionID string `json:"session_id"`
}

// compactMetadata is a compact_boundary's compact_metadata.
type compactMetadata struct {
	Trigger    string `json:"trigger"`
	PreTokens  int64  `json:"pre_tokens"`
	PostTokens int64  `json:"post_tokens"`
	DurationMS int64  `json:"duration_ms"`
	// CumulativeDroppedTokens is what the compaction took out of the
	// context.
	CumulativeDroppedTokens int64 `json:"cumulative_dropped_tokens"`
}

// compactBoundaryJSON is system/compact_boundary.
type compactBoundaryJSON struct {
	Type            string          `json:"type"`
	Subtype         string          `json:"subtype"`
	CompactMetadata compactMetadata `json:"compact_metadata"`
	// LogicalParentUUID links the boundary to the message before it in
	// Claude Code; cadre's stream has no message chain, so it is null.
	LogicalParentUUID *string `json:"logical_parent_uuid"`
	UUID              string  `json:"uuid"`
	SessionID         string  `json:"session_id"`
}

// printCompaction writes the main agent's compaction events.
func printCompaction(p *streamPrinter, ev run.Event) error {
	if ev.AgentID != "" || ev.Compact == nil {
		return nil
	}
	switch ev.Type {
	case run.EventCompacting:
		status := "compacting"
		return p.write(statusJSON{Type: "system", Subtype: "status", Status: &status, UUID: uuid.NewString(), SessionID: p.session})
	case run.EventCompactBoundary:
		c := ev.Compact
		if err := p.write(compactBoundaryJSON{Type: "system", Subtype: "compact_boundary", UUID: uuid.NewString(), SessionID: p.session,
			CompactMetadata: compactMetadata{Trigger: c.Trigger, PreTokens: c.PreTokens, PostTokens: c.PostTokens, DurationMS: c.Duration.Milliseconds(),
				CumulativeDroppedTokens: max(c.PreTokens-c.PostTokens, 0)}}); err != nil {
			return err
		}
		// The status is over.
		return p.write(statusJSON{Type: "system", Subtype: "status", CompactResult: "success", UUID: uuid.NewString(), SessionID: p.session})
	}
	return nil
}
