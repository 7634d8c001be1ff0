package engine

import (
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/transcript"
)

// A launcher that re-attaches to a remote agent's run skips the messages
// of that run an earlier launcher wrote (the executor's events start from
// the run's first), and only those: earlier runs, closed by a run_end
// entry, and the run's first turn are not events.
func TestWrittenOfRunCountsTheLastRunsEventMessages(t *testing.T) {
	u, a := transcript.Entry{Type: string(llm.RoleUser)}, transcript.Entry{Type: string(llm.RoleAssistant)}
	end := transcript.Entry{Type: transcript.EntryRunEnd}
	for _, c := range []struct {
		name    string
		entries []transcript.Entry
		want    int
	}{
		{"first turn only", []transcript.Entry{u}, 0},
		{"a tool round", []transcript.Entry{u, a, u, a}, 3},
		{"after an ended run", []transcript.Entry{u, a, u, a, end, u, a}, 1},
		{"an ended run only", []transcript.Entry{u, a, end}, 0},
		{"other entries", []transcript.Entry{u, {Type: transcript.EntryCompactBoundary}, a}, 1},
	} {
		if got := writtenOfRun(c.entries); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
