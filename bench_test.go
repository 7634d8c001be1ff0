package cadre_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/anthropic"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/run"
)

// The benchmark scenario is the one of the neutral harness peerbench: the
// main agent asks for N sub-agents in one message; child i reads one file
// with Read and answers "done i"; the main agent then answers. A run makes
// exactly 2 + 2N model requests.
const (
	benchMain  = "BENCH-MAIN"
	benchChild = "BENCH-CHILD-"
)

// benchPrompt is the main agent's prompt for fan-out n.
func benchPrompt(n int) string {
	return fmt.Sprintf("%s-FANOUT-%d: use your sub-agent tool to run %d tiny tasks in parallel, one sub-agent each, then report.", benchMain, n, n)
}

// childTask is the Agent call input for child i.
func childTask(i int, file string) map[string]any {
	return map[string]any{
		"description":   fmt.Sprintf("bench task %d", i),
		"prompt":        fmt.Sprintf("%s%d: read the file %s with your read tool, then reply exactly 'done %d'.", benchChild, i, file, i),
		"subagent_type": "general-purpose",
	}
}

// childIndex returns i when the first user text names BENCH-CHILD-i.
func childIndex(first string) (int, bool) {
	at := strings.Index(first, benchChild)
	if at < 0 {
		return 0, false
	}
	rest := first[at+len(benchChild):]
	end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(rest)
	}
	i, err := strconv.Atoi(rest[:end])
	return i, err == nil
}

// firstUserText is the text of the first user message of msgs.
func firstUserText(msgs []llm.Message) string {
	if len(msgs) == 0 {
		return ""
	}
	return msgs[0].Text()
}

// hasToolResults reports whether the last message carries tool results.
func hasToolResults(msgs []llm.Message) bool {
	if len(msgs) == 0 {
		return false
	}
	for _, b := range msgs[len(msgs)-1].Content {
		if b.Type == llm.BlockToolResult {
			return true
		}
	}
	return false
}

// instantModel is an in-process llm.Model that answers the benchmark
// scenario at once, with no HTTP. It records when the main agent's
// delegating answer was handed out and when each child's first request
// arrived, so spawn latency can be measured as peerbench defines it.
type instantModel struct {
	n    int
	file string

	mu        sync.Mutex
	seq       int
	delegated time.Time
	firstReq  map[int]time.Time
	requests  int
}

func newInstantModel(n int, file string) *instantModel {
	return &instantModel{n: n, file: file, firstReq: map[int]time.Time{}}
}

// Stream implements llm.Model.
func (m *instantModel) Stream(_ context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		now := time.Now()
		resp := m.answer(req, now)
		if text := resp.Message.Text(); text != "" {
			if !yield(llm.Event{Kind: llm.EventTextDelta, Text: text}, nil) {
				return
			}
		}
		yield(llm.Event{Kind: llm.EventDone, Response: resp}, nil)
	}
}

func (m *instantModel) answer(req *llm.Request, now time.Time) *llm.Response {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests++
	usage := llm.Usage{InputTokens: 10, OutputTokens: 5}
	text := func(s string) *llm.Response {
		return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock(s)}}, StopReason: llm.StopEndTurn, Usage: usage}
	}
	uses := func(blocks []llm.Block) *llm.Response {
		return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: blocks}, StopReason: llm.StopToolUse, Usage: usage}
	}
	first := firstUserText(req.Messages)
	if i, ok := childIndex(first); ok {
		if !hasToolResults(req.Messages) {
			if _, seen := m.firstReq[i]; !seen {
				m.firstReq[i] = now
			}
			m.seq++
			in, _ := json.Marshal(map[string]string{"file_path": m.file})
			return uses([]llm.Block{{Type: llm.BlockToolUse, ID: fmt.Sprintf("toolu_c%d_%d", i, m.seq), Name: "Read", Input: in}})
		}
		return text(fmt.Sprintf("done %d", i))
	}
	if strings.Contains(first, benchMain) && !hasToolResults(req.Messages) {
		blocks := make([]llm.Block, m.n)
		for i := range m.n {
			in, _ := json.Marshal(childTask(i, m.file))
			m.seq++
			blocks[i] = llm.Block{Type: llm.BlockToolUse, ID: fmt.Sprintf("toolu_m%d_%d", i, m.seq), Name: cadre.AgentToolName, Input: in}
		}
		m.delegated = time.Now()
		return uses(blocks)
	}
	return text(fmt.Sprintf("BENCH-FINAL: %d of %d sub-agents reported done.", m.n, m.n))
}

// spawnLatencies returns each child's first request time minus the moment
// the delegating answer was handed out, sorted.
func (m *instantModel) spawnLatencies() []time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]time.Duration, 0, len(m.firstReq))
	for _, t := range m.firstReq {
		out = append(out, t.Sub(m.delegated))
	}
	slices.Sort(out)
	return out
}

// benchDir makes a working directory holding the file children read, and
// a state directory for transcripts.
// With repo set, the directory is a one-commit git repository, as in
// peerbench, so the session's git snapshot is taken.
func benchDir(b testing.TB, repo bool) (cwd, file, state string) {
	b.Helper()
	cwd = b.TempDir()
	file = filepath.Join(cwd, "bench-input.txt")
	if err := os.WriteFile(file, []byte(strings.Repeat("benchmark input line\n", 20)), 0o600); err != nil {
		b.Fatal(err)
	}
	if repo {
		for _, args := range [][]string{
			{"init", "-q"}, {"add", "bench-input.txt"},
			{"-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-q", "-m", "bench input"},
		} {
			cmd := exec.Command("git", args...)
			cmd.Dir = cwd
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
	}
	return cwd, file, b.TempDir()
}

// benchConfig is the configuration the CLI would build (default permission
// mode, transcripts on), with the given model.
func benchConfig(m llm.Model, cwd, state string) cadre.Config {
	home := filepath.Dir(state)
	return cadre.Config{
		Model: m, ModelID: "claude-sonnet-4-5", Cwd: cwd, StateDir: state, Home: home,
		Permissions: &cadre.Permissions{},
	}
}

// runOnce runs the scenario on a new Runtime and checks its result.
func runOnce(ctx context.Context, cfg cadre.Config, n int) error {
	rt, err := cadre.New(cfg)
	if err != nil {
		return err
	}
	var res *run.Result
	for ev, err := range rt.Run(ctx, benchPrompt(n)) {
		if err != nil {
			return err
		}
		if ev.Type == run.EventResult {
			res = ev.Result
		}
	}
	switch {
	case res == nil:
		return fmt.Errorf("fan-out %d: no result", n)
	case res.IsError || res.Subagents.Completed != n:
		return fmt.Errorf("fan-out %d: result %q, %d of %d sub-agents completed", n, res.Text, res.Subagents.Completed, n)
	}
	return nil
}

// reportPerChild adds per-child figures: the op's time, bytes and
// allocations divided by the fan-out.
func reportPerChild(b *testing.B, n int, elapsed time.Duration, before, after *runtime.MemStats) {
	ops := float64(b.N) * float64(n)
	b.ReportMetric(float64(elapsed.Nanoseconds())/ops, "ns/child")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/ops, "B/child")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/ops, "allocs/child")
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return ds[len(ds)/2]
}

// BenchmarkSpawn measures one whole run with fan-out 1 and 16 against an
// in-process model that answers instantly (no HTTP): the main agent
// starts N general-purpose sub-agents in one message, each reads one file
// and answers. ns/op is the whole run (Runtime creation included); the
// per-child figures divide it by N; spawn-ns is the median time from the
// main agent's delegating answer to a child's first model request. The
// variants: /git runs in a one-commit git repository (as peerbench does),
// so the session's git snapshot is taken; /no-transcript turns transcripts
// and sub-agent meta files off, to show what writing them costs. Fan-out 64
// and 256 (without transcripts) go past the running cap of 20: their
// spawn-ns includes the wait in the spawn gate's queue. /otel runs with
// telemetry on (the SDK's tracer and meter providers, spans batched to an
// exporter that drops them): the cost of the spans and metrics.
func BenchmarkSpawn(b *testing.B) {
	for _, c := range []struct {
		n                 int
		repo, noRecs, tel bool
	}{{1, false, false, false}, {16, false, false, false}, {1, true, false, false}, {16, true, false, false}, {1, false, true, false},
		{16, false, true, false}, {64, false, true, false}, {256, false, true, false}, {1, false, false, true}, {16, false, false, true}} {
		n := c.n
		name := fmt.Sprintf("fanout=%d", n)
		if c.repo {
			name += "/git"
		}
		if c.noRecs {
			name += "/no-transcript"
		}
		if c.tel {
			name += "/otel"
		}
		b.Run(name, func(b *testing.B) { benchSpawn(b, n, c.repo, c.noRecs, c.tel) })
	}
}

// benchSpawn is one case of BenchmarkSpawn: fan-out n, in a git repository
// when repo is set, without transcripts when noRecs is set, with
// telemetry on when tel is set.
func benchSpawn(b *testing.B, n int, repo, noRecs, tel bool) {
	cwd, file, state := benchDir(b, repo)
	ctx := context.Background()
	var spawn []time.Duration
	var requests int
	var before, after runtime.MemStats
	b.ReportAllocs()
	runtime.ReadMemStats(&before)
	start := time.Now()
	for b.Loop() {
		m := newInstantModel(n, file)
		cfg := benchConfig(m, cwd, state)
		cfg.NoTranscript = noRecs
		var stop func()
		if tel {
			cfg.Telemetry, stop = benchTelemetry()
		}
		if err := runOnce(ctx, cfg, n); err != nil {
			b.Fatal(err)
		}
		if stop != nil {
			stop()
		}
		spawn = append(spawn, median(m.spawnLatencies()))
		requests = m.requests
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	if requests != 2+2*n {
		b.Fatalf("model requests %d, want %d", requests, 2+2*n)
	}
	slices.Sort(spawn)
	b.ReportMetric(float64(median(spawn).Nanoseconds()), "spawn-ns")
	reportPerChild(b, n, elapsed, &before, &after)
}

// benchTelemetry is telemetry on, as the CLI sets it up but for the
// exporter, which drops what it is given: the SDK's tracer provider with a
// batching span processor and a meter provider with a reader.
func benchTelemetry() (cadre.Telemetry, func()) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(dropExporter{}))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	return cadre.Telemetry{Provider: "anthropic", TracerProvider: tp, MeterProvider: mp}, func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	}
}

// dropExporter is a span exporter that drops the spans.
type dropExporter struct{}

func (dropExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (dropExporter) Shutdown(context.Context) error                             { return nil }

// benchScript answers the scenario on an llmtest server, from the request
// alone.
func benchScript(n int, file string) func(*llmtest.Request) llmtest.Turn {
	return func(r *llmtest.Request) llmtest.Turn {
		first := r.FirstUserText()
		results := len(r.LastToolResults()) > 0
		if i, ok := childIndex(first); ok {
			if !results {
				return llmtest.ToolUse("Read", map[string]string{"file_path": file})
			}
			return llmtest.Text(fmt.Sprintf("done %d", i))
		}
		if strings.Contains(first, benchMain) && !results {
			calls := make([]llmtest.Call, n)
			for i := range calls {
				calls[i] = llmtest.Call{Name: cadre.AgentToolName, Input: childTask(i, file)}
			}
			return llmtest.ToolUses(calls...)
		}
		return llmtest.Text(fmt.Sprintf("BENCH-FINAL: %d of %d sub-agents reported done.", n, n))
	}
}

// BenchmarkRunHTTP measures one whole run at fan-out 16 (and 1) through the
// real Anthropic adapter against an llmtest server on 127.0.0.1 that
// answers at once (streamed SSE), in a one-commit git repository. The
// server runs in the same process, so its CPU time and allocations are part
// of the figures. spawn-ns is the median time from the end of the
// delegating response to a child's first request arriving at the server;
// conns/op the connections the server saw per run (requests are 2+2N).
func BenchmarkRunHTTP(b *testing.B) {
	for _, n := range []int{16, 1} {
		b.Run(fmt.Sprintf("fanout=%d", n), func(b *testing.B) { runHTTP(b, n) })
	}
}

func runHTTP(b *testing.B, n int) {
	cwd, file, state := benchDir(b, true)
	srv := llmtest.NewServer(llmtest.WithMaxRequests(1 << 30))
	defer srv.Close()
	srv.ScriptFunc("", benchScript(n, file))
	// As many idle connections kept as the CLI's client keeps
	// (llm/internal/retry.HTTPClient).
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	defer tr.CloseIdleConnections()
	m, err := anthropic.New(anthropic.Config{APIKey: "bench", BaseURL: srv.URL(), HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var before, after runtime.MemStats
	b.ReportAllocs()
	runtime.ReadMemStats(&before)
	start := time.Now()
	for b.Loop() {
		if err := runOnce(ctx, benchConfig(m, cwd, state), n); err != nil {
			b.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	reqs := srv.Requests()
	if v := srv.Violations(); len(v) > 0 {
		b.Fatalf("protocol violations: %v", v)
	}
	if want := b.N * (2 + 2*n); len(reqs) != want {
		b.Fatalf("model requests %d, want %d", len(reqs), want)
	}
	b.ReportMetric(float64(median(httpSpawnLatencies(reqs)).Nanoseconds()), "spawn-ns")
	conns := map[string]bool{}
	for _, r := range reqs {
		conns[r.RemoteAddr] = true
	}
	b.ReportMetric(float64(len(conns))/float64(b.N), "conns/op")
	reportPerChild(b, n, elapsed, &before, &after)
}

// httpSpawnLatencies returns, for every run in reqs, each child's first
// request arrival minus the end of the main agent's first response.
func httpSpawnLatencies(reqs []*llmtest.Request) []time.Duration {
	var out []time.Duration
	var delegated time.Time
	for _, r := range reqs {
		first := r.FirstUserText()
		results := len(r.LastToolResults()) > 0
		if _, ok := childIndex(first); ok {
			if !results && !delegated.IsZero() {
				out = append(out, r.Arrived.Sub(delegated))
			}
			continue
		}
		if strings.Contains(first, benchMain) && !results {
			delegated = r.Finished
		}
	}
	slices.Sort(out)
	return out
}
