package prompts

import (
	"fmt"
	"strings"
)

// The query loop's own texts: what the model reads when a tool call could
// not run as asked, and the answer of an agent stopped at its turn limit.

// ToolInputNotJSON is the result of a call whose input is not valid JSON;
// snippet is the start of what the model sent.
func ToolInputNotJSON(tool, snippet string) string {
	return fmt.Sprintf("The input for %s was not valid JSON: %s. Call the tool again with a valid JSON object.", tool, snippet)
}

// NoSuchTool is the result of a call of a tool the agent does not have,
// with the tools it has.
func NoSuchTool(tool string, available []string) string {
	return fmt.Sprintf("No such tool: %s. Available tools: %s.", tool, strings.Join(available, ", "))
}

// ToolDenied is the result of a denied call when the authorizer gave no
// message of its own.
func ToolDenied(tool string) string {
	return "Permission to use " + tool + " was denied."
}

// ToolCrashed is the result of a call whose tool panicked.
func ToolCrashed(tool string, panicked any) string {
	return fmt.Sprintf("The tool %s crashed: %v", tool, panicked)
}

// Tool results that would otherwise be empty (an empty text block is
// invalid).
const (
	ToolFailedSilently = "(the tool failed without a message)"
	ToolNoOutput       = "(no output)"
)

// MaxTurnsReached is the answer of an agent stopped at its turn limit with
// the model still wanting tools.
func MaxTurnsReached(maxTurns int) string {
	return fmt.Sprintf("Stopped after reaching the limit of %d turns before the task was finished. "+
		"Continue with a higher turn limit (--max-turns, or maxTurns in the agent definition) to let it finish.", maxTurns)
}
