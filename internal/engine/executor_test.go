package engine

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/internal/engine/executor/executortest"
	"github.com/cadre-dev/cadre/internal/engine/hub"
	"github.com/cadre-dev/cadre/llm/llmtest"
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
	x := rt.bg.local
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
	modelID, prefix, system := promptsOf(rt).mainModel()
	main := &agent{run: rs, typ: "main", modelID: modelID, pool: rt.mainPool, spec: rt.mainSpec, perms: glueOf(rt).rootPerms(),
		systemPrefix: prefix, system: system, inbox: rt.bg.main, env: &tool.Env{Cwd: rt.cfg.Cwd, Files: tool.NewFileState(), Todos: &tool.TodoList{}}}
	hooksOf(main).bind("")
	return &executortest.Harness{
		Executor: x,
		Model:    h.srv,
		Request: func(t *testing.T, c executortest.Child) executor.SpawnRequest {
			t.Helper()
			in := agentInput{Description: c.Description, Prompt: c.Prompt, SubagentType: "general-purpose", RunInBackground: &c.Background}
			child, bg, ref, err := main.build(context.Background(), tool.Call{ID: c.ToolUseID}, in)
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
	if errors.Is(err, fs.ErrNotExist) {
		return nil // created by its first record (issue 24): none yet
	}
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

// opaqueExecutor is the local executor behind handles the engine cannot
// see into, as a remote executor's are: a sync child's call is then
// reported from its structured result (agent.await) instead of from its
// run's own output.
type opaqueExecutor struct {
	inner  *localExecutor
	starts atomic.Int32
	waits  atomic.Int32
}

type opaqueHandle struct {
	executor.Handle
	x *opaqueExecutor
}

func (x *opaqueExecutor) Start(ctx context.Context, req executor.SpawnRequest) (executor.Handle, error) {
	x.starts.Add(1)
	h, err := x.inner.Start(ctx, req)
	if err != nil {
		return nil, err
	}
	return opaqueHandle{Handle: h, x: x}, nil
}

func (h opaqueHandle) Wait(ctx context.Context) (*run.SubagentResult, error) {
	h.x.waits.Add(1)
	return h.Handle.Wait(ctx)
}

// A sync child started through an executor whose handles are not the
// local childRun gets the same report, and its failure the same failure
// text, from the structured result alone.
func TestSyncChildReportedFromItsResult(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("general-purpose", "CHILD-OK")),
		llmtest.ToolUse("Agent", agentCall("general-purpose", "CHILD-BAD")), llmtest.Text("both reported"))
	h.srv.Script("CHILD-OK", llmtest.Text("the opaque report"))
	h.srv.Script("CHILD-BAD", llmtest.HTTPError(400, "opaque request refused"))
	rt := newRuntime(t, h.config())
	x := &opaqueExecutor{inner: rt.bg.local}
	rt.bg.exec = x
	_, res, err := runAll(t, context.Background(), rt, "MAIN go")
	if err != nil || res == nil || res.Text != "both reported" {
		t.Fatalf("run: %v %+v", err, res)
	}
	if x.starts.Load() != 2 || x.waits.Load() != 2 {
		t.Fatalf("%d starts and %d waits through the executor, want 2 and 2", x.starts.Load(), x.waits.Load())
	}
	reqs := h.srv.RequestsFor("MAIN")
	ok := reqs[1].LastToolResults()
	bad := reqs[2].LastToolResults()
	if len(ok) != 1 || ok[0].IsError || len(bad) != 1 || !bad[0].IsError {
		t.Fatalf("tool results %+v and %+v", ok, bad)
	}
	okText := ok[0].ResultText()
	contains(t, okText, "the opaque report")
	contains(t, okText, "SendMessage") // how to continue it, as the local path says
	contains(t, bad[0].ResultText(), "failed")
	contains(t, bad[0].ResultText(), "opaque request refused")
	if res.Subagents.Completed != 1 || res.Subagents.Failed != 1 {
		t.Fatalf("subagents %+v", res.Subagents)
	}
}

// The request the spawn path builds for a real child is the child: its
// ids, depth, model and ceiling as the child has them; and it survives
// JSON as the test of package executor's fully set one does.
func TestSpawnPathRequest(t *testing.T) {
	t.Parallel()
	h := newLocalHarness(t)
	// The child is stopped at once, but may reach the model before that.
	h.Model.ScriptFunc("REQ-CHILD", func(*llmtest.Request) llmtest.Turn { return llmtest.Text("looked") })
	for _, bg := range []bool{false, true} {
		req := h.Request(t, executortest.Child{Prompt: "REQ-CHILD look", Description: "look", Background: bg, ToolUseID: "toolu_req"})
		x := h.Executor.(*localExecutor)
		x.mu.Lock()
		p := x.prepared[req.AgentID]
		x.mu.Unlock()
		c := p.child
		if c == nil || req.AgentID != c.id || req.ParentID != "main" || req.ToolUseID != "toolu_req" || req.Depth != 1 || req.Background != bg ||
			req.RootID == "" || req.Description != "look" || req.Prompt != "REQ-CHILD look" {
			t.Fatalf("request %+v", req)
		}
		if req.Definition.Name != "general-purpose" || req.Model.ID != c.modelID || req.Model.Rule == "" || req.Mode != c.perms.Mode ||
			req.Cwd != c.env.Cwd || req.Definition.System != c.system || req.Definition.SystemPrefix != c.systemPrefix || req.Definition.SystemPrefix == "" {
			t.Fatalf("definition, model or place: %+v", req)
		}
		if !slices.Equal(req.Ceiling.Tools, c.pool.Names()) || !slices.Equal(req.Receipt.Tools, c.pool.Names()) {
			t.Fatalf("ceiling tools %v, receipt %v, the child's pool %v", req.Ceiling.Tools, req.Receipt.Tools, c.pool.Names())
		}
		b, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		var back executor.SpawnRequest
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		b2, err := json.Marshal(back)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != string(b2) || !reflect.DeepEqual(req, back) {
			t.Fatalf("the request changed in a JSON round trip:\n%s\n%s\n%+v\n%+v", b, b2, req, back)
		}
		// Started, so that nothing is left prepared and the slot is freed.
		hd, err := h.Executor.Start(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if err := hd.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}
