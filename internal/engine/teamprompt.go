package engine

import (
	"context"

	"github.com/cadre-dev/cadre/permission"
)

// A teammate waiting on a permission prompt (issue 25, point 10) is
// "waiting for approval", as one whose plan waits for the lead is: its
// state reads so in the TUI tree and stream-json's task progress while a
// person (the UI, the SDK's can_use_tool) has its prompt, and goes back
// to working once it is answered. The state kept in team.json stays
// working: a teammate killed while asking was mid-turn, and rejoins as
// interrupted.

// teammatePrompter marks its teammate as waiting while next has a
// prompt of its.
type teammatePrompter struct {
	a    *agent
	next permission.Prompter
}

// Prompt implements permission.Prompter.
func (tp teammatePrompter) Prompt(ctx context.Context, pr permission.Prompt) (permission.Reply, error) {
	tm := teammateOf(tp.a)
	tm.asking(ctx, 1)
	defer tm.asking(context.WithoutCancel(ctx), -1)
	return tp.next.Prompt(ctx, pr)
}

// asking counts a prompt of the teammate's in (1) or out (-1) and
// streams its state when what it shows changes.
func (tm teammate) asking(ctx context.Context, d int) {
	a := tm.a
	t, m := a.run.rt.bg.team, a.member
	t.mu.Lock()
	was := m.shown()
	m.prompts += d
	moved := m.shown() != was
	if moved {
		t.wake()
	}
	t.mu.Unlock()
	if moved {
		_ = feedOf(a).sendProgress(ctx)
	}
}

// shown is the state the teammate shows: waiting for approval while a
// prompt of its waits for a person; t.mu is held.
func (m *member) shown() teammateState {
	if m.prompts > 0 {
		return teammateAwaiting
	}
	return m.state
}

// teammatePrompts wraps the session's prompter for agent a when it is a
// teammate; a headless run's (none, or NoPrompter) is left alone: no one
// is waited for.
func teammatePrompts(a *agent, p permission.Prompter) permission.Prompter {
	if a.member == nil || p == nil {
		return p
	}
	if _, none := p.(permission.NoPrompter); none {
		return p
	}
	return teammatePrompter{a: a, next: p}
}
