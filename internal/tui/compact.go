package tui

import (
	"fmt"

	"github.com/cadre-dev/cadre/run"
)

// compactionText is the line an agent's conversation shows for a
// compaction event: where it began, where it happened (with the context
// size before and after), and the warning that it is near.
func compactionText(typ run.EventType, c *run.Compaction) string {
	switch typ {
	case run.EventCompacting:
		return fmt.Sprintf("Compacting the conversation (%s)…", c.Trigger)
	case run.EventContextWarning:
		return fmt.Sprintf("Context at %s tokens; it will be compacted at %s.", thousands(c.PreTokens), thousands(c.Threshold))
	}
	return fmt.Sprintf("── Conversation compacted (%s): %s → %s tokens ──", c.Trigger, thousands(c.PreTokens), thousands(c.PostTokens))
}

// thousands writes n with thousands separators.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return s
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
