package prompts

import (
	"strings"
	"testing"
)

func TestCoordinatorTextsGolden(t *testing.T) {
	golden(t, "coordinator", Coordinator())
	golden(t, "list_agents", strings.Join([]string{ListAgentsTool, AgentList(nil), AgentList([]AgentEntry{
		{ID: "a1", Type: "general-purpose", Description: "fix the parser", State: "running", Parent: "main", Background: true, ToolUses: 3, LastTool: "Edit"},
		{ID: "a2", Type: "Explore", Description: "find uses", State: "completed", Parent: "main"},
		{ID: "a3", Type: "worker", Description: "write tests", State: "completed", Parent: "a1", Background: true, Continuable: true},
		{ID: "a4", Type: "worker", Description: "old job", State: AgentStateEarlier, Parent: "main", Background: true, Continuable: true},
	})}, "\n---\n"))
}
