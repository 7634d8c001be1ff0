package tui

import (
	"fmt"
	"strings"
	"time"

	tasks "github.com/cadre-dev/cadre/task"

	"github.com/cadre-dev/cadre/llm"
)

// Notification is a background task's end as it is delivered to its
// parent (S-7.3, cadre.EventNotification), with what the tree counted of
// the task: what the UI shows when it arrives.
type Notification struct {
	// TaskID is the task (the agent id); ToolUseID the Agent call that
	// started it.
	TaskID    string
	ToolUseID string
	AgentType string
	// Description is the call's short label.
	Description string
	// Status is completed, failed or killed.
	Status tasks.Status
	// Summary is the runtime's one line on what happened; Result the
	// child's report.
	Summary string
	Result  string
	Usage   llm.Usage
	// ToolUses counts the child's tool calls; Duration its run time.
	ToolUses int
	Duration time.Duration
	// OutputFile is the child's transcript.
	OutputFile string
}

// renderNotification renders a delivered notification: who ended how,
// its figures, and (expanded) the report and the transcript's path.
func (p *convoPane) renderNotification(it *item, width int) []string {
	st := p.st
	n := it.note
	status := n.Status
	style := st.ok
	switch status {
	case tasks.Failed:
		style = st.errText
	case tasks.Killed:
		style = st.warn
	}
	who := strings.TrimSpace(n.AgentType + " " + shortID(n.TaskID))
	head := "notification: " + who
	if n.Description != "" {
		head += fmt.Sprintf(" %q", n.Description)
	}
	var stats []string
	if n.ToolUses > 0 {
		stats = append(stats, plural(n.ToolUses, "tool use"))
	}
	if t := n.Usage.Total(); t > 0 {
		stats = append(stats, formatTokens(t)+" tokens")
	}
	if n.Duration > 0 {
		stats = append(stats, formatElapsed(n.Duration))
	}
	// Dim, like the system's other words, so it does not read as the
	// model's or the user's; the status keeps its colour.
	line := st.dim.Render("◆") + " " + clip(st.dim.Render(head)+" "+style.Render(string(status)), width)
	lines := []string{line}
	detail := firstLine(strings.TrimSpace(n.Result))
	if detail == "" {
		detail = n.Summary
	}
	sub := strings.Join(stats, " · ")
	if detail != "" && sub != "" {
		sub = detail + " · " + sub
	} else if detail != "" {
		sub = detail
	}
	if sub != "" {
		lines = append(lines, "  ⎿  "+clip(st.dim.Render(sub), width-5))
	}
	if p.expanded && n.Result != "" {
		for _, l := range wrapLines(strings.TrimSpace(n.Result), width-5) {
			lines = append(lines, "     "+st.dim.Render(l))
		}
	}
	if n.OutputFile != "" && p.expanded {
		lines = append(lines, "     "+st.dim.Render("transcript: "+n.OutputFile))
	}
	return lines
}
