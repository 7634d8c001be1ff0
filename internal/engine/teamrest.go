package engine

import (
	"context"
	"slices"

	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/llm"
)

// Requests a teammate does not need (issue 25, the cost of a team in
// BENCHMARKS.md). A teammate's first request carries its prompt and, when
// the team's list has a free task, the task it claimed for itself first
// (firstClaim): it works both from its first turn instead of spending a
// turn on the prompt alone and going idle before it may claim. A
// teammate that rejoins a resumed session idle, with no mail waiting,
// rests before its first request (rejoin): it is woken by mail or a task
// to claim as any idle teammate is, and the lead, which already heard it
// go idle, is not told again. Nothing is dropped: the prompt, the claimed
// task, the note that the session was resumed and the mail that wakes it
// all reach the model in that first request.

// firstClaim adds to a new teammate's prompt the task it claims before its
// first request, if one is free; prompt alone otherwise (and for any
// other agent).
func (tm teammate) firstClaim(ctx context.Context, prompt string) string {
	a := tm.a
	if a.member == nil || a.start != nil || a.resumed != nil {
		return prompt
	}
	blocks, ok := teamTasks{a.run.rt.bg}.claim(ctx, a.member.name)
	if !ok {
		return prompt
	}
	for _, b := range blocks {
		prompt += "\n\n" + b.Text
	}
	return prompt
}

// rejoin lets a teammate that rejoined idle with no mail rest before its
// first request: what wakes it joins msgs' last message (the note that
// the session was resumed). ok false: it ended while it rested (res is
// then its result, nil when ctx ended).
func (tm teammate) rejoin(ctx context.Context, msgs []llm.Message) (next []llm.Message, res *loop.Result, ok bool) {
	a := tm.a
	t, m := a.run.rt.bg.team, a.member
	t.mu.Lock()
	rest := m.rejoinIdle
	m.rejoinIdle = false
	t.mu.Unlock()
	if !rest || len(msgs) == 0 || msgs[len(msgs)-1].Role != llm.RoleUser {
		return msgs, nil, true
	}
	blocks, woken := tm.wait(ctx)
	if !woken {
		if ctx.Err() != nil {
			return nil, nil, false
		}
		// Ended at rest: its result is the answer it rested after.
		res := &loop.Result{Messages: msgs[:len(msgs)-1]}
		for i := len(msgs) - 1; i >= 0; i-- {
			if msgs[i].Role == llm.RoleAssistant {
				res.Text = msgs[i].Text()
				break
			}
		}
		return nil, res, false
	}
	next = slices.Clone(msgs)
	last := next[len(next)-1]
	last.Content = append(slices.Clone(last.Content), blocks...)
	next[len(next)-1] = last
	return next, nil, true
}
