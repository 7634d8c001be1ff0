package engine

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/tasklist"
	"github.com/cadre-dev/cadre/llm/llmtest"
)

// didTaskRe finds the output of a scripted worker's Bash call.
var didTaskRe = regexp.MustCompile(`did task (\d+)`)

// roleCost is what one role of a run cost, counted from the request log.
type roleCost struct {
	requests                             int
	input, cacheRead, cacheWrite, output int64
}

// add counts r into c.
func (c *roleCost) add(r *llmtest.Request) {
	c.requests++
	c.input += r.Usage.InputTokens
	c.cacheRead += r.Usage.CacheReadTokens
	c.cacheWrite += r.Usage.CacheWriteTokens
	c.output += r.Usage.OutputTokens
}

// costByRole splits the model requests of srv into the coordinator's
// (key coord) and the workers' (every key with prefix workers).
func costByRole(srv *llmtest.Server, coord, workers string) (lead, mates roleCost, other int) {
	for _, r := range srv.Requests() {
		switch {
		case r.Protocol == "":
		case r.Key == coord:
			lead.add(r)
		case strings.HasPrefix(r.Key, workers):
			mates.add(r)
		default:
			other++
		}
	}
	return lead, mates, other
}

// row renders c as a line of the BENCHMARKS.md table.
func (c roleCost) row(setup, role string) string {
	return fmt.Sprintf("| %s | %s | %d | %d | %d | %d | %d | %d |", setup, role, c.requests,
		c.input, c.cacheRead, c.cacheWrite, c.output, c.input+c.cacheRead+c.cacheWrite+c.output)
}

// TestTeamVsBackgroundCost measures the same 16 tasks done (a) by an agent
// team — a lead that creates 16 tasks and starts 8 teammates that claim,
// work (one Bash call each) and complete them — and (b) by a main agent
// that starts 8 background sub-agents doing 2 tasks each (one Bash call
// per task). It logs requests and tokens by role from the llmtest request
// log, and the wall time of each. It runs only with CADRE_TEAMBENCH=1 (it
// is a measurement, reported in BENCHMARKS.md), and checks that the work
// was really done: every task completed once by the teammate that claimed
// it, every child's two Bash calls run.
func TestTeamVsBackgroundCost(t *testing.T) {
	if os.Getenv("CADRE_TEAMBENCH") == "" {
		t.Skip("a measurement: set CADRE_TEAMBENCH=1 to run it")
	}
	const mates, tasks = 8, 16
	var rows []string

	// (a) the team.
	h := newHarness(t)
	var creates, starts []llmtest.Call
	for i := range tasks {
		creates = append(creates, llmtest.Call{Name: "TaskCreate", Input: map[string]any{"subject": fmt.Sprintf("job %02d", i+1), "description": "run the job"}})
	}
	for i := range mates {
		name := fmt.Sprintf("m%02d", i)
		starts = append(starts, teamCall(name, "TB-"+name+"- start"))
	}
	h.srv.ScriptFunc("TBLEAD", func(r *llmtest.Request) llmtest.Turn {
		switch len(r.Messages) {
		case 1:
			return llmtest.ToolUses(creates...)
		case 3:
			return llmtest.ToolUses(starts...)
		}
		return llmtest.Text("lead ok")
	})
	for i := range mates {
		name := fmt.Sprintf("m%02d", i)
		h.srv.ScriptFunc("TB-"+name+"-", func(r *llmtest.Request) llmtest.Turn {
			if res := r.LastToolResults(); len(res) > 0 {
				if m := didTaskRe.FindStringSubmatch(res[0].ResultText()); m != nil {
					return llmtest.ToolUse("TaskUpdate", map[string]any{"taskId": m[1], "status": "completed"})
				}
			}
			if m := claimedRe.FindStringSubmatch(r.LastUserText()); m != nil {
				return llmtest.ToolUse("Bash", map[string]any{"command": "echo did task " + m[1]})
			}
			return llmtest.Text(name + " idle")
		})
	}
	rt := newRuntime(t, teamConfig(h))
	start := time.Now()
	if _, _, err := runAll(t, context.Background(), rt, "TBLEAD go"); err != nil {
		t.Fatal(err)
	}
	drainTeam(t, rt)
	teamWall := time.Since(start)
	s, err := sessionTaskList(rt)
	if err != nil {
		t.Fatal(err)
	}
	all, err := s.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != tasks {
		t.Fatalf("%d tasks", len(all))
	}
	for _, task := range all {
		if task.Status != tasklist.Completed || task.Owner == "" {
			t.Errorf("task %s: %s, owner %q", task.ID, task.Status, task.Owner)
		}
	}
	claims := map[string][]string{}
	kinds := map[string]int{}
	for _, r := range h.srv.Requests() {
		if !strings.HasPrefix(r.Key, "TB-") {
			continue
		}
		// A teammate's first request may carry the task it claimed
		// before it (teamrest.go).
		m := claimedRe.FindStringSubmatch(r.LastUserText())
		if m != nil && len(r.LastToolResults()) == 0 {
			claims[m[1]] = append(claims[m[1]], strings.Trim(strings.TrimPrefix(r.Key, "TB-"), "-"))
		}
		switch {
		case r.Turn == 1 && m != nil:
			kinds["first turn with a claim"]++
		case r.Turn == 1:
			kinds["first turn"]++
		case len(r.LastToolResults()) > 0:
			kinds["after a tool result"]++
		case m != nil:
			kinds["woken by a claim"]++
		default:
			kinds["woken by a message"]++
		}
	}
	for _, task := range all {
		if c := claims[task.ID]; len(c) != 1 || c[0] != task.Owner {
			t.Errorf("task %s owned by %q, claimed by %v", task.ID, task.Owner, c)
		}
	}
	t.Logf("teammates' requests by kind: %v", kinds)
	lead, workers, other := costByRole(h.srv, "TBLEAD", "TB-")
	if other != 0 {
		t.Errorf("%d team requests matched no role", other)
	}
	rows = append(rows, lead.row("team of 8", "lead"), workers.row("team of 8", "8 teammates"))

	// (b) background sub-agents.
	h = newHarness(t)
	var bgs []llmtest.Call
	for i := range mates {
		bgs = append(bgs, llmtest.Call{Name: "Agent", Input: bgCall(fmt.Sprintf("BB-c%02d- do tasks %d and %d", i, 2*i+1, 2*i+2))})
	}
	h.srv.ScriptFunc("BBMAIN", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.ToolUses(bgs...)
		}
		return llmtest.Text("main ok")
	})
	for i := range mates {
		a, b := 2*i+1, 2*i+2
		h.srv.ScriptFunc(fmt.Sprintf("BB-c%02d-", i), func(r *llmtest.Request) llmtest.Turn {
			switch len(r.Messages) {
			case 1:
				return llmtest.ToolUse("Bash", map[string]any{"command": fmt.Sprintf("echo did task %d", a)})
			case 3:
				return llmtest.ToolUse("Bash", map[string]any{"command": fmt.Sprintf("echo did task %d", b)})
			}
			return llmtest.Text(fmt.Sprintf("tasks %d and %d done", a, b))
		})
	}
	rt = newRuntime(t, h.config())
	start = time.Now()
	if _, _, err := runAll(t, context.Background(), rt, "BBMAIN go"); err != nil {
		t.Fatal(err)
	}
	drainTeam(t, rt)
	bgWall := time.Since(start)
	done := map[string]bool{}
	for _, r := range h.srv.Requests() {
		if res := r.LastToolResults(); strings.HasPrefix(r.Key, "BB-") && len(res) > 0 {
			if m := didTaskRe.FindStringSubmatch(res[0].ResultText()); m != nil {
				done[m[1]] = true
			}
		}
	}
	if len(done) != tasks {
		t.Errorf("the children ran %d of %d tasks", len(done), tasks)
	}
	main, children, other := costByRole(h.srv, "BBMAIN", "BB-")
	if other != 0 {
		t.Errorf("%d background requests matched no role", other)
	}
	rows = append(rows, main.row("8 background sub-agents", "main"), children.row("8 background sub-agents", "8 children"))

	t.Logf("\n| setup | role | requests | input (uncached) | cache read | cache write | output | total tokens |\n|---|---|---|---|---|---|---|---|\n%s\nwall time: team %v, background %v",
		strings.Join(rows, "\n"), teamWall.Round(time.Millisecond), bgWall.Round(time.Millisecond))
}
