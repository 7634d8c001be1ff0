package prompts

import (
	"fmt"
	"strings"
)

// ToolSearchTool describes the ToolSearch tool (issue 24: deferred tools).
const ToolSearchTool = "Loads deferred tools (named in the system prompt) for your next message."

// ToolSearchQueryField is the schema description of ToolSearch's query.
const ToolSearchQueryField = `"select:A,B" or keywords.`

// ToolSearchMaxField is the schema description of ToolSearch's max_results.
const ToolSearchMaxField = "Default 5."

// DeferredTools is the system prompt block naming an agent's deferred
// tools ("" for none). more marks a second block that adds to a first.
func DeferredTools(names []string, more bool) string {
	if len(names) == 0 {
		return ""
	}
	if more {
		return "Also deferred: " + strings.Join(names, ", ") + "."
	}
	return "Deferred tools (load with ToolSearch before use): " + strings.Join(names, ", ") + "."
}

// ToolSearchLoaded is ToolSearch's result for the tools it loaded.
func ToolSearchLoaded(names []string) string {
	return fmt.Sprintf("Loaded %s: call from your next message on.", strings.Join(names, ", "))
}

// ToolSearchNone is ToolSearch's result when nothing matched query;
// names are the agent's deferred tools.
func ToolSearchNone(query string, names []string) string {
	if len(names) == 0 {
		return fmt.Sprintf("No deferred tool matches %q: you have none.", query)
	}
	return fmt.Sprintf("No deferred tool matches %q. Deferred tools: %s.", query, strings.Join(names, ", "))
}
