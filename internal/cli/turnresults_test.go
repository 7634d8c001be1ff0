package cli

import (
	"bufio"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/run"
)

// notificationScenario scripts a main agent that starts one background
// child and answers; the child works only once the main agent's first
// turn is answering, so its notification runs the main agent again.
func notificationScenario(t *testing.T) (*llmtest.Server, map[string]string) {
	s, env := server(t)
	answering := make(chan struct{})
	var once sync.Once
	s.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
		switch {
		case strings.Contains(allText(r), "<task-notification>"):
			return llmtest.Text("heard 1")
		case len(r.Messages) == 1:
			return llmtest.ToolUses(bgAgentCall(1), llmtest.Call{Name: "Glob", Input: map[string]any{"pattern": "*.none"}})
		}
		once.Do(func() { close(answering) })
		return llmtest.Text("started")
	})
	s.ScriptFunc("BGCHILD-1", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			<-answering
			return llmtest.ToolUse("Glob", map[string]any{"pattern": "*.none"})
		}
		return llmtest.Text("done 1")
	})
	return s, env
}

// usageOf sums the usage the server reported for requests.
func usageOf(reqs []*llmtest.Request) llm.Usage {
	var u llm.Usage
	for _, r := range reqs {
		u = u.Add(r.Usage)
	}
	return u
}

// mainTurns splits the main agent's requests into the prompt's turn and
// the notification's.
func mainTurns(s *llmtest.Server) (first, second []*llmtest.Request) {
	for _, r := range s.RequestsFor("MAIN") {
		if strings.Contains(allText(r), "<task-notification>") {
			second = append(second, r)
		} else {
			first = append(first, r)
		}
	}
	return first, second
}

// TestStreamJSONResultPerTurn: a background child's notification runs the
// main agent again; stream-json writes init before each turn and one
// result per turn, numbered by result_index, the later one with origin
// task-notification; each result's num_turns and usage are its turn's
// (the server's requests of that turn), and its total_usage, modelUsage,
// sub-agent counts are the run's so far; every tool_result block carries
// is_error and every task event the run_id of the task's run; the Agent
// call's tool_use_result is the async launch's object, and
// system/background_tasks_changed gives the live set as it changes.
func TestStreamJSONResultPerTurn(t *testing.T) {
	t.Parallel()
	s, env := notificationScenario(t)
	p := runCadre(t, env, "", "-p", "MAIN go", "--output-format", "stream-json", "--verbose")
	if p.code != 0 {
		t.Fatalf("code %d stderr %s", p.code, p.stderr)
	}
	if testing.Verbose() {
		t.Log(p.stdout)
	}
	var evs []map[string]any
	sc := bufio.NewScanner(strings.NewReader(p.stdout))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		evs = append(evs, ev)
	}
	first, second := mainTurns(s)
	if len(first) != 2 || len(second) != 1 {
		t.Fatalf("main requests: %d before the notification, %d with it\n%s", len(first), len(second), p.stdout)
	}
	turns := [][]*llmtest.Request{first, second}
	// seen sums the usage of every agent's answers the stream showed so
	// far; at the end it must be every request the server answered.
	var seen llm.Usage
	var results []map[string]any
	inits, started, notified, launches := 0, 0, 0, 0
	var levels []int
	var runIDs []string
	for _, ev := range evs {
		switch ev["subtype"] {
		case "init":
			if inits != len(results) {
				t.Fatalf("init %d after %d results\n%s", inits+1, len(results), p.stdout)
			}
			inits++
		case "task_started":
			if len(levels) != 1 || levels[0] != 1 {
				t.Fatalf("task_started after background_tasks_changed %v", levels)
			}
			started++
		case "task_notification":
			notified++
		case "background_tasks_changed":
			// The live set: the child joins before its task_started and
			// leaves after its notification.
			tasks := ev["tasks"].([]any)
			if len(tasks) == 1 {
				e := tasks[0].(map[string]any)
				if e["task_type"] != "local_agent" || e["description"] != "job 1" || e["subagent_type"] != "general-purpose" || e["run_id"] == "" {
					t.Fatalf("background task %v", e)
				}
			} else if notified != 1 {
				t.Fatalf("the child left the live set before its notification: %v", ev)
			}
			levels = append(levels, len(tasks))
		}
		if st, _ := ev["subtype"].(string); strings.HasPrefix(st, "task_") {
			id, _ := ev["run_id"].(string)
			if id == "" {
				t.Fatalf("task event without run_id: %v", ev)
			}
			runIDs = append(runIDs, id)
		}
		if ev["type"] == "user" {
			// Every tool result says whether it failed.
			for _, b := range ev["message"].(map[string]any)["content"].([]any) {
				if blk := b.(map[string]any); blk["type"] == "tool_result" {
					if _, ok := blk["is_error"].(bool); !ok {
						t.Fatalf("tool_result without is_error: %v", ev)
					}
				}
			}
		}
		if r, ok := ev["tool_use_result"].(map[string]any); ok && r["status"] == "async_launched" {
			// The background launch in the Agent SDK's AgentOutput shape.
			if r["isAsync"] != true || r["agentId"] == "" || r["description"] != "job 1" || r["prompt"] != "BGCHILD-1: go" || r["outputFile"] == "" {
				t.Fatalf("async launch result: %v", r)
			}
			launches++
		}
		if ev["type"] == "assistant" {
			var m struct {
				Usage llm.Usage `json:"usage"`
			}
			b, _ := json.Marshal(ev["message"])
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			seen = seen.Add(m.Usage)
		}
		if ev["type"] != "result" {
			continue
		}
		i := len(results)
		results = append(results, ev)
		if ev["result_index"] != float64(i) {
			t.Fatalf("result %d: result_index %v", i, ev["result_index"])
		}
		origin, _ := ev["origin"].(map[string]any)
		if (i == 0) != (origin == nil) || (i > 0 && origin["kind"] != "task-notification") {
			t.Fatalf("result %d: origin %v", i, ev["origin"])
		}
		want := usageOf(turns[i])
		var u llm.Usage
		b, _ := json.Marshal(ev["usage"])
		if err := json.Unmarshal(b, &u); err != nil {
			t.Fatal(err)
		}
		if ev["num_turns"] != float64(len(turns[i])) || u != want {
			t.Fatalf("result %d: num_turns %v usage %v, want %d turns and %+v", i, ev["num_turns"], u, len(turns[i]), want)
		}
		cad := ev["cadre"].(map[string]any)
		var total llm.Usage
		b, _ = json.Marshal(cad["total_usage"])
		if err := json.Unmarshal(b, &total); err != nil {
			t.Fatal(err)
		}
		if total != seen {
			t.Fatalf("result %d: total_usage %+v, the answers so far %+v", i, total, seen)
		}
		sub := cad["subagents"].(map[string]any)
		stats := ev["subagent_stats"].(map[string]any)
		if sub["spawned"] != float64(started) || sub["completed"] != float64(notified) || stats["spawned"] != float64(started) || stats["completed"] != float64(notified) {
			t.Fatalf("result %d after %d started, %d ended: cadre.subagents %v, subagent_stats %v", i, started, notified, sub, stats)
		}
		if cad["total_turns"] != float64(len(first)+i*len(second)) {
			t.Fatalf("result %d: total_turns %v", i, cad["total_turns"])
		}
	}
	if len(results) != 2 || inits != 2 || started != 1 || notified != 1 || launches != 1 || !slices.Equal(levels, []int{1, 0}) {
		t.Fatalf("%d results, %d inits, %d started, %d notified, live sets %v\n%s", len(results), inits, started, notified, levels, p.stdout)
	}
	if all := usageOf(append(append(first, second...), s.RequestsFor("BGCHILD-1")...)); seen != all {
		t.Fatalf("the run's answers used %+v, the server answered %+v", seen, all)
	}
	if results[1]["result"] != "heard 1" || results[0]["result"] != "started" {
		t.Fatalf("results %q, %q", results[0]["result"], results[1]["result"])
	}
	for _, id := range runIDs {
		if id != runIDs[0] {
			t.Fatalf("one run of one task has run ids %v", runIDs)
		}
	}
}

// TestJSONResultAfterNotificationTurn: json writes the run's last result:
// the notification turn's own num_turns and usage, the run's total_usage,
// turns and sub-agents.
func TestJSONResultAfterNotificationTurn(t *testing.T) {
	t.Parallel()
	s, env := notificationScenario(t)
	p := runCadre(t, env, "", "-p", "MAIN go", "--output-format", "json")
	if p.code != 0 {
		t.Fatalf("code %d stderr %s", p.code, p.stderr)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(p.stdout), &res); err != nil {
		t.Fatalf("%v: %s", err, p.stdout)
	}
	first, second := mainTurns(s)
	if len(first) != 2 || len(second) != 1 {
		t.Fatalf("main requests: %d before the notification, %d with it", len(first), len(second))
	}
	all := usageOf(append(append(append([]*llmtest.Request{}, first...), second...), s.RequestsFor("BGCHILD-1")...))
	cad := res["cadre"].(map[string]any)
	total, u := cad["total_usage"].(map[string]any), res["usage"].(map[string]any)
	sub := cad["subagents"].(map[string]any)
	origin, _ := res["origin"].(map[string]any)
	if res["result"] != "heard 1" || res["num_turns"] != 1.0 || cad["total_turns"] != 3.0 || res["result_index"] != 1.0 || origin["kind"] != "task-notification" ||
		u["output_tokens"] != float64(usageOf(second).OutputTokens) || total["output_tokens"] != float64(all.OutputTokens) ||
		total["input_tokens"] != float64(all.InputTokens) || sub["spawned"] != 1.0 || sub["completed"] != 1.0 {
		t.Fatalf("result %s", p.stdout)
	}
}

// TestSDKSessionResultsAreCumulative: in a streaming-input session each
// message is a turn with its own result, numbered by result_index; its
// num_turns and usage are the turn's, while modelUsage, total_cost_usd
// and cadre.total_usage run over the session, as the Agent SDK documents.
func TestSDKSessionResultsAreCumulative(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	s.ScriptFunc("SDKCUM", func(r *llmtest.Request) llmtest.Turn {
		if strings.Contains(r.Messages[len(r.Messages)-1].Text(), "SECOND") {
			return llmtest.Text("second answer")
		}
		return llmtest.Text("first answer")
	})
	p := runCadre(t, env, sdkUser("SDKCUM FIRST")+sdkUser("SDKCUM SECOND"), "--input-format", "stream-json", "--output-format", "stream-json", "--verbose")
	if p.code != 0 {
		t.Fatalf("code %d stderr %s", p.code, p.stderr)
	}
	reqs := s.RequestsFor("SDKCUM")
	var results []map[string]any
	sc := bufio.NewScanner(strings.NewReader(p.stdout))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if ev["type"] == "result" {
			results = append(results, ev)
		}
	}
	if len(results) != 2 || len(reqs) != 2 {
		t.Fatalf("%d results, %d requests\n%s", len(results), len(reqs), p.stdout)
	}
	usage := func(v any) llm.Usage {
		var u llm.Usage
		b, _ := json.Marshal(v)
		if err := json.Unmarshal(b, &u); err != nil {
			t.Fatal(err)
		}
		return u
	}
	var cost float64
	for i, res := range results {
		if res["result_index"] != float64(i) || res["num_turns"] != 1.0 || res["origin"] != nil {
			t.Fatalf("result %d: %v", i, res)
		}
		if u := usage(res["usage"]); u != reqs[i].Usage {
			t.Fatalf("result %d: usage %+v, the turn's request %+v", i, u, reqs[i].Usage)
		}
		want := usageOf(reqs[:i+1])
		if u := usage(res["cadre"].(map[string]any)["total_usage"]); u != want {
			t.Fatalf("result %d: total_usage %+v, want %+v", i, u, want)
		}
		mu := res["modelUsage"].(map[string]any)["claude-sonnet-4-5"].(map[string]any)
		if mu["outputTokens"] != float64(want.OutputTokens) {
			t.Fatalf("result %d: modelUsage %v, want %+v", i, mu, want)
		}
		c := res["total_cost_usd"].(float64)
		if c <= cost {
			t.Fatalf("result %d: total_cost_usd %v after %v", i, c, cost)
		}
		cost = c
	}
}

// TestNotificationTurnDuration: the result of a turn run on notifications
// counts its time from its init, not from when the wait for the
// notifications began (the runtime's duration of the stream); a turn run
// on a prompt keeps the runtime's.
func TestNotificationTurnDuration(t *testing.T) {
	now := time.Unix(1000, 0)
	tl := newTally(func() time.Time { return now }, nil)
	tl.observe(run.Event{Type: run.EventInit, Init: &run.Init{SessionID: "s"}})
	now = now.Add(3 * time.Second)
	if got := tl.result(&run.Result{SessionID: "s", Duration: 3 * time.Second}); got.DurationMS != 3000 || got.ResultIndex != 0 || got.Origin != nil {
		t.Fatalf("prompt turn: %d ms, index %d, origin %v", got.DurationMS, got.ResultIndex, got.Origin)
	}
	now = now.Add(time.Minute) // waiting for the notification
	tl.notificationTurn()
	tl.observe(run.Event{Type: run.EventInit, Init: &run.Init{SessionID: "s"}})
	now = now.Add(2 * time.Second)
	got := tl.result(&run.Result{SessionID: "s", Duration: time.Minute + 2*time.Second})
	if got.DurationMS != 2000 || got.ResultIndex != 1 || got.Origin == nil || got.Origin.Kind != "task-notification" {
		t.Fatalf("notification turn: %d ms, index %d, origin %v", got.DurationMS, got.ResultIndex, got.Origin)
	}
}
