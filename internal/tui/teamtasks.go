package tui

import (
	"fmt"

	"github.com/cadre-dev/cadre/run"
)

// The team's shared task list (issue 25) shows in the agents panel,
// below the agents, whenever the team has tasks: one line a task with
// its status mark, id, subject and owner, the open ones first when they
// do not all fit.

// Tasks is the team's task list as the run last sent it (nil when the
// team has none).
func (t *Tree) Tasks() []run.TeamTask { return t.tasks }

// taskLines renders the task list in width, at most limit lines (a title
// and the tasks); none when there are no tasks.
func (p *agentsPanel) taskLines(width, limit int) []string {
	tasks := p.tree.Tasks()
	if len(tasks) == 0 || limit < 2 {
		return nil
	}
	st := p.st
	done := 0
	for _, t := range tasks {
		if t.Status == "completed" {
			done++
		}
	}
	lines := []string{clip(st.title.Render("Tasks")+st.dim.Render(fmt.Sprintf(" · %d/%d done", done, len(tasks))), width)}
	shown := tasks
	if len(tasks) > limit-1 {
		// The open tasks first: they are what is left to do.
		shown = nil
		for _, t := range tasks {
			if t.Status != "completed" {
				shown = append(shown, t)
			}
		}
		for _, t := range tasks {
			if t.Status == "completed" {
				shown = append(shown, t)
			}
		}
		shown = shown[:limit-2]
	}
	for _, t := range shown {
		lines = append(lines, p.taskLine(t, width))
	}
	if len(tasks) > limit-1 {
		lines = append(lines, clip(st.dim.Render(fmt.Sprintf("  … %d more", len(tasks)-len(shown))), width))
	}
	return lines
}

// taskLine is one task: mark, id, subject, then its owner or what blocks
// it.
func (p *agentsPanel) taskLine(t run.TeamTask, width int) string {
	st := p.st
	var mark string
	switch t.Status {
	case "completed":
		mark = "☒"
	case "in_progress":
		mark = "◼"
	default:
		mark = "☐"
	}
	who := t.Owner
	if len(t.BlockedBy) > 0 && t.Status != "completed" {
		who = "blocked by #" + joinIDs(t.BlockedBy)
	}
	text := fmt.Sprintf("%s #%s %s", mark, t.ID, oneLine(t.Subject))
	if who != "" {
		text = padBetween(clip(text, max(width-cellWidth(who)-2, 8)), st.dim.Render(oneLine(who)), width)
	}
	switch t.Status {
	case "completed":
		return clip(st.dim.Render(text), width)
	case "in_progress":
		return clip(st.bold.Render(text), width)
	}
	return clip(text, width)
}

// joinIDs joins task ids as "1, #2".
func joinIDs(ids []string) string {
	out := ""
	for i, id := range ids {
		if i > 0 {
			out += ", #"
		}
		out += id
	}
	return out
}
