package cadre

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// outcomeModel answers in-process: the main agent starts one child per
// planned outcome, and each child's prompt says how it ends.
type outcomeModel struct{ plan []string }

func (m *outcomeModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		first := req.Messages[0].Text()
		done := func(blocks ...llm.Block) {
			yield(llm.Event{Kind: llm.EventDone, Response: &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: blocks},
				Usage: llm.Usage{InputTokens: 1, OutputTokens: 1}}}, nil)
		}
		switch {
		case first == "MAIN" && len(req.Messages) == 1:
			var calls []llm.Block
			for i, o := range m.plan {
				in, _ := json.Marshal(agentInput{Description: "d", Prompt: fmt.Sprintf("%s-%d", o, i), SubagentType: "general-purpose"})
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

// TestGateReleasesOnEveryPath runs 1,000 spawns with random outcomes —
// success, error, panic and cancellation — and checks that every slot was
// released and every spawn accounted for.
func TestGateReleasesOnEveryPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	outcomes := []string{"ok", "err", "panic", "slow"}
	model := &outcomeModel{}
	rt, err := New(Config{Model: model, ModelID: "m", Cwd: t.TempDir(), NoTranscript: true, Tools: []tool.Tool{},
		Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for total < 1000 {
		plan := make([]string, 20)
		slow := false
		for i := range plan {
			plan[i] = outcomes[rng.IntN(len(outcomes))]
			slow = slow || plan[i] == "slow"
		}
		model.plan = plan
		rt.messages = nil
		ctx, cancel := context.WithCancel(context.Background())
		started, ended := 0, 0
		var res *Result
		for ev, err := range rt.Run(ctx, "MAIN") {
			if err != nil {
				break
			}
			switch ev.Type {
			case EventTaskStarted:
				started++
			case EventTaskCompleted:
				ended++
			case EventResult:
				res = ev.Result
			}
			// Once every fast child is done, only slow ones are left:
			// cancel the run to end them.
			if slow && started == len(plan) && ended == countNot(plan, "slow") {
				cancel()
			}
		}
		cancel()
		if !slow && (res == nil || res.Subagents.Spawned != 20 || res.Subagents.Completed+res.Subagents.Failed != 20) {
			t.Fatalf("plan %v: result %+v", plan, res)
		}
		if running, _ := rt.gate.counts(); running != 0 {
			t.Fatalf("after plan %v: %d slots still held", plan, running)
		}
		total += len(plan)
	}
	if running, spawned := rt.gate.counts(); running != 0 || spawned != total {
		t.Fatalf("running %d, spawned %d of %d", running, spawned, total)
	}
}

func countNot(list []string, s string) int {
	n := 0
	for _, v := range list {
		if v != s {
			n++
		}
	}
	return n
}
