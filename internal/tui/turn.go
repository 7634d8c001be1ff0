package tui

import (
	"fmt"
	"time"

	"github.com/cadre-dev/cadre/run"
)

// turn is the main agent's turn in progress, the user's or one that
// answers background tasks' notifications, as the line above the editor
// shows it (a spinner, what the agent is doing, its time and tokens),
// with the prompts queued behind it; and the session's token count.
type turn struct {
	st      *styles
	running bool
	// notifyTurn is set while the running turn answers notifications:
	// stream names its watcher, watchN numbers the watchers started.
	notifyTurn bool
	stream     int
	watchN     int
	runStart   time.Time
	runOutput  int64 // output tokens of the turn's finished answers
	streamed   int   // bytes streamed since the last answer
	queued     []string
	tokens     int64 // every token of the session
}

// begin starts a turn at at.
func (t *turn) begin(at time.Time) {
	t.running, t.runStart, t.runOutput, t.streamed = true, at, 0, 0
}

// count adds an event's tokens: the session's, and the turn's output
// (the streamed text estimated until its answer is complete).
func (t *turn) count(ev run.Event) {
	switch ev.Type {
	case run.EventAssistant:
		t.tokens += ev.Usage.Total()
		if ev.AgentID == "" {
			t.runOutput += ev.Usage.OutputTokens
			t.streamed = 0
		}
	case run.EventText:
		if ev.AgentID == "" {
			t.streamed += len(ev.Text)
		}
	}
}

// queuedLines are the prompts waiting for the turn to end, the first two
// and how many more.
func (t *turn) queuedLines(width int) []string {
	var parts []string
	for i, q := range t.queued {
		if i == 2 {
			parts = append(parts, t.st.dim.Render(fmt.Sprintf("  … and %d more queued", len(t.queued)-2)))
			break
		}
		parts = append(parts, t.st.dim.Render(clip("  ⏎ queued: "+oneLine(q), width)))
	}
	return parts
}
