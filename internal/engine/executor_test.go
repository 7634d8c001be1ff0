package engine

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/internal/engine/executor/executortest"
	"github.com/cadre-dev/cadre/internal/engine/hub"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/tool"
	"github.com/cadre-dev/cadre/tool/builtin"
	"github.com/cadre-dev/cadre/transcript"
)

// The local executor passes the executor conformance suite: children
// built by the spawn path (check, ceiling, gate) as an Agent call of the
// main agent builds them, started through Executor.Start.
func TestLocalExecutorConformance(t *testing.T) {
	t.Parallel()
	executortest.Run(t, newLocalHarness)
}

// newLocalHarness is a runtime against a scripted model with a main agent
// standing as the children's parent, as a Run makes one, and a stream that
// takes every event (as a Run's consumer does).
func newLocalHarness(t *testing.T) *executortest.Harness {
	h := newHarness(t)
	boom := tool.Func(tool.FuncConfig{Name: "Boom", Description: "explodes"}, func(context.Context, *tool.Env, boomIn) (tool.Output, error) {
		panic("kaboom")
	})
	cfg := h.config()
	cfg.Tools = append(builtin.Tools(builtin.Config{}), boom)
	cfg.Background = BackgroundOn
	rt := newRuntime(t, cfg)
	x := rt.bg.exec
	x.watch.Store(true)
	if err := rt.bg.open(); err != nil {
		t.Fatal(err)
	}
	rs := &runState{rt: rt, events: make(chan hub.Item, 64), start: rt.cfg.Now(), stats: run.SubagentStats{Refused: map[run.RefusalReason]int{}}}
	rs.journal = transcript.NewJournal()
	rs.holdJournal()
	ctx, cancel := context.WithCancel(context.Background())
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for range rs.events {
		}
	}()
	rt.bg.hub.Attach(ctx, rs.events)
	// Cleanups run last first: the runtime closes (every child ends)
	// before the stream detaches and the journal is released.
	t.Cleanup(func() {
		cancel()
		rt.bg.hub.Detach()
		close(rs.events)
		<-drained
		rs.releaseJournal()
	})
	modelID, system := promptsOf(rt).mainModel()
	main := &agent{run: rs, typ: "main", modelID: modelID, pool: rt.mainPool, spec: rt.mainSpec, perms: glueOf(rt).rootPerms(),
		system: system, inbox: rt.bg.main, env: &tool.Env{Cwd: rt.cfg.Cwd, Files: tool.NewFileState()}}
	hooksOf(main).bind("")
	return &executortest.Harness{
		Executor: x,
		Model:    h.srv,
		Request: func(t *testing.T, c executortest.Child) executor.SpawnRequest {
			t.Helper()
			in := agentInput{Description: c.Description, Prompt: c.Prompt, SubagentType: "general-purpose", RunInBackground: &c.Background}
			child, bg, ref, err := main.build(context.Background(), c.ToolUseID, in)
			if err != nil || ref != nil {
				t.Fatalf("the spawn path refused the child: %v %+v", err, ref)
			}
			if bg != c.Background {
				t.Fatalf("background %v, asked %v", bg, c.Background)
			}
			req, ref := main.enterGate(child, in, bg)
			if ref != nil {
				t.Fatalf("the gate refused the child: %s", ref.msg)
			}
			return req
		},
		Notifications: func(t *testing.T) []task.Notification { return journaledNotes(t, rt.bg.journalPath()) },
		Live:          func(*testing.T) int { return rt.bg.reg.Live() },
		PanicTool:     "Boom",
	}
}

// journaledNotes reads the notifications the session's task journal
// (tasks.jsonl) holds: each is journaled before it is queued for its
// parent, and the harness's root never takes them.
func journaledNotes(t *testing.T, path string) []task.Notification {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read the task journal: %v", err)
	}
	var out []task.Notification
	for line := range strings.Lines(string(raw)) {
		var rec struct {
			Op   string             `json:"op"`
			Note *task.Notification `json:"note"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("task journal line %q: %v", line, err)
		}
		if rec.Op == "notify" && rec.Note != nil {
			out = append(out, *rec.Note)
		}
	}
	return out
}
