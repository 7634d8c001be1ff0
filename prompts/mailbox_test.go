package prompts

import (
	"errors"
	"testing"
)

func TestMailboxTextsGolden(t *testing.T) {
	golden(t, "message_not_kept", MessageNotKept("a1", errors.New("mailbox journal /s/mailbox.jsonl: no space left on device")))
}
