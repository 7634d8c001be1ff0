package engine

import (
	"context"
	"strings"

	"github.com/cadre-dev/cadre/hooks"
	"github.com/cadre-dev/cadre/internal/tasklist"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/prompts"
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
// what the teammate reads; false when there is none.
func (tt teamTasks) claim(ctx context.Context, name string) ([]llm.Block, bool) {
	s := tt.store()
	if s == nil {
		return nil, false
	}
	t, ok, err := s.ClaimNext(ctx, name)
	if err != nil || !ok {
		return nil, false
	}
	return []llm.Block{llm.TextBlock(prompts.TaskClaimed(t.ID, t.Subject, t.Description))}, true
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

// release gives back the open tasks of teammate name and tells the lead
// which.
func (tt teamTasks) release(name string) {
	s := tt.store()
	if s == nil {
		return
	}
	back, err := s.Release(context.WithoutCancel(tt.b.ctx), name)
	if err != nil {
		tt.b.recordFailed("task list", err)
	}
	if len(back) == 0 {
		return
	}
	var ids []string
	for _, t := range back {
		ids = append(ids, "#"+t.ID)
	}
	text := prompts.TeamProtocol("tasks_released", "from", name, "task_ids", ids,
		"message", name+" has stopped; its open tasks "+strings.Join(ids, ", ")+" are pending and unowned again.")
	if _, err := tt.b.main.post(inboxItem{text: prompts.TeammateMessage(name, "", text), from: name}); err != nil {
		tt.b.recordFailed("mailbox journal", err)
	}
}

// assigned puts a task_assignment in the mailbox of the teammate a task
// was given to.
func (tt teamTasks) assigned(t tasklist.Task, by string) {
	team := tt.b.team
	team.mu.Lock()
	m := team.members[t.Owner]
	team.mu.Unlock()
	if m == nil || m.a == nil || m.a.inbox == nil {
		return
	}
	text := prompts.TeamProtocol("task_assignment", "taskId", t.ID, "subject", t.Subject, "description", t.Description, "assignedBy", by)
	if _, err := m.a.inbox.post(inboxItem{text: prompts.TeammateMessage(by, "", text), from: by}); err != nil {
		tt.b.recordFailed("mailbox journal", err)
	}
}

// idleHook fires TeammateIdle for the teammate about to go idle; a hook
// that blocks (exit 2) keeps it working with its feedback as the next
// message.
func (tm teammate) idleHook(ctx context.Context) ([]llm.Block, bool) {
	a := tm.a
	if a.hooks == nil {
		return nil, false
	}
	o := a.hooks.Fire(ctx, &hooks.Input{HookEventName: hooks.TeammateIdle, TeammateName: a.member.name, TeamName: a.member.team})
	if !o.Blocked {
		return nil, false
	}
	return []llm.Block{llm.TextBlock(prompts.TeammateIdleBlocked(strings.Join(o.Feedback, "\n")))}, true
}
