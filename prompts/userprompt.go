package prompts

import "strings"

// UserDenied is what the model reads when the user denied a call at a
// permission prompt of the terminal UI, with the reason they typed, if
// any. The reason is the user's own words, framed so the model takes it as
// guidance for what to do instead.
func UserDenied(reason string) string {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return "The user denied this call. Do not retry it; ask the user or take another way."
	}
	return "The user denied this call and said what to do instead:\n<user-feedback>\n" + reason + "\n</user-feedback>"
}

// PromptUnanswered is what the model reads when the terminal UI closed
// before anyone answered the call's permission prompt.
func PromptUnanswered() string {
	return "The permission prompt was closed without an answer, so the call was not run."
}
