package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/tool"
)

// outcomeModel answers in-process: the main agent starts one child per
// planned outcome, and each child's prompt says how it ends. It counts
// the children whose request is in flight, to check the running cap.
type outcomeModel struct {
	plan []string
	// release holds every child's first request until the test has seen
	// the queue fill.
	release chan struct{}
	// inFlight counts children inside Stream; peak is its maximum.
	inFlight, peak atomic.Int32
}

func (m *outcomeModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		first := req.Messages[0].Text()
		done := func(blocks ...llm.Block) {
			yield(llm.Event{Kind: llm.EventDone, Response: &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: blocks},
				Usage: llm.Usage{InputTokens: 1, OutputTokens: 1}}}, nil)
		}
		if first != "MAIN" {
			select {
			case <-m.release:
			case <-ctx.Done():
			}
			n := m.inFlight.Add(1)
			defer m.inFlight.Add(-1)
			for p := m.peak.Load(); n > p && !m.peak.CompareAndSwap(p, n); p = m.peak.Load() {
			}
		}
		switch {
		case first == "MAIN" && len(req.Messages) == 1:
			var calls []llm.Block
			for i, o := range m.plan {
				in, _ := json.Marshal(agentInput{Description: o, Prompt: fmt.Sprintf("%s-%d", o, i), SubagentType: "general-purpose"})
				calls = append(calls, llm.Block{Type: llm.BlockToolUse, ID: fmt.Sprintf("t%d", i), Name: "Agent", Input: in})
			}
			done(calls...)
		case first == "MAIN":
			done(llm.TextBlock("finished"))
		case strings.HasPrefix(first, "ok"):
			done(llm.TextBlock("fine"))
		case strings.HasPrefix(first, "err"):
			yield(llm.Event{}, &llm.APIError{Status: 500, Message: "scripted failure"})
		case strings.HasPrefix(first, "panic"):
			panic("scripted panic in the model")
		case strings.HasPrefix(first, "slow"):
			<-ctx.Done()
			yield(llm.Event{}, ctx.Err())
		}
	}
}

// TestQueuedSpawnsOnEveryPath drives 1,000 queued spawns through a gate of
// 4 running slots, 25 per main turn: the first 4 children hold their
// slots until the other 21 are pending. Children succeed, fail, panic or hang until cancelled; some runs
// are cancelled at a random moment, with children still queued. It checks
// that the cap is never exceeded, that every queued call shows as pending
// before it starts or is killed, that every finished run accounts for
// each child, and that the gate's counters return to zero after each run.
func TestQueuedSpawnsOnEveryPath(t *testing.T) {
	t.Parallel()
	const maxRunning, perRun = 4, 25
	rng := rand.New(rand.NewPCG(1, 2))
	outcomes := []string{"ok", "err", "panic", "slow"}
	model := &outcomeModel{}
	rt, err := New(Config{Model: model, ModelID: "m", Cwd: t.TempDir(), NoTranscript: true, Tools: []tool.Tool{},
		Limits: Limits{MaxRunning: maxRunning, MaxTotal: 1 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	spawned, pendingSeen := 0, 0
	for runs := 0; pendingSeen < 1000; runs++ {
		if runs == 200 {
			t.Fatalf("only %d pending events in %d runs", pendingSeen, runs)
		}
		plan := make([]string, perRun)
		slow := 0
		for i := range plan {
			plan[i] = outcomes[rng.IntN(len(outcomes))]
			if plan[i] == "slow" {
				slow++
			}
		}
		model.plan = plan
		model.release = make(chan struct{})
		pendingInRun := 0
		rt.messages = nil
		// Some runs are cancelled once this many children have started.
		cancelAt := rng.IntN(2 * perRun)
		ctx, cancel := context.WithCancel(context.Background())
		status := map[string]task.Status{} // by agent id, from the events
		outcome := map[string]string{}     // by agent id
		started, ended, fastRunning := 0, 0, 0
		var res *run.Result
		for ev, err := range rt.Run(ctx, "MAIN") {
			if err != nil {
				break
			}
			switch ev.Type {
			case run.EventTaskPending:
				pendingSeen++
				if status[ev.Task.AgentID] != "" || !ev.Task.Receipt.Queued || ev.Task.Status != task.Pending {
					t.Fatalf("pending event %+v after %q", ev.Task, status[ev.Task.AgentID])
				}
				status[ev.Task.AgentID] = task.Pending
				if pendingInRun++; pendingInRun == perRun-maxRunning {
					close(model.release)
				}
			case run.EventTaskStarted:
				if s := status[ev.Task.AgentID]; s != "" && s != task.Pending {
					t.Fatalf("started after %s", s)
				}
				if status[ev.Task.AgentID] == task.Pending && (!ev.Task.Receipt.Queued || ev.Task.Receipt.QueuePosition == 0) {
					t.Fatalf("a queued child's receipt does not say so: %+v", ev.Task.Receipt)
				}
				status[ev.Task.AgentID] = task.Running
				outcome[ev.Task.AgentID] = ev.Task.Description
				started++
				if ev.Task.Description != "slow" {
					fastRunning++
				}
				// Order in the stream: a child starts only after another
				// has ended and freed its slot. (Once the run is
				// cancelled, killed children end in any order.)
				if ctx.Err() == nil && started-ended > maxRunning {
					t.Fatalf("%d children running at once (cap %d)", started-ended, maxRunning)
				}
			case run.EventTaskCompleted:
				if s := ev.Subagent.Status; !task.CanMove(status[ev.Subagent.AgentID], s) {
					t.Fatalf("%s → %s", status[ev.Subagent.AgentID], s)
				}
				if status[ev.Subagent.AgentID] == task.Running {
					ended++
					if outcome[ev.Subagent.AgentID] != "slow" {
						fastRunning--
					}
				}
				status[ev.Subagent.AgentID] = ev.Subagent.Status
			case run.EventResult:
				res = ev.Result
			}
			// Cancel at the chosen moment, or when only hanging children
			// are left running and nothing else can start.
			if started == cancelAt || (slow > 0 && fastRunning == 0 && (started == perRun || started-ended == maxRunning)) {
				cancel()
			}
		}
		cancel()
		if res == nil {
			t.Fatalf("plan %v: the run yielded no result", plan)
		}
		s := res.Subagents
		switch {
		case !res.IsError && (s.Spawned != perRun || s.Completed+s.Failed != perRun || s.Queued < perRun-maxRunning || len(s.Refused) != 0):
			t.Fatalf("plan %v: stats %+v", plan, s)
		case s.Completed+s.Failed+s.Killed != s.Spawned:
			t.Fatalf("plan %v: cancelled=%v, stats %+v do not add up", plan, res.IsError, s)
		}
		// Every child the stream announced also ended in it, killed ones
		// included.
		for id, st := range status {
			if st != task.Completed && st != task.Failed && st != task.Killed {
				t.Fatalf("plan %v: child %s ended the run %s", plan, id, st)
			}
		}
		if c := rt.gate.Counts(); c.Running != 0 || c.Queued != 0 || c.Resuming != 0 {
			t.Fatalf("after plan %v: gate counts %+v", plan, c)
		}
		spawned += perRun
	}
	if p := model.peak.Load(); p > maxRunning || p == 0 {
		t.Fatalf("%d children had a request in flight at once (cap %d)", p, maxRunning)
	}
}
