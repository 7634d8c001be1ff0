package prompts

import "fmt"

// MessageNotKept: a SendMessage whose message the session's mailbox
// journal could not record, so it was not sent (the sender may try
// again).
func MessageNotKept(to string, err error) string {
	return fmt.Sprintf("The message to %s was not sent: cadre could not record it (%v). Try again.", to, err)
}
