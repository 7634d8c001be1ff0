package tui

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm/anthropic"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
)

// uiLoop stands for Bubble Tea's event loop: it takes what the pump
// queued (as the model's nextEvents command does), applies it with
// Update and renders with View, as the program does after every message,
// and ticks the clock every tickEvery like the spinner. It records how
// long it was busy and, for every event, the time from the pump stamping
// it to the end of the View that first showed it.
type uiLoop struct {
	m         *Model
	busy      time.Duration
	cpu       time.Duration
	latencies []time.Duration
	events    int
	renders   int
}

func (u *uiLoop) step(msg tea.Msg) {
	start := time.Now()
	u.m.Update(msg)
	_ = u.m.View()
	end := time.Now()
	u.busy += end.Sub(start)
	u.renders++
	if em, ok := msg.(eventsMsg); ok {
		for _, it := range em.items {
			u.latencies = append(u.latencies, end.Sub(it.at))
		}
		u.events += len(em.items)
	}
}

// drain runs the loop until the run ends, on one OS thread whose CPU time
// it adds to u.cpu.
func (u *uiLoop) drain(ctx context.Context, q *eventQueue) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if before, ok := threadCPU(); ok {
		defer func() {
			after, _ := threadCPU()
			u.cpu += after - before
		}()
	}
	tick := time.NewTicker(tickEvery)
	defer tick.Stop()
	for {
		select {
		case <-q.ready:
			items := q.take()
			if len(items) == 0 {
				continue
			}
			u.step(eventsMsg{items: items})
			if items[len(items)-1].end {
				return
			}
		case t := <-tick.C:
			u.step(tickMsg{at: t})
		case <-ctx.Done():
			return
		}
	}
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(int(float64(len(s))*p), len(s)-1)]
}

// BenchmarkUIFanout50 runs the real runtime against the scripted model
// with no latency (an instant model): the main agent starts 50
// sub-agents in one message, each reads a file and answers; the UI loop
// shows it all on a 160×48 screen. Reported: the share of one core the
// UI loop's thread used while the run lasted (ui-cpu-%, thread CPU time;
// ui-busy-% is the wall time spent in Update and View, which on a loaded
// machine counts waiting for a core too), and the event-to-screen
// latency.
func BenchmarkUIFanout50(b *testing.B) {
	const n = 50
	srv := llmtest.NewServer()
	b.Cleanup(srv.Close)
	tr := &http.Transport{MaxIdleConnsPerHost: 2 * n}
	b.Cleanup(tr.CloseIdleConnections)
	model, err := anthropic.New(anthropic.Config{APIKey: "k", BaseURL: srv.URL(), HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	file := filepath.Join(dir, "input.txt")
	if err := os.WriteFile(file, []byte("some input\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	script := func() {
		var calls []llmtest.Call
		for i := range n {
			key := fmt.Sprintf("TUI-CHILD-%d:", i)
			calls = append(calls, llmtest.Call{Name: "Agent", Input: map[string]any{
				"subagent_type": "general-purpose", "description": fmt.Sprintf("task %d", i),
				"prompt": key + " read " + file + " and reply."}})
			srv.Script(key, llmtest.ToolUse("Read", map[string]any{"file_path": file}),
				llmtest.Text(fmt.Sprintf("**done %d**: the file holds `some input`.", i)))
		}
		srv.Script("TUI-MAIN", llmtest.ToolUses(calls...), llmtest.Text("All 50 tasks are done:\n\n- every file read\n- nothing failed"))
	}
	var busy, cpu, wall time.Duration
	var lat []time.Duration
	events, renders := 0, 0
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		script()
		rt, err := cadre.New(cadre.Config{Model: model, ModelID: "claude-sonnet-4-5", Cwd: dir, NoTranscript: true, Permissions: cadre.AllowAll(),
			Limits: cadre.Limits{MaxRunning: n}})
		if err != nil {
			b.Fatal(err)
		}
		q := newEventQueue()
		m := newModel(config{cwd: dir, model: "claude-sonnet-4-5", mode: permission.ModeBypassPermissions, altScreen: true, dark: true},
			actions{start: func(string) tea.Cmd { return nil }})
		m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
		typeText(m, "TUI-MAIN: fan out")
		press(m, "enter")
		u := &uiLoop{m: m}
		b.StartTimer()
		start := time.Now()
		done := make(chan struct{})
		go func() { defer close(done); pump(context.Background(), rt, "TUI-MAIN: fan out", q) }()
		u.drain(context.Background(), q)
		<-done
		wall += time.Since(start)
		busy += u.busy
		cpu += u.cpu
		lat = append(lat, u.latencies...)
		events += u.events
		renders += u.renders
		if got := m.tree.Counts()[StateCompleted]; got != n {
			b.Fatalf("%d of %d children completed", got, n)
		}
	}
	b.ReportMetric(100*float64(busy)/float64(wall), "ui-busy-%")
	if cpu > 0 {
		b.ReportMetric(100*float64(cpu)/float64(wall), "ui-cpu-%")
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(max(events, 1)), "ui-cpu-ns/event")
	}
	b.ReportMetric(float64(events)/float64(b.N), "events/run")
	b.ReportMetric(float64(renders)/float64(b.N), "renders/run")
	b.ReportMetric(float64(percentile(lat, 0.5).Microseconds()), "p50-latency-µs")
	b.ReportMetric(float64(percentile(lat, 0.99).Microseconds()), "p99-latency-µs")
	b.ReportMetric(float64(percentile(lat, 1).Microseconds()), "max-latency-µs")
}

// BenchmarkUIUpdateView is the worst case of the loop above: every event
// of a fan-out of 50 arrives alone, so each costs a whole Update and View
// on a 160×48 screen (the tree of 51 agents included).
func BenchmarkUIUpdateView(b *testing.B) {
	const n = 50
	evs := []run.Event{initEvent()}
	for i := range n {
		id := fmt.Sprintf("a%016d", i)
		c := agentCall(fmt.Sprintf("c%d", i), "general-purpose", fmt.Sprintf("task %d", i), "do it")
		evs = append(evs, *c, task(id, "general-purpose", fmt.Sprintf("task %d", i), "main", fmt.Sprintf("c%d", i), 1, "claude-sonnet-4-5"))
	}
	for i := range n {
		id := fmt.Sprintf("a%016d", i)
		r := call("r"+id, "Read", map[string]any{"file_path": "/tmp/input.txt"})
		evs = append(evs,
			run.Event{Type: run.EventAssistant, AgentID: id, Message: assistant("", r), Usage: usage(3000, 40)},
			run.Event{Type: run.EventToolStart, AgentID: id, Call: r},
			run.Event{Type: run.EventToolEnd, AgentID: id, Call: r, ToolResult: &run.ToolResult{Text: "some input"}},
			run.Event{Type: run.EventText, AgentID: id, Text: "**done**"},
			run.Event{Type: run.EventAssistant, AgentID: id, Message: assistant("**done**"), Usage: usage(3100, 10)},
			run.Event{Type: run.EventTaskCompleted, AgentID: id, Subagent: &run.SubagentResult{AgentID: id, Status: "completed", ToolUses: 1}},
		)
	}
	b.ReportAllocs()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var cpu time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		m := newModel(config{cwd: "/w", model: "claude-sonnet-4-5", altScreen: true, dark: true}, actions{start: func(string) tea.Cmd { return nil }})
		m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
		typeText(m, "fan out")
		press(m, "enter")
		at := t0
		b.StartTimer()
		before, _ := threadCPU()
		for _, e := range evs {
			at = at.Add(time.Millisecond)
			m.Update(eventsMsg{items: []runItem{{ev: e, at: at}}})
			_ = m.View()
		}
		after, _ := threadCPU()
		cpu += after - before
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(evs)), "ns/event")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*len(evs)), "cpu-ns/event")
	}
}
