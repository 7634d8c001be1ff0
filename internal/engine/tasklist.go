package engine

import (
	"context"
	"sync"

	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/run"

	"github.com/cadre-dev/cadre/hooks"
	"github.com/cadre-dev/cadre/internal/engine/tasklisttools"
	"github.com/cadre-dev/cadre/internal/tasklist"
	"github.com/cadre-dev/cadre/tool"
)

// The team task list (issue 25 point 4): with Config.Teams, every agent
// gets TaskCreate, TaskGet, TaskList and TaskUpdate over one
// tasklist.Store per session, in the state directory.

// leadName is the name the main agent owns tasks under, as in Claude
// Code's teams.
const leadName = "team-lead"

// taskListBook is the session's task list, opened at its first use.
type taskListBook struct {
	mu    sync.Mutex
	store *tasklist.Store
}

// taskListTools are the task list tools when teams are on, else none.
func (tb toolbox) taskListTools() []tool.Tool {
	if !tb.r.cfg.Teams {
		return nil
	}
	return tasklisttools.Tools(func(_ context.Context, env *tool.Env) tasklisttools.Caller {
		a := agentFrom(env)
		if a == nil {
			return nil
		}
		return taskListCaller{a}
	})
}

// sessionTaskList returns r's team task list, opening it at first use: <StateDir>/tasks/<list id>, the list id Config.TaskListID, else
// the team's (the session's implicit team, "session-" and 8 characters of
// its id). Teammates wait on its Changed and claim with ClaimNext.
func sessionTaskList(r *Runtime) (*tasklist.Store, error) {
	b := &r.tasks
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.store != nil {
		return b.store, nil
	}
	id := r.cfg.TaskListID
	if id == "" {
		id = tasklist.ListID(nil, "", r.session)
	}
	dir, err := tasklist.Dir(r.cfg.StateDir, id)
	if err != nil {
		return nil, err
	}
	s, err := tasklist.Open(dir)
	if err != nil {
		return nil, err
	}
	b.store = s
	if r.cfg.TaskListID != "" {
		// A list named in the environment may be shared with other
		// processes: watch it, so their changes wake teammates here too.
		// Without a watch (inotify unavailable) the list still works;
		// only other processes' changes go unnoticed until the next call.
		if run, err := s.Watch(); err == nil {
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				_ = run(ctx)
			}()
			glueOf(r).onClose(func() error {
				cancel()
				<-done
				return nil
			})
		}
	}
	return s, nil
}

// taskListCaller is an agent calling a task list tool.
type taskListCaller struct{ a *agent }

// TaskList implements tasklisttools.Caller.
func (c taskListCaller) TaskList(context.Context) (*tasklist.Store, error) {
	return sessionTaskList(c.a.run.rt)
}

// Name implements tasklisttools.Caller: "team-lead" for the main agent,
// a sub-agent's id otherwise (a teammate's name once teams name them).
func (c taskListCaller) Name() string {
	if c.a.id == "" {
		return leadName
	}
	if c.a.member != nil {
		return c.a.member.name // team.go
	}
	return c.a.id
}

// Teammate implements tasklisttools.Caller.
func (c taskListCaller) Teammate() bool { return c.a.member != nil }

// TaskAssigned implements tasklisttools.Assigner: a task given to a
// teammate reaches its mailbox as a task_assignment (teamtasks.go).
func (c taskListCaller) TaskAssigned(ctx context.Context, t tasklist.Task, by string) {
	teamTasks{c.a.run.rt.bg}.assigned(ctx, c.a, t, by)
}

// FireTaskHook implements tasklisttools.Caller: the agent's hooks, so
// the input carries its session, cwd and agent id.
func (c taskListCaller) FireTaskHook(ctx context.Context, in *hooks.Input) hooks.Outcome {
	return c.a.hooks.Fire(ctx, in)
}

// sendTeamTasks sends the team's task list after a's TaskCreate or
// TaskUpdate call ev, so a person sees it (the TUI's agents panel). A
// list that cannot be read is not sent: the call's result said why.
func sendTeamTasks(ctx context.Context, a *agent, ev loop.Event) error {
	if ev.Kind != loop.ToolEnd || ev.Call == nil || ev.ToolResult.Output.IsError ||
		(ev.Call.Name != tool.TaskCreate && ev.Call.Name != tool.TaskUpdate) || !a.run.rt.cfg.Teams {
		return nil
	}
	s, err := sessionTaskList(a.run.rt)
	if err != nil {
		return nil
	}
	all, err := s.List(ctx)
	if err != nil {
		return nil
	}
	rows := make([]run.TeamTask, 0, len(all))
	for _, r := range tasklisttools.Summaries(all) {
		rows = append(rows, run.TeamTask{ID: r.ID, Subject: r.Subject, Status: run.TeamTaskStatus(r.Status), Owner: r.Owner, BlockedBy: r.BlockedBy})
	}
	return a.run.send(ctx, run.Event{Type: run.EventTeamTasks, AgentID: a.id, ParentToolUseID: a.toolUseID, TeamTasks: rows})
}
