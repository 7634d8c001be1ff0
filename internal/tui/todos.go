package tui

import (
	"fmt"

	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/tool"
)

// An agent's todo list (TodoWrite, cadre.EventTodos) shows in two places:
// the TodoWrite call's result is the list it wrote, as a checklist, and
// while the main agent works the spinner says what it is doing (the
// in-progress item's active form) and how far the list is.

// applyTodos records a TodoWrite change: the call shows the list it
// wrote, the conversation keeps the agent's current list.
func (c *convo) applyTodos(u *run.TodoUpdate) {
	if u == nil {
		return
	}
	c.todos = u.Current
	if it := c.tool(u.ToolUseID); it != nil {
		it.todos = append([]tool.Todo{}, u.New...)
		it.touch()
	}
}

// todoLines renders a todo list as a checklist.
func todoLines(st *styles, todos []tool.Todo, width int) []string {
	if len(todos) == 0 {
		return []string{st.dim.Render("(the list is empty)")}
	}
	lines := make([]string, 0, len(todos))
	for _, t := range todos {
		switch t.Status {
		case tool.TodoCompleted:
			lines = append(lines, st.dim.Render(clip("☒ "+t.Content, width)))
		case tool.TodoInProgress:
			lines = append(lines, st.bold.Render(clip("◼ "+t.Content, width)))
		default:
			lines = append(lines, clip("☐ "+t.Content, width))
		}
	}
	return lines
}

// todoProgress is what the spinner says of the main agent's list: the
// in-progress item's active form, and "n/m done"; both empty without a
// list.
func todoProgress(todos []tool.Todo) (doing, progress string) {
	if len(todos) == 0 {
		return "", ""
	}
	done := 0
	for _, t := range todos {
		switch t.Status {
		case tool.TodoCompleted:
			done++
		case tool.TodoInProgress:
			if doing == "" {
				doing = orText(t.ActiveForm, t.Content)
			}
		}
	}
	return doing, fmt.Sprintf("todos %d/%d", done, len(todos))
}
