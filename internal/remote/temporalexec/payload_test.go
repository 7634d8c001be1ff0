package temporalexec

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/engine/executor/executortest"
	"github.com/cadre-dev/cadre/internal/remote/agentwf"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/tool"
)

type hugeIn struct {
	Bytes int `json:"bytes"`
}

// hugeTool returns as many bytes as it is asked for: a tool result far
// over what one Temporal payload carries.
func hugeTool() tool.Tool {
	return tool.Func(tool.FuncConfig{Name: "Huge", Description: "prints a lot"}, func(_ context.Context, _ *tool.Env, in hugeIn) (tool.Output, error) {
		return tool.Output{Text: "HUGE-START" + strings.Repeat("h", in.Bytes)}, nil
	})
}

// startHuge starts a worker whose model is srv and an executor for it.
func startHuge(t *testing.T, srv *llmtest.Server) *Executor {
	t.Helper()
	c := dial(t)
	q := queue(t)
	workerFor(t, c, q, srv)
	x, err := New(Config{Client: c, TaskQueue: q})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x.Close)
	return x
}

// A tool result of 3 MB is cut on the worker to what travels (with a note
// saying how much there was), and the agent goes on to its end.
func TestBigToolResultIsCutToFitThePayloads(t *testing.T) {
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	srv.Script("BIGRESULT", llmtest.ToolUse("Huge", map[string]any{"bytes": 3 << 20}), llmtest.Text("FIT-DONE"))
	x := startHuge(t, srv)
	req := request(t.TempDir(), executortest.Child{Prompt: "BIGRESULT print a lot", Description: "big", ToolUseID: "toolu_big", Background: true},
		fmt.Sprintf("big%d-%d", os.Getpid(), agents.Add(1)))
	req.Ceiling.Tools = append(req.Ceiling.Tools, "Huge")
	h, err := x.Start(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != task.Completed || res.Text != "FIT-DONE" {
		t.Fatalf("result %+v", res)
	}
	reqs := srv.RequestsFor("BIGRESULT")
	if len(reqs) != 2 {
		t.Fatalf("%d model requests", len(reqs))
	}
	got := reqs[1].LastToolResults()
	if len(got) != 1 {
		t.Fatalf("tool results %d", len(got))
	}
	text := got[0].ResultText()
	if !strings.HasPrefix(text, "HUGE-START") || len(text) > agentwf.MaxResultBytes+1000 || !strings.Contains(text, fmt.Sprintf("of %d bytes are shown", 3<<20+len("HUGE-START"))) {
		t.Fatalf("the model read a result of %d bytes ending %q", len(text), text[max(len(text)-300, 0):])
	}
}

// A conversation that grows past one payload ends the agent with an error
// naming the limit, and its result still comes back (without its
// conversation, which would not fit), instead of a workflow that retries
// for ever.
func TestConversationOverThePayloadLimitFailsNamingIt(t *testing.T) {
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	var turns []llmtest.Turn
	for range 8 {
		turns = append(turns, llmtest.ToolUse("Huge", map[string]any{"bytes": 300_000}))
	}
	srv.Script("OVERLIMIT", turns...)
	x := startHuge(t, srv)
	prompt := "OVERLIMIT " + strings.Repeat("p", 1_500_000)
	req := request(t.TempDir(), executortest.Child{Prompt: prompt, Description: "over", ToolUseID: "toolu_over", Background: true},
		fmt.Sprintf("over%d-%d", os.Getpid(), agents.Add(1)))
	req.Ceiling.Tools = append(req.Ceiling.Tools, "Huge")
	h, err := x.Start(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != task.Failed || !strings.Contains(res.Error, "Temporal payload") || !strings.Contains(res.Error, fmt.Sprint(agentwf.PayloadLimit)) {
		t.Fatalf("result %s: %s", res.Status, res.Error)
	}
	n := len(srv.RequestsFor("OVERLIMIT"))
	if n < 2 || n > 7 {
		t.Fatalf("%d model requests before the limit", n)
	}
	var tools int
	for ev, err := range h.Events() {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == run.EventToolEnd {
			tools++
		}
	}
	if tools != n {
		t.Fatalf("%d tool ends for %d model calls", tools, n)
	}
}
