package cadre

import (
	"context"
	"encoding/json"
	"maps"

	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/tool"
)

// EventTodos carries Todos: an agent changed its todo list with TodoWrite
// (S-2). Each agent has its own list; AgentID says whose it is. It follows
// the EventToolEnd of the TodoWrite call.
const EventTodos EventType = "todos"

// TodoUpdate is one change of an agent's todo list.
type TodoUpdate struct {
	// ToolUseID is the TodoWrite call that made the change.
	ToolUseID string `json:"tool_use_id"`
	// Old is the list before the call; New the list the call wrote. When
	// every item of New is completed the agent's list is cleared (Current
	// is then empty), as in Claude Code.
	Old     []tool.Todo `json:"oldTodos"`
	New     []tool.Todo `json:"newTodos"`
	Current []tool.Todo `json:"current"`
}

// todoEvent returns the EventTodos that follows a successful TodoWrite
// call of a, or false for any other loop event.
func (a *agent) todoEvent(ev loop.Event) (Event, bool) {
	if ev.Kind != loop.ToolEnd || ev.Call == nil || ev.Call.Name != tool.TodoWrite || ev.ToolResult.Output.IsError || a.env == nil {
		return Event{}, false
	}
	var in struct {
		Todos []tool.Todo `json:"todos"`
	}
	_ = json.Unmarshal(ev.Call.Input, &in) // the tool accepted it, so it parses
	up := &TodoUpdate{ToolUseID: ev.Call.ID, Old: nonNilTodos(a.env.Todos.Previous()), New: nonNilTodos(in.Todos),
		Current: nonNilTodos(a.env.Todos.Items())}
	return Event{Type: EventTodos, AgentID: a.id, ParentToolUseID: a.toolUseID, Todos: up}, true
}

// sendTodos forwards the todo change ev made, if any, and remembers the
// agent's list for the run's result.
func (a *agent) sendTodos(ctx context.Context, ev loop.Event) error {
	out, ok := a.todoEvent(ev)
	if !ok {
		return nil
	}
	a.run.noteTodos(a.name(), out.Todos.Current)
	return a.run.send(ctx, out)
}

// noteTodos records an agent's current list; an empty list is dropped.
func (s *runState) noteTodos(agent string, items []tool.Todo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(items) == 0 {
		delete(s.todos, agent)
		return
	}
	if s.todos == nil {
		s.todos = map[string][]tool.Todo{}
	}
	s.todos[agent] = items
}

// todoLists copies the run's todo lists for the result (nil when none).
func (s *runState) todoLists() map[string][]tool.Todo {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.todos) == 0 {
		return nil
	}
	return maps.Clone(s.todos)
}

func nonNilTodos(t []tool.Todo) []tool.Todo {
	if t == nil {
		return []tool.Todo{}
	}
	return t
}
