package prompts

import (
	"fmt"
	"strings"
)

// The texts of context compaction (S-1.5): what the agent's own model is
// asked to write when its conversation is summarised, and how the
// summary and what survives it open the new conversation.

// CompactInstructions asks the model for a structured summary of the
// conversation so far; custom are the user's (or PreCompact hooks')
// extra instructions, "" for none.
func CompactInstructions(custom string) string {
	var b strings.Builder
	b.WriteString(`Your conversation is about to be compacted: everything above will be replaced by a summary you write now, and you will carry on the work from that summary alone. Do not call any tools; answer with text only.

Write the summary so that you could pick the work up cold. Be specific: exact file paths, function names, commands, error messages and values matter more than prose. Use these sections, in this order, inside <summary></summary> tags:

1. Request: what was asked, in full, including every constraint and preference stated since.
2. Decisions and facts: what was decided and why, and what was learnt about the code or the system.
3. Files: each file read, created or changed, and why it matters; short code excerpts where they will be needed again.
4. Errors and fixes: what went wrong and how it was resolved, and feedback received.
5. Pending work: what is still to do, including tasks started in the background and their ids.
6. Current state: what was being done at the moment of this summary.
7. Next step: the one next step, in line with the request; quote the latest instruction it follows from.

Before the summary you may think in <analysis></analysis> tags; only the summary is kept.`)
	if c := strings.TrimSpace(custom); c != "" {
		b.WriteString("\n\nAdditional instructions for this summary:\n")
		b.WriteString(c)
	}
	return b.String()
}

// CompactSummary opens the conversation that follows a compaction: the
// summary the model wrote, where the full history is kept (transcript,
// "" when none) and the instruction to carry on.
func CompactSummary(summary, transcript string) string {
	var b strings.Builder
	b.WriteString("This conversation was compacted to fit the context window. What came before is summarised below")
	if transcript != "" {
		fmt.Fprintf(&b, " (the full record is in %s; read it only if a detail the summary lacks is needed)", transcript)
	}
	b.WriteString(".\n\n<summary>\n")
	b.WriteString(strings.TrimSpace(summary))
	b.WriteString("\n</summary>")
	return b.String()
}

// CompactContinue ends the first message after a compaction: carry on
// without asking anything.
func CompactContinue() string {
	return "Continue the work from where it stopped, without asking any questions and without recapping; take the next step."
}

// CompactFile is a file read before the compaction, read again for the
// new conversation; truncated says the content was cut at the cap.
func CompactFile(path, content string, truncated bool) string {
	note := ""
	if truncated {
		note = " (cut short; Read it again for the rest)"
	}
	return fmt.Sprintf("Contents of %s as it is now, read again after compaction%s:\n<file path=%q>\n%s\n</file>", path, note, path, content)
}

// CompactTodo is one item of an agent's todo list as CompactTodos shows it.
type CompactTodo struct {
	Content, Status string
}

// CompactTodos is the agent's todo list kept across a compaction.
func CompactTodos(items []CompactTodo) string {
	var b strings.Builder
	b.WriteString("Your todo list (kept across the compaction; update it with TodoWrite):")
	for _, it := range items {
		fmt.Fprintf(&b, "\n- [%s] %s", it.Status, it.Content)
	}
	return b.String()
}

// CompactTask is one live background task as CompactTasks shows it.
type CompactTask struct {
	ID, Kind, Description, Status string
}

// CompactTasks lists the agent's background tasks still running, with
// the ids its tools take.
func CompactTasks(tasks []CompactTask) string {
	var b strings.Builder
	b.WriteString("Background tasks you started that are still live (their results will arrive as notifications; TaskOutput and TaskStop take these ids):")
	for _, t := range tasks {
		fmt.Fprintf(&b, "\n- %s (%s, %s): %s", t.ID, t.Kind, t.Status, t.Description)
	}
	return b.String()
}

// CompactSkill is a skill invoked before the compaction, kept with its
// instructions.
func CompactSkill(name, body string) string {
	return fmt.Sprintf("The skill %q was invoked before the compaction; its instructions still apply:\n%s", name, body)
}

// CompactPlan is an active plan kept across the compaction.
func CompactPlan(plan string) string {
	return "Your active plan (kept across the compaction):\n" + plan
}

// CompactBlocked is the error of a manual compaction a PreCompact hook
// stopped.
func CompactBlocked(feedback string) string {
	if feedback == "" {
		return "a PreCompact hook stopped the compaction"
	}
	return "a PreCompact hook stopped the compaction: " + feedback
}

// CompactThrashing ends an agent whose context fills up again right after
// each compaction: compacting again would loop.
func CompactThrashing(times, turns int) string {
	return fmt.Sprintf("context compaction is not keeping up: the conversation refilled the context window within %d turns of a compaction %d times in a row; stopping instead of compacting again (shorten the task, or read less at once)", turns, times)
}

// ClearedToolResult replaces the content of an old, large tool result
// cleared to save context (issue 27 point 7): the call stays in the
// conversation, its output is in the agent's transcript (transcript, ""
// when none is kept) and about tokens long.
func ClearedToolResult(transcript string, tokens int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[Old tool result cleared to save context (about %d tokens).", tokens)
	if transcript != "" {
		fmt.Fprintf(&b, " The full output is in the transcript %s;", transcript)
	}
	b.WriteString(" run the tool again if you need it.]")
	return b.String()
}

// ClearedToolResultPrefix is how every ClearedToolResult text starts, so a
// result cleared once is not counted again.
const ClearedToolResultPrefix = "[Old tool result cleared to save context"
