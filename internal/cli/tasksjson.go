package cli

import (
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/task"
)

// taskJSON is one sub-agent task of the session in the result's
// cadre.tasks: every task, foreground or background, live or ended, in
// the order they started (issue 11 point 4). Claude Code's result has no
// such list, so it lives under cadre's key.
type taskJSON struct {
	TaskID       string `json:"task_id"`
	ToolUseID    string `json:"tool_use_id"`
	SubagentType string `json:"subagent_type"`
	Description  string `json:"description"`
	// Parent is the agent that started it ("main" for the main agent).
	Parent string `json:"parent"`
	Depth  int    `json:"depth"`
	// IsBackgrounded is true when the task ran in the background.
	IsBackgrounded bool `json:"is_backgrounded"`
	// Status is pending, running, completed, failed or killed.
	Status task.Status `json:"status"`
	// Error says why a failed or killed task ended.
	Error string `json:"error,omitempty"`
	// OutputFile is the task's transcript ("" when transcripts are off).
	OutputFile string `json:"output_file"`
	// Usage is task_notification's: tokens, tool calls and time.
	Usage taskUsage `json:"usage"`
	// TokenUsage splits the tokens of an ended task (its own requests and
	// its children's) when the run saw it end.
	TokenUsage *llm.Usage `json:"token_usage,omitempty"`
	LastTool   string     `json:"last_tool,omitempty"`
}

// tasksJSON lists the session's tasks for the result; nil when the tally
// has no task list (a result built without a runtime).
func (t *tally) tasksJSON() []taskJSON {
	if t.taskList == nil {
		return nil
	}
	infos := t.taskList()
	out := make([]taskJSON, 0, len(infos))
	for _, in := range infos {
		j := taskJSON{
			TaskID: in.ID, ToolUseID: in.ToolUseID, SubagentType: in.AgentType, Description: in.Description,
			Parent: in.Parent, Depth: in.Depth, IsBackgrounded: in.Background, Status: in.Status, Error: in.Error,
			OutputFile: in.OutputFile, LastTool: in.Progress.LastTool,
			Usage: taskUsage{TotalTokens: in.Progress.Tokens, ToolUses: in.Progress.ToolUses, DurationMS: in.Progress.Elapsed.Milliseconds()},
		}
		if r := t.results[in.ToolUseID]; r != nil && in.Status.Terminal() {
			u := r.Usage
			j.TokenUsage = &u
		}
		out = append(out, j)
	}
	return out
}

// taskLister is Runtime.Tasks.
type taskLister func() []task.Info

// shareTasks makes t follow sub-agents in session's maps: in an SDK
// session each turn has its own tally (its result counts that turn), and
// a background task outlives the turn that started it, so its later lines
// (progress, notification, their run_id) and the result's task list need
// what earlier turns saw of it; the sub-agent counts, the results'
// numbering and the usage by model (modelUsage, total_cost_usd,
// cadre.total_usage: cumulative across the turns of a streaming-input
// session, as the Agent SDK documents them) are the session's.
func (t *tally) shareTasks(session *tally) {
	t.calls, t.tasks, t.results, t.runs, t.live = session.calls, session.tasks, session.results, session.runs, session.live
	t.stats, t.runtime, t.seq, t.models = session.stats, session.runtime, session.seq, session.models
}
