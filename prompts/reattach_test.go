package prompts

import (
	"strings"
	"testing"
)

func TestReattachTextsGolden(t *testing.T) {
	golden(t, "remote_reattach", strings.Join([]string{
		RemoteReattachFailed("workflow not found for ID: a1"),
		RemoteReattachFailed(RemoteNoReattach()),
	}, "\n"))
}
