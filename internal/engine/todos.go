package engine

import (
	"context"
	"encoding/json"
	"maps"

	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/tool"
)

// todoEvent returns the EventTodos that follows a successful TodoWrite
// call of a, or false for any other loop event.
func (tf taskFeed) todoEvent(ev loop.Event) (run.Event, bool) {
	a := tf.a
	if ev.Kind != loop.ToolEnd || ev.Call == nil || ev.Call.Name != tool.TodoWrite || ev.ToolResult.Output.IsError || a.env == nil {
		return run.Event{}, false
	}
	var in struct {
		Todos []tool.Todo `json:"todos"`
	}
	_ = json.Unmarshal(ev.Call.Input, &in) // the tool accepted it, so it parses
	up := &run.TodoUpdate{ToolUseID: ev.Call.ID, Old: nonNilTodos(a.env.Todos.Previous()), New: nonNilTodos(in.Todos),
		Current: nonNilTodos(a.env.Todos.Items())}
	return run.Event{Type: run.EventTodos, AgentID: a.id, ParentToolUseID: a.toolUseID, Todos: up}, true
}

// sendTodos forwards the todo change ev made, if any, and remembers the
// agent's list for the run's result.
func (tf taskFeed) sendTodos(ctx context.Context, ev loop.Event) error {
	a := tf.a
	out, ok := tf.todoEvent(ev)
	if !ok {
		return nil
	}
	a.run.noteTodos(a.name(), out.Todos.Current)
	if a.id == "" {
		rt := a.run.rt
		rt.mu.Lock()
		rt.todos = out.Todos.Current
		rt.mu.Unlock()
	}
	return a.run.send(ctx, out)
}

// restoreTodos gives the main agent of a new Run the list it left in the
// previous one: a session's todo list lasts as long as its conversation.
func (s *runState) restoreTodos(env *tool.Env) {
	r := s.rt
	r.mu.Lock()
	items := r.todos
	r.mu.Unlock()
	if len(items) > 0 {
		env.Todos.Replace(items)
		s.noteTodos("main", items)
	}
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
