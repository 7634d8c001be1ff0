// Package tasklisttools holds the team task list tools — TaskCreate,
// TaskGet, TaskList and TaskUpdate (issue 25 point 4) — with Claude Code's
// input fields and outputs, over a tasklist.Store. The TaskCreated and
// TaskCompleted hooks run here: a blocking TaskCreated hook undoes the
// create, a blocking TaskCompleted hook refuses the completion, and the
// model reads the hook's reason either way.
package tasklisttools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/cadre-dev/cadre/hooks"
	"github.com/cadre-dev/cadre/internal/tasklist"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/tool"
)

// Caller is the calling agent's side of the task list tools.
type Caller interface {
	// TaskList is the team's task list.
	TaskList(ctx context.Context) (*tasklist.Store, error)
	// Name is the caller's name in the team: a teammate's name, or
	// "team-lead" for the lead. It owns what the caller claims.
	Name() string
	// Teammate reports whether the caller is a teammate (hooks get its
	// name as teammate_name) rather than the lead.
	Teammate() bool
	// FireTaskHook fires ev (TaskCreated or TaskCompleted) for t with in
	// carrying the task's fields, and returns what the hooks decided.
	FireTaskHook(ctx context.Context, in *hooks.Input) hooks.Outcome
}

// Assigner is a Caller that also tells an agent when a task was given to
// it: TaskUpdate calls TaskAssigned when the owner changed to someone
// other than the caller (Claude Code's task_assignment message to the
// new owner's inbox). The engine's teams implement it.
type Assigner interface {
	TaskAssigned(ctx context.Context, t tasklist.Task, by string)
}

type createInput struct {
	Subject     string         `json:"subject" jsonschema:"description=A brief title for the task, in the imperative."`
	Description string         `json:"description" jsonschema:"description=What needs to be done, and what done means."`
	ActiveForm  string         `json:"activeForm,omitempty" jsonschema:"description=The subject in the present continuous, shown while the task is in progress (for example Running tests)."`
	Metadata    map[string]any `json:"metadata,omitempty" jsonschema:"description=Arbitrary metadata to attach to the task."`
}

type getInput struct {
	TaskID string `json:"taskId" jsonschema:"description=The id of the task."`
}

type listInput struct{}

type updateInput struct {
	TaskID       string          `json:"taskId" jsonschema:"description=The id of the task to update."`
	Subject      *string         `json:"subject,omitempty" jsonschema:"description=A new subject."`
	Description  *string         `json:"description,omitempty" jsonschema:"description=A new description."`
	ActiveForm   *string         `json:"activeForm,omitempty" jsonschema:"description=A new present-continuous form of the subject."`
	Status       tasklist.Status `json:"status,omitempty" jsonschema:"enum=pending,enum=in_progress,enum=completed,enum=deleted,description=The new status; deleted removes the task."`
	AddBlocks    []string        `json:"addBlocks,omitempty" jsonschema:"description=Ids of tasks that cannot start until this one is completed."`
	AddBlockedBy []string        `json:"addBlockedBy,omitempty" jsonschema:"description=Ids of tasks that must be completed before this one can start."`
	Owner        *string         `json:"owner,omitempty" jsonschema:"description=The agent name to assign the task to; an empty string unassigns it."`
	Metadata     map[string]any  `json:"metadata,omitempty" jsonschema:"description=Keys to merge into the task's metadata; a null value deletes its key."`
}

// Tools builds TaskCreate, TaskGet, TaskList and TaskUpdate. caller finds
// the calling agent; nil means the call came from outside a session.
func Tools(caller func(context.Context, *tool.Env) Caller) []tool.Tool {
	open := func(ctx context.Context, env *tool.Env) (Caller, *tasklist.Store, *tool.Output) {
		c := caller(ctx, env)
		if c == nil {
			out := errorOutput(prompts.AgentOutsideSession())
			return nil, nil, &out
		}
		s, err := c.TaskList(ctx)
		if err != nil {
			out := errorOutput(prompts.TaskListUnavailable(err.Error()))
			return nil, nil, &out
		}
		return c, s, nil
	}
	return []tool.Tool{
		tool.Func(tool.FuncConfig{Name: tool.TaskCreate, Description: prompts.TaskCreateTool}, func(ctx context.Context, env *tool.Env, in createInput) (tool.Output, error) {
			c, s, bad := open(ctx, env)
			if bad != nil {
				return *bad, nil
			}
			t, err := s.Create(ctx, tasklist.NewTask{Subject: in.Subject, Description: in.Description, ActiveForm: in.ActiveForm, Metadata: in.Metadata})
			if err != nil {
				return errorOutput(err.Error()), nil
			}
			if o := c.FireTaskHook(ctx, hookInput(c, hooks.TaskCreated, t)); o.Blocked {
				if err := s.Delete(context.WithoutCancel(ctx), t.ID); err != nil && !errors.Is(err, tasklist.ErrNotFound) {
					return errorOutput(err.Error()), nil
				}
				return errorOutput(prompts.TaskHookBlocked(string(hooks.TaskCreated), t.ID, strings.Join(o.Feedback, "\n"))), nil
			}
			out := map[string]any{"id": t.ID, "subject": t.Subject}
			if t.Description != "" {
				out["description"] = t.Description
			}
			return jsonOutput(map[string]any{"task": out}), nil
		}),
		tool.Func(tool.FuncConfig{Name: tool.TaskGet, Description: prompts.TaskGetTool, ReadOnly: true}, func(ctx context.Context, env *tool.Env, in getInput) (tool.Output, error) {
			_, s, bad := open(ctx, env)
			if bad != nil {
				return *bad, nil
			}
			t, err := s.Get(ctx, strings.TrimSpace(in.TaskID))
			if errors.Is(err, tasklist.ErrNotFound) {
				return jsonOutput(map[string]any{"task": nil}), nil
			}
			if err != nil {
				return errorOutput(err.Error()), nil
			}
			return jsonOutput(map[string]any{"task": map[string]any{"id": t.ID, "subject": t.Subject, "description": t.Description,
				"status": t.Status, "blocks": t.Blocks, "blockedBy": t.BlockedBy}}), nil
		}),
		tool.Func(tool.FuncConfig{Name: tool.TaskList, Description: prompts.TaskListTool, ReadOnly: true}, func(ctx context.Context, env *tool.Env, _ listInput) (tool.Output, error) {
			_, s, bad := open(ctx, env)
			if bad != nil {
				return *bad, nil
			}
			all, err := s.List(ctx)
			if err != nil {
				return errorOutput(err.Error()), nil
			}
			return jsonOutput(map[string]any{"tasks": Summaries(all)}), nil
		}),
		tool.Func(tool.FuncConfig{Name: tool.TaskUpdate, Description: prompts.TaskUpdateTool}, func(ctx context.Context, env *tool.Env, in updateInput) (tool.Output, error) {
			c, s, bad := open(ctx, env)
			if bad != nil {
				return *bad, nil
			}
			id := strings.TrimSpace(in.TaskID)
			failed := func(msg string) tool.Output {
				return jsonOutput(map[string]any{"success": false, "taskId": id, "updatedFields": []string{}, "error": msg})
			}
			if in.Status == tasklist.Completed {
				cur, err := s.Get(ctx, id)
				if err != nil {
					return failed(err.Error()), nil
				}
				if cur.Status != tasklist.Completed {
					if o := c.FireTaskHook(ctx, hookInput(c, hooks.TaskCompleted, cur)); o.Blocked {
						return failed(prompts.TaskHookBlocked(string(hooks.TaskCompleted), id, strings.Join(o.Feedback, "\n"))), nil
					}
				}
			}
			res, err := s.Update(ctx, c.Name(), id, tasklist.Update{Subject: in.Subject, Description: in.Description, ActiveForm: in.ActiveForm,
				Owner: in.Owner, Status: in.Status, AddBlocks: in.AddBlocks, AddBlockedBy: in.AddBlockedBy, Metadata: in.Metadata})
			if err != nil {
				return failed(err.Error()), nil
			}
			if as, ok := c.(Assigner); ok && res.OwnerChanged() && res.Task.Owner != c.Name() {
				as.TaskAssigned(ctx, res.Task, c.Name())
			}
			out := map[string]any{"success": true, "taskId": id, "updatedFields": res.UpdatedFields}
			if res.StatusChange != nil {
				out["statusChange"] = res.StatusChange
			}
			return jsonOutput(out), nil
		}),
	}
}

// Summary is one row of TaskList: blockedBy lists open blockers only.
type Summary struct {
	ID        string          `json:"id"`
	Subject   string          `json:"subject"`
	Status    tasklist.Status `json:"status"`
	Owner     string          `json:"owner,omitempty"`
	BlockedBy []string        `json:"blockedBy"`
}

// Summaries are TaskList's rows for every task of all.
func Summaries(all []tasklist.Task) []Summary {
	out := make([]Summary, 0, len(all))
	for _, t := range all {
		out = append(out, Summary{ID: t.ID, Subject: t.Subject, Status: t.Status, Owner: t.Owner, BlockedBy: tasklist.OpenBlockers(t, all)})
	}
	return out
}

// hookInput is the input of task hook ev for t called by c.
func hookInput(c Caller, ev hooks.Event, t tasklist.Task) *hooks.Input {
	in := &hooks.Input{HookEventName: ev, TaskID: t.ID, TaskSubject: t.Subject, TaskDescription: t.Description}
	if c.Teammate() {
		in.TeammateName = c.Name()
	}
	return in
}

func jsonOutput(v any) tool.Output {
	b, err := json.Marshal(v)
	if err != nil {
		return errorOutput(err.Error())
	}
	return tool.Output{Text: string(b)}
}

func errorOutput(msg string) tool.Output { return tool.Output{Text: msg, IsError: true} }
