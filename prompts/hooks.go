package prompts

import (
	"fmt"
	"strings"
)

// maxHookText bounds each hook text the model reads; hooks are
// configuration, but a runaway script must not flood the context.
const maxHookText = 10000

// hookText joins texts of several hooks, each cut at maxHookText.
func hookText(texts []string) string {
	parts := make([]string, 0, len(texts))
	for _, t := range texts {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		if len(t) > maxHookText {
			t = t[:maxHookText] + "\n[hook output cut at 10000 bytes]"
		}
		parts = append(parts, t)
	}
	return strings.Join(parts, "\n")
}

// HookBlockedCall is the result of a tool call a hook of event (PreToolUse)
// blocked or denied: the hooks' reasons exactly as they gave them (the
// result is marked an error, which says the call did not run), or, when
// no hook gave one, a sentence saying which hook blocked the call.
func HookBlockedCall(event, tool string, reasons []string) string {
	if t := hookText(reasons); t != "" {
		return t
	}
	return fmt.Sprintf("A %s hook blocked this %s call, so it was not run; it gave no reason.", event, tool)
}

// HookStopped is the result of a tool call not run because a hook ended
// the agent's turn (continue: false).
func HookStopped(event, reason string) string {
	if reason = strings.TrimSpace(reason); reason != "" {
		return fmt.Sprintf("A %s hook ended this turn before the call ran: %s", event, reason)
	}
	return fmt.Sprintf("A %s hook ended this turn before the call ran.", event)
}

// HookResultNotes is what hooks of event add after a tool result: the
// feedback of a hook that blocked (the call has already run) and extra
// context. It is "" when there is nothing to add.
func HookResultNotes(event string, feedback, context []string) string {
	var b strings.Builder
	if t := hookText(feedback); t != "" {
		fmt.Fprintf(&b, "\n\n<hook-feedback event=%q>\n%s\n</hook-feedback>", event, t)
	}
	if t := hookText(context); t != "" {
		fmt.Fprintf(&b, "\n\n<hook-context event=%q>\n%s\n</hook-context>", event, t)
	}
	return b.String()
}

// HookContext is the text block hooks of event (UserPromptSubmit,
// SessionStart, SubagentStart) put before a prompt: context the user's
// configuration adds. It is "" when there is none.
func HookContext(event string, context []string) string {
	t := hookText(context)
	if t == "" {
		return ""
	}
	return fmt.Sprintf("<hook-context event=%q>\n%s\n</hook-context>", event, t)
}

// StopHookFeedback is the message that keeps an agent going when a hook of
// event (Stop or SubagentStop) blocked it from stopping.
func StopHookFeedback(event string, reasons []string) string {
	return fmt.Sprintf("A %s hook did not let you stop yet. Continue the task with this feedback in mind:\n%s", event, hookText(reasons))
}

// HookPermissionDenied is what the model reads when a PermissionRequest
// hook denied a call; message is the hook's own, if any.
func HookPermissionDenied(message string) string {
	if message = strings.TrimSpace(message); message != "" {
		return "A PermissionRequest hook denied this call: " + hookText([]string{message})
	}
	return "A PermissionRequest hook denied this call."
}

// HookAskUnanswered is what the model reads when a PreToolUse hook asked
// for confirmation of a call and nobody can be asked.
func HookAskUnanswered(tool, reason string) string {
	if reason = strings.TrimSpace(reason); reason != "" {
		return fmt.Sprintf("The %s call was not run: a PreToolUse hook asks for confirmation (%s), and no one can answer here.", tool, hookText([]string{reason}))
	}
	return fmt.Sprintf("The %s call was not run: a PreToolUse hook asks for confirmation, and no one can answer here.", tool)
}

// ToolInterrupted is the result of a tool call that had not finished when
// the turn ended (cancelled or failed), so that every tool_use still has
// its tool_result.
func ToolInterrupted() string { return "The tool call was interrupted before it finished." }
