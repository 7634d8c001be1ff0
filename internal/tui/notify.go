package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/llm"
)

// Notification is a background task's end as it is delivered to its
// parent (S-7.3): what the UI shows when it arrives. The runtime's event
// for it comes with background tasks (issue 11); until then the view is
// driven by NotificationMsg.
type Notification struct {
	// TaskID is the task (the agent id); ToolUseID the Agent call that
	// started it.
	TaskID    string
	ToolUseID string
	AgentType string
	// Description is the call's short label.
	Description string
	// Status is completed, failed or killed.
	Status string
	// Summary is one line on what happened; Result the child's report.
	Summary string
	Result  string
	Usage   llm.Usage
	// ToolUses counts the child's tool calls; Duration its run time.
	ToolUses int
	Duration time.Duration
	// OutputFile is the child's transcript.
	OutputFile string
}

// NotificationMsg tells the UI a notification was delivered.
type NotificationMsg struct {
	Notification
	At time.Time
}

// applyNotification shows a delivered notification in the main
// conversation and moves the task's agent to its end state.
func (m *Model) applyNotification(n Notification, at time.Time) {
	m.tree.SetStatus(n.TaskID, n.Status, at)
	if node := m.tree.Get(n.TaskID); node != nil {
		node.ToolUses = max(node.ToolUses, n.ToolUses)
		node.Tokens = max(node.Tokens, n.Usage.Total())
	}
	note := n
	m.main().add(&item{kind: itemNotification, note: &note, done: true})
}

func (m *Model) renderNotification(it *item, width int) []string {
	st := m.st
	n := it.note
	status := n.Status
	style := st.ok
	switch status {
	case "failed":
		style = st.errText
	case "killed":
		style = st.warn
	}
	who := strings.TrimSpace(n.AgentType + " " + shortID(n.TaskID))
	head := fmt.Sprintf("Background task %s", who)
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
	line := st.info.Render("◆") + " " + clip(st.bold.Render(head)+" "+style.Render(status), width)
	lines := []string{line}
	detail := n.Summary
	if detail == "" {
		detail = firstLine(n.Result)
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
	if m.expanded && n.Result != "" {
		for _, l := range wrapLines(strings.TrimSpace(n.Result), width-5) {
			lines = append(lines, "     "+st.dim.Render(l))
		}
	}
	if n.OutputFile != "" && m.expanded {
		lines = append(lines, "     "+st.dim.Render("transcript: "+n.OutputFile))
	}
	return lines
}
