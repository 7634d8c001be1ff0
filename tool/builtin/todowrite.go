package builtin

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/cadre-dev/cadre/tool"
)

//go:embed todowrite.md
var todoWriteDescription string

type todoWriteInput struct {
	Todos []todoItem `json:"todos" jsonschema_description:"The whole new list."`
}

type todoItem struct {
	Content    string `json:"content" jsonschema_description:"Imperative: Run the tests."`
	Status     string `json:"status" jsonschema:"enum=pending,enum=in_progress,enum=completed"`
	ActiveForm string `json:"activeForm" jsonschema_description:"In progress: Running the tests."`
}

// maxTodos bounds the list, so a runaway input cannot grow it without end.
const maxTodos = 200

// NewTodoWrite returns the TodoWrite tool: the agent replaces its own todo
// list (Env.Todos) with a new version. At most one item may be in
// progress; when every item is completed the list is cleared.
func NewTodoWrite(cfg Config) tool.Tool {
	return tool.Func(tool.FuncConfig{Name: tool.TodoWrite, Description: todoWriteDescription},
		func(ctx context.Context, env *tool.Env, in todoWriteInput) (tool.Output, error) {
			return runTodoWrite(env, in), nil
		})
}

func runTodoWrite(env *tool.Env, in todoWriteInput) tool.Output {
	if env == nil || env.Todos == nil {
		return tool.Errorf("this agent has no todo list")
	}
	if in.Todos == nil {
		return tool.Errorf("todos is required: the whole list (an empty array clears it)")
	}
	if len(in.Todos) > maxTodos {
		return tool.Errorf("%d todos is more than the %d a list may hold", len(in.Todos), maxTodos)
	}
	items := make([]tool.Todo, len(in.Todos))
	inProgress, completed := 0, 0
	for i, t := range in.Todos {
		if strings.TrimSpace(t.Content) == "" {
			return tool.Errorf("todo %d: content is empty", i+1)
		}
		if strings.TrimSpace(t.ActiveForm) == "" {
			return tool.Errorf("todo %d (%q): activeForm is empty; give the task as it reads while in progress", i+1, t.Content)
		}
		switch s := tool.TodoStatus(t.Status); s {
		case tool.TodoInProgress:
			inProgress++
		case tool.TodoCompleted:
			completed++
		case tool.TodoPending:
		default:
			return tool.Errorf("todo %d (%q): status %q is not pending, in_progress or completed", i+1, t.Content, t.Status)
		}
		items[i] = tool.Todo{Content: t.Content, Status: tool.TodoStatus(t.Status), ActiveForm: t.ActiveForm}
	}
	if inProgress > 1 {
		return tool.Errorf("%d todos are in_progress; exactly one task is worked on at a time: mark the others pending or completed. The list was not changed.", inProgress)
	}
	if len(items) > 0 && completed == len(items) {
		env.Todos.Replace(nil)
		return tool.Output{Text: fmt.Sprintf("All %s completed; the todo list is now empty.", plural(len(items), "task", "tasks"))}
	}
	env.Todos.Replace(items)
	if len(items) == 0 {
		return tool.Output{Text: "The todo list is now empty."}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Todo list updated (%d of %d completed). Keep it current as you work:\n", completed, len(items))
	for _, t := range items {
		mark := "[ ]"
		switch t.Status {
		case tool.TodoInProgress:
			mark = "[>]"
		case tool.TodoCompleted:
			mark = "[x]"
		}
		fmt.Fprintf(&b, "%s %s\n", mark, t.Content)
	}
	return tool.Output{Text: b.String()}
}
