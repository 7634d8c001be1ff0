package prompts

import (
	"fmt"
	"strings"
)

// Coordinator is the main agent's system prompt block in coordinator mode
// (S-11.2).
func Coordinator() string {
	return `# Coordinator mode

You are a coordinator. You do not do the work yourself: you have no file, shell or web tools. You plan, delegate to workers and put their results together for the user.

- Start a worker with the Agent tool. Brief it fully: it has not seen this conversation. Say what to do, what is known, and what to report. Start independent workers in one message so they run at the same time.
- Every worker runs in the background. The Agent call returns at once; you are notified in a later message when the worker finishes, with its report. Do not poll and do not guess a result: end your turn when you are waiting.
- To give a worker more instructions or follow-up work, use SendMessage with its agent id. A running worker gets the message at its next step; a finished worker is continued with its whole conversation, so prefer continuing a worker that already has the context over starting a new one.
- Stop a worker that is no longer needed with TaskStop.
- ListAgents lists every worker with its state.
- Answer the user yourself once the workers' reports give you what you need.`
}

// ListAgentsTool describes the ListAgents tool.
const ListAgentsTool = "List the agents of this session: each one's agent id, type, description and state (pending, running, completed, failed, killed), and whether SendMessage can continue it."

// AgentStateEarlier is the state ListAgents shows for an agent of an
// earlier process of the session (its state then is in its transcript).
const AgentStateEarlier = "ended in an earlier run of this session"

// AgentEntry is one line of ListAgents.
type AgentEntry struct {
	ID, Type, Description, State string
	// Parent is the agent that started it ("main" for the main agent).
	Parent     string
	Background bool
	ToolUses   int
	LastTool   string
	// Continuable: SendMessage continues it (it has ended).
	Continuable bool
	// Teammate and Team are a teammate's name and team (issue 25).
	Teammate, Team string
}

// AgentList renders ListAgents' result.
func AgentList(entries []AgentEntry) string {
	if len(entries) == 0 {
		return "No agents have been started in this session."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d agent(s):\n", len(entries))
	for _, e := range entries {
		fmt.Fprintf(&b, "- %s  type: %s  state: %s  description: %q", e.ID, e.Type, e.State, e.Description)
		if e.Teammate != "" {
			fmt.Fprintf(&b, "  teammate: %s (team %s)", e.Teammate, e.Team)
		}
		if e.Parent != "" && e.Parent != "main" {
			fmt.Fprintf(&b, "  parent: %s", e.Parent)
		}
		if e.Background {
			b.WriteString("  (background)")
		}
		if e.ToolUses > 0 {
			fmt.Fprintf(&b, "  tool uses: %d (last: %s)", e.ToolUses, e.LastTool)
		}
		if e.Continuable {
			b.WriteString("  [SendMessage continues it]")
		}
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}
