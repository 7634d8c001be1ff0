package engine

import (
	"context"
	"strings"

	"github.com/cadre-dev/cadre/hooks"
	"github.com/cadre-dev/cadre/prompts"
)

// What a teammate's life does with the team's task list and its hooks
// (issue 25 points 4, 6 and 9), as functions the teams code calls: an
// idle teammate claims work, a stopped one gives its work back, and the
// TeammateIdle hook may keep a teammate from going idle.

// teammateClaim claims for the idle teammate name the lowest pending,
// unowned, unblocked task of the team's list and returns the instruction
// that starts its next turn; ok is false when no task can be claimed (or
// teams are off).
func teammateClaim(ctx context.Context, r *Runtime, name string) (instruction string, ok bool, err error) {
	if !r.cfg.Teams {
		return "", false, nil
	}
	s, err := sessionTaskList(r)
	if err != nil {
		return "", false, err
	}
	t, ok, err := s.ClaimNext(ctx, name)
	if err != nil || !ok {
		return "", false, err
	}
	return prompts.TaskClaimed(t.ID, t.Subject, t.Description), true, nil
}

// teammateReleased gives back the open tasks of teammate name, which
// stopped: pending and unowned again. It returns what the lead is told,
// "" when the teammate owned no open task.
func teammateReleased(ctx context.Context, r *Runtime, name string) (string, error) {
	if !r.cfg.Teams {
		return "", nil
	}
	s, err := sessionTaskList(r)
	if err != nil {
		return "", err
	}
	tasks, err := s.Release(ctx, name)
	if err != nil || len(tasks) == 0 {
		return "", err
	}
	rows := make([]string, len(tasks))
	for i, t := range tasks {
		rows[i] = "#" + t.ID + " " + t.Subject
	}
	return prompts.TasksReleased(name, rows), nil
}

// teammateIdleHook fires TeammateIdle for teammate a, named name in
// team, as it is about to go idle. keep is true when a hook blocked
// (exit 2): the teammate works on, instruction starting its next turn.
func teammateIdleHook(ctx context.Context, a *agent, name, team string) (keep bool, instruction string) {
	o := a.hooks.Fire(ctx, &hooks.Input{HookEventName: hooks.TeammateIdle, TeammateName: name, TeamName: team})
	if !o.Blocked {
		return false, ""
	}
	return true, prompts.TeammateKeepWorking(strings.Join(o.Feedback, "\n"))
}
