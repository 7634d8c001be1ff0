package prompts

import (
	"strings"
	"testing"
)

// A hook's deny reason reaches the model exactly as the hook gave it; only
// a block without any reason gets a sentence of ours.
func TestHookBlockedCallGivesTheReasonAsIs(t *testing.T) {
	if got := HookBlockedCall("PreToolUse", "Bash", []string{"DENYME is not allowed here"}); got != "DENYME is not allowed here" {
		t.Errorf("one reason: %q", got)
	}
	if got := HookBlockedCall("PreToolUse", "Bash", []string{"first\n", "", "second"}); got != "first\nsecond" {
		t.Errorf("two reasons: %q", got)
	}
	if got := HookBlockedCall("PreToolUse", "Bash", []string{" "}); !strings.Contains(got, "PreToolUse hook blocked this Bash call") {
		t.Errorf("no reason: %q", got)
	}
}
