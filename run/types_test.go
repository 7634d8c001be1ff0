package run

import (
	"encoding/json"
	"testing"
)

func TestSubtypeValid(t *testing.T) {
	t.Parallel()
	for _, s := range []Subtype{Success, ErrorMaxTurns, ErrorDuringExecution, ErrorMaxBudget, ErrorMaxStructuredOutputRetries} {
		if !s.Valid() {
			t.Errorf("%q is not valid", s)
		}
	}
	for _, s := range []Subtype{"", "Success", "error", "error_max_budget"} {
		if s.Valid() {
			t.Errorf("%q is valid", s)
		}
	}
}

func TestWorktreeStateValidAndWire(t *testing.T) {
	t.Parallel()
	for _, s := range []WorktreeState{WorktreeRemoved, WorktreeKept, WorktreeHeld} {
		if !s.Valid() {
			t.Errorf("%q is not valid", s)
		}
	}
	for _, s := range []WorktreeState{"", "Kept", "gone"} {
		if s.Valid() {
			t.Errorf("%q is valid", s)
		}
	}
	// The typed state writes the string it always wrote, and reads back.
	b, err := json.Marshal(WorktreeOutcome{Path: "/w", State: WorktreeHeld})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"path":"/w","state":"held"}`; string(b) != want {
		t.Fatalf("got %s, want %s", b, want)
	}
	var back WorktreeOutcome
	if err := json.Unmarshal(b, &back); err != nil || back.State != WorktreeHeld {
		t.Fatalf("read back %+v, %v", back, err)
	}
}
