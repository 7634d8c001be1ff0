package engine

import (
	"context"

	"github.com/cadre-dev/cadre/internal/tasklist"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
)

// teamTasks joins the team to its shared task list (issue 25 point 4, the
// store is tasklist's): an idle teammate claims the lowest pending,
// unowned, unblocked task; a task given to a teammate reaches its
// mailbox; a teammate that ends gives its open tasks back.
type teamTasks struct{ b *background }

// store is the session's task list; nil when it cannot be opened.
func (tt teamTasks) store() *tasklist.Store {
	s, err := sessionTaskList(tt.b.rt)
	if err != nil {
		tt.b.recordFailed("task list", err)
		return nil
	}
	return s
}

// changed is the task list's change channel (nil: never).
func (tt teamTasks) changed() <-chan struct{} {
	if s := tt.store(); s != nil {
		return s.Changed()
	}
	return nil
}

// claim claims the next claimable task for teammate name and returns
// what the teammate reads (tasklist's teammateClaim); false when there is
// none.
func (tt teamTasks) claim(ctx context.Context, name string) ([]llm.Block, bool) {
	text, ok, err := teammateClaim(ctx, tt.b.rt, name)
	if err != nil {
		tt.b.recordFailed("task list", err)
	}
	if !ok {
		return nil, false
	}
	return []llm.Block{llm.TextBlock(text)}, true
}

// claimable reports whether a teammate would find a task to claim.
func (tt teamTasks) claimable(ctx context.Context) bool {
	s := tt.store()
	if s == nil {
		return false
	}
	ok, err := s.HasClaimable(ctx)
	return err == nil && ok
}

// release gives back the open tasks of teammate a (tasklist's
// teammateReleased) and tells the lead which.
func (tt teamTasks) release(a *agent) {
	name := a.member.name
	text, err := teammateReleased(context.WithoutCancel(tt.b.ctx), tt.b.rt, name)
	if err != nil {
		tt.b.recordFailed("task list", err)
	}
	if text == "" {
		return
	}
	if _, err := tt.b.main.post(inboxItem{text: prompts.TeammateMessage(name, "", text), from: name}); err != nil {
		tt.b.recordFailed("mailbox journal", err)
		return
	}
	// teammsg.go
	teamMail(tt).announce(tt.b.ctx, a, run.TeamMessage{From: name, To: prompts.TeamLead, FromAgentID: a.id, Type: "tasks_released", Text: text})
}

// assigned puts a task_assignment in the mailbox of the teammate a task
// was given to by agent from, named by.
func (tt teamTasks) assigned(ctx context.Context, from *agent, t tasklist.Task, by string) {
	team := tt.b.team
	team.mu.Lock()
	m := team.members[t.Owner]
	team.mu.Unlock()
	if m == nil || m.a == nil || m.a.inbox == nil {
		return
	}
	text := prompts.TeamProtocol("task_assignment", "taskId", t.ID, "subject", t.Subject, "description", t.Description, "assignedBy", by)
	out, err := m.a.inbox.post(inboxItem{text: prompts.TeammateMessage(by, "", text), from: by})
	if err != nil {
		tt.b.recordFailed("mailbox journal", err)
		return
	}
	if out.Delivery == task.Refused || out.Delivery == task.Duplicate {
		return
	}
	// teammsg.go
	teamMail(tt).announce(ctx, from, run.TeamMessage{From: by, To: m.name, FromAgentID: from.id, ToAgentID: m.a.id, Type: "task_assignment", Text: text})
}

// idleHook fires TeammateIdle for the teammate about to go idle
// (tasklist's teammateIdleHook); a hook that blocks (exit 2) keeps it
// working with its feedback as the next message.
func (tm teammate) idleHook(ctx context.Context) ([]llm.Block, bool) {
	a := tm.a
	if a.hooks == nil {
		return nil, false
	}
	keep, text := teammateIdleHook(ctx, a, a.member.name, a.member.team)
	if !keep {
		return nil, false
	}
	return []llm.Block{llm.TextBlock(text)}, true
}
