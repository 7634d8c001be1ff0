package transcript

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestValidateIDs(t *testing.T) {
	t.Parallel()
	good := []string{"123e4567-e89b-42d3-a456-426614174000", "00000000-0000-0000-0000-000000000000", "ABCDEF01-2345-6789-ABCD-EF0123456789"}
	bad := []string{"", "x", "../../../../tmp/x", "123e4567-e89b-42d3-a456-42661417400", "123e4567-e89b-42d3-a456-4266141740000",
		"123e4567/e89b-42d3-a456-426614174000", "123e4567-e89b-42d3-a456-42661417400g", " 123e4567-e89b-42d3-a456-426614174000",
		// Forms google/uuid parses that a file name should not carry.
		"{123e4567-e89b-42d3-a456-426614174000}", "urn:uuid:123e4567-e89b-42d3-a456-426614174000", "123e4567e89b42d3a456426614174000"}
	for _, id := range good {
		if err := ValidateSessionID(id); err != nil {
			t.Errorf("%q: %v", id, err)
		}
	}
	for _, id := range bad {
		if err := ValidateSessionID(id); !errors.Is(err, ErrBadID) {
			t.Errorf("%q: accepted", id)
		}
		if _, err := SessionFile("/state", "/proj", id); !errors.Is(err, ErrBadID) {
			t.Errorf("SessionFile(%q) accepted", id)
		}
	}
	for _, id := range []string{"a0123456789abcdef", "worker_1", "x-y"} {
		if err := ValidateAgentID(id); err != nil {
			t.Errorf("agent %q: %v", id, err)
		}
	}
	for _, id := range []string{"", "..", "a/b", "a\\b", "a.b", string(make([]byte, 129))} {
		if _, err := AgentFile("/state", "/proj", good[0], id); !errors.Is(err, ErrBadID) {
			t.Errorf("agent %q accepted", id)
		}
	}
	p, err := AgentFile("/state", "/proj", good[0], "a01")
	if err != nil || p != "/state/projects/-proj/"+good[0]+"/agent-a01.jsonl" {
		t.Errorf("AgentFile = %q, %v", p, err)
	}
	if _, err := within("/state", "/state/../etc"); err == nil {
		t.Error("within let /state/../etc through")
	}
}

func TestSessionExists(t *testing.T) {
	t.Parallel()
	state, proj := t.TempDir(), "/home/me/proj"
	id := "123e4567-e89b-42d3-a456-426614174000"
	if _, ok, err := SessionExists(state, proj, id); ok || err != nil {
		t.Fatalf("fresh state: %v %v", ok, err)
	}
	p, _ := SessionFile(state, proj, id)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := SessionExists(state, proj, id); !ok || err != nil || got != p {
		t.Errorf("after a run: %q %v %v", got, ok, err)
	}
	if _, _, err := SessionExists(state, proj, "../x"); !errors.Is(err, ErrBadID) {
		t.Errorf("bad id: %v", err)
	}
}
