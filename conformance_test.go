package cadre_test

// The provider conformance suite: one set of scenarios, written once, run
// against both provider adapters (llm/anthropic and llm/openai) through the
// scripted model server llm/llmtest. Each scenario drives the whole runtime
// (cadre.New + Run) with the real built-in tools in a temp directory and
// asserts on what went over the wire, not only on the final text.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/anthropic"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/llm/openai"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
)

// confKey is the script key of every conformance run: the prompt holds it,
// so every request of the main agent matches it.
const confKey = "CONFORMANCE"

// confProvider is one adapter under test.
type confProvider struct {
	name    string
	modelID string
	proto   llmtest.Protocol
	// newModel builds the adapter against srv, with a tiny back-off so the
	// fault cases are fast (a server's retry-after still wins).
	newModel func(t *testing.T, srv *llmtest.Server) llm.Model
	// toolID is the id the server gives the n-th tool use of key.
	toolID func(key string, n int) string
	// keepsThinking is whether the wire format carries thinking blocks
	// back to the model.
	keepsThinking bool
	// hasKey reports whether a request carries the API key "test".
	hasKey func(h http.Header) bool
}

// confClient returns an HTTP client whose idle connections are closed when
// the test ends, so goleak sees no transport goroutines.
func confClient(t *testing.T) *http.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// confProviders are the adapters under test.
func confProviders() []confProvider {
	return []confProvider{
		{
			name: "anthropic", modelID: "claude-sonnet-4-5", proto: llmtest.Anthropic, toolID: llmtest.ToolUseID, keepsThinking: true,
			// anthropic-sdk-go v2.15's WithAPIKey sends the key as a
			// Bearer token; x-api-key is the API's classic header.
			hasKey: func(h http.Header) bool {
				return h.Get("X-Api-Key") == "test" || h.Get("Authorization") == "Bearer test"
			},
			newModel: func(t *testing.T, srv *llmtest.Server) llm.Model {
				m, err := anthropic.New(anthropic.Config{APIKey: "test", BaseURL: srv.URL(), HTTPClient: confClient(t),
					RetryBase: time.Millisecond, RetryMax: 2 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				return m
			},
		},
		{
			// Chat Completions cannot carry thinking back: the adapter drops
			// thinking blocks from the history (see the llm/openai doc).
			name: "openai", modelID: "gpt-5", proto: llmtest.OpenAI, toolID: llmtest.CallID, keepsThinking: false,
			hasKey: func(h http.Header) bool { return h.Get("Authorization") == "Bearer test" },
			newModel: func(t *testing.T, srv *llmtest.Server) llm.Model {
				m, err := openai.New(openai.Config{APIKey: "test", BaseURL: srv.URL() + "/v1", HTTPClient: confClient(t),
					RetryBase: time.Millisecond, RetryMax: 2 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				return m
			},
		},
	}
}

// conf is one conformance scenario against one provider.
type conf struct {
	t   *testing.T
	p   confProvider
	srv *llmtest.Server
	dir string // the working directory, with a few real files
	cfg cadre.Config
	// ctx, when set, replaces the run's default context.
	ctx context.Context
}

// confFiles are the files of every scenario's working directory.
func confFiles() map[string]string {
	return map[string]string{
		"notes.txt":   "alpha\nbeta\ngamma\n",
		"src/main.go": "package main\n\nfunc main() { println(\"needle\") }\n",
	}
}

func newConf(t *testing.T, p confProvider) *conf {
	t.Helper()
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	for name, body := range confFiles() {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := &conf{t: t, p: p, srv: srv, dir: dir}
	c.cfg = cadre.Config{
		Model: p.newModel(t, srv), ModelID: p.modelID, Cwd: dir, NoTranscript: true,
		Permissions: cadre.AllowAll(), // the providers are under test, not permissions
	}
	return c
}

func (c *conf) path(name string) string { return filepath.Join(c.dir, filepath.FromSlash(name)) }

// run runs prompt to the end and returns every event, the result (nil when
// the run failed) and the run's error. It checks the server's invariants.
func (c *conf) run(prompt string) ([]run.Event, *run.Result, error) {
	c.t.Helper()
	rt, err := cadre.New(c.cfg)
	if err != nil {
		c.t.Fatal(err)
	}
	ctx := c.ctx
	if ctx == nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
	}
	var evs []run.Event
	var res *run.Result
	var runErr error
	for ev, err := range rt.Run(ctx, prompt) {
		if err != nil {
			runErr = err
			break
		}
		evs = append(evs, ev)
		if ev.Type == run.EventResult {
			res = ev.Result
		}
	}
	c.srv.Check(c.t)
	return evs, res, runErr
}

// mustRun is run for a scenario that must succeed.
func (c *conf) mustRun(prompt string) ([]run.Event, *run.Result) {
	c.t.Helper()
	evs, res, err := c.run(prompt)
	if err != nil {
		c.t.Fatalf("run failed: %v", err)
	}
	if res == nil {
		c.t.Fatal("run ended without a result")
	}
	return evs, res
}

// requests returns the model requests of the conformance key, in order.
func (c *conf) requests(want int) []*llmtest.Request {
	c.t.Helper()
	reqs := c.srv.RequestsFor(confKey)
	if len(reqs) != want {
		c.t.Fatalf("%d model requests, want %d", len(reqs), want)
	}
	// The client can have read the last answer before the server's
	// handler has recorded how it ended: wait for that (a deadline only as
	// a safety net).
	for deadline := time.Now().Add(10 * time.Second); !allFinished(reqs) && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
		reqs = c.srv.RequestsFor(confKey)
	}
	for _, r := range reqs {
		if r.Protocol != c.p.proto {
			c.t.Fatalf("request #%d spoke %s, want %s", r.Seq, r.Protocol, c.p.proto)
		}
	}
	return reqs
}

func allFinished(reqs []*llmtest.Request) bool {
	for _, r := range reqs {
		if r.Status == 0 {
			return false
		}
	}
	return true
}

// confResults returns the tool_result blocks that close request r.
func confResults(t *testing.T, r *llmtest.Request) []llm.Block {
	t.Helper()
	res := r.LastToolResults()
	if len(res) == 0 {
		t.Fatalf("request #%d carries no tool results; last message %+v", r.Seq, r.Messages[len(r.Messages)-1])
	}
	return res
}

func confContains(t *testing.T, s, sub string) {
	t.Helper()
	if !strings.Contains(s, sub) {
		t.Fatalf("%q\ndoes not contain %q", s, sub)
	}
}

// confCount counts the events of type typ.
func confCount(evs []run.Event, typ run.EventType) int {
	n := 0
	for _, ev := range evs {
		if ev.Type == typ {
			n++
		}
	}
	return n
}

// confUsageSum adds up the usage the server reported on reqs.
func confUsageSum(reqs []*llmtest.Request) llm.Usage {
	var u llm.Usage
	for _, r := range reqs {
		u = u.Add(r.Usage)
	}
	return u
}

// TestConformance runs every scenario against every provider adapter. The
// providers run in parallel; each scenario has its own server and
// directory. Only the 429 scenario waits for real (its retry-after of 1 s);
// every other back-off is a millisecond or two.
func TestConformance(t *testing.T) {
	cases := []struct {
		name string
		run  func(c *conf)
	}{
		{"plain answer", confPlainAnswer},
		{"one tool call", confOneToolCall},
		{"parallel read-only calls", confParallelCalls},
		{"write then edit", confWriteThenEdit},
		{"writes and reads in one turn", confMixedBatch},
		{"permission denied", confDenied},
		{"max turns", confMaxTurns},
		{"faults recovered", confFaults},
		{"unauthorized", confUnauthorized},
		{"retries exhausted", confRetriesExhausted},
		{"malformed tool input", confMalformedInput},
		{"thinking round trip", confThinking},
		{"usage and cache", confUsage},
		{"sub-agent", confSubagent},
		{"sub-agent faults", confSubagentFaults},
		{"conversation carries over", confSecondRun},
		{"empty answer, then a second run", confEmptyAnswer},
		{"max turns, then a second run", confMaxTurnsContinue},
		{"cancelled mid-request", confCancel},
	}
	for _, p := range confProviders() {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					tc.run(newConf(t, p))
				})
			}
		})
	}
}

func confPlainAnswer(c *conf) {
	t := c.t
	c.srv.Script(confKey, llmtest.Text("Hello from the model."))
	evs, res := c.mustRun(confKey + ": say hello")
	if res.Text != "Hello from the model." || res.IsError || res.Subtype != "success" || res.NumTurns != 1 || res.ToolUses != 0 {
		t.Fatalf("result %+v", res)
	}
	if evs[0].Type != run.EventInit || evs[len(evs)-1].Type != run.EventResult {
		t.Fatalf("stream starts with %s and ends with %s", evs[0].Type, evs[len(evs)-1].Type)
	}
	var streamed strings.Builder
	for _, ev := range evs {
		if ev.Type == run.EventText {
			streamed.WriteString(ev.Text)
		}
	}
	if streamed.String() != res.Text {
		t.Fatalf("streamed text %q, result %q", streamed.String(), res.Text)
	}

	r := c.requests(1)[0]
	if r.Model != c.p.modelID || !r.Stream || r.Method != http.MethodPost {
		t.Fatalf("request %s model %q stream %v", r.Method, r.Model, r.Stream)
	}
	if !c.p.hasKey(r.Header) {
		t.Fatalf("the API key is not in the headers %v", r.Header)
	}
	if len(r.Messages) != 1 || r.Messages[0].Role != llm.RoleUser || r.Messages[0].Text() != confKey+": say hello" {
		t.Fatalf("messages %+v", r.Messages)
	}
	confContains(t, r.System, c.dir)
	confContains(t, r.System, c.p.modelID)
	// Every built-in tool and the Agent tool are offered.
	for _, name := range []string{"Agent", "Bash", "Edit", "Glob", "Grep", "Read", "Write"} {
		if !slices.Contains(r.ToolNames(), name) {
			t.Fatalf("tool %s not offered: %v", name, r.ToolNames())
		}
	}
	for _, spec := range r.Tools {
		var schema map[string]any
		if err := json.Unmarshal(spec.InputSchema, &schema); err != nil || schema["type"] != "object" || spec.Description == "" {
			t.Fatalf("tool %s: schema %s (%v), description %q", spec.Name, spec.InputSchema, err, spec.Description)
		}
	}
}

func confOneToolCall(c *conf) {
	t := c.t
	c.srv.Script(confKey,
		llmtest.ToolUse("Read", map[string]any{"file_path": c.path("notes.txt")}),
		llmtest.Text("The notes list alpha, beta and gamma."))
	evs, res := c.mustRun(confKey + ": what is in notes.txt?")
	if res.Text != "The notes list alpha, beta and gamma." || res.NumTurns != 2 || res.ToolUses != 1 {
		t.Fatalf("result %+v", res)
	}
	if confCount(evs, run.EventToolStart) != 1 || confCount(evs, run.EventToolEnd) != 1 {
		t.Fatal("want one tool_start and one tool_end event")
	}

	reqs := c.requests(2)
	// The second request carries the whole history: prompt, the assistant's
	// tool use, and its result.
	if len(reqs[1].Messages) != 3 {
		t.Fatalf("second request has %d messages", len(reqs[1].Messages))
	}
	uses := reqs[1].Messages[1].ToolUses()
	if len(uses) != 1 || uses[0].Name != "Read" || uses[0].ID != c.p.toolID(confKey, 1) {
		t.Fatalf("assistant tool uses %+v", uses)
	}
	var in map[string]string
	if err := json.Unmarshal(uses[0].Input, &in); err != nil || in["file_path"] != c.path("notes.txt") {
		t.Fatalf("tool input sent back %s (%v)", uses[0].Input, err)
	}
	got := confResults(t, reqs[1])
	if len(got) != 1 || got[0].ToolUseID != uses[0].ID || got[0].IsError {
		t.Fatalf("tool results %+v", got)
	}
	// cat -n style: right-aligned line numbers, a tab, the line.
	confContains(t, got[0].ResultText(), "     1\talpha\n     2\tbeta\n     3\tgamma")
}

func confParallelCalls(c *conf) {
	t := c.t
	c.srv.Script(confKey,
		llmtest.ToolUses(
			llmtest.Call{Name: "Read", Input: map[string]any{"file_path": c.path("notes.txt")}},
			llmtest.Call{Name: "Glob", Input: map[string]any{"pattern": "**/*.go"}},
			llmtest.Call{Name: "Grep", Input: map[string]any{"pattern": "needle", "output_mode": "content"}},
		),
		llmtest.Text("Found it."))
	_, res := c.mustRun(confKey + ": look around")
	if res.Text != "Found it." || res.ToolUses != 3 || res.NumTurns != 2 {
		t.Fatalf("result %+v", res)
	}
	reqs := c.requests(2)
	uses := reqs[1].Messages[1].ToolUses()
	var names, ids []string
	for _, u := range uses {
		names, ids = append(names, u.Name), append(ids, u.ID)
	}
	wantIDs := []string{c.p.toolID(confKey, 1), c.p.toolID(confKey, 2), c.p.toolID(confKey, 3)}
	if diff := cmp.Diff([]string{"Read", "Glob", "Grep"}, names); diff != "" {
		t.Fatalf("tool uses sent back (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantIDs, ids); diff != "" {
		t.Fatalf("tool use ids (-want +got):\n%s", diff)
	}
	got := confResults(t, reqs[1])
	var resultIDs []string
	for _, b := range got {
		resultIDs = append(resultIDs, b.ToolUseID)
		if b.IsError {
			t.Fatalf("tool result %s is an error: %s", b.ToolUseID, b.ResultText())
		}
	}
	if diff := cmp.Diff(wantIDs, resultIDs); diff != "" {
		t.Fatalf("tool results are not in call order (-want +got):\n%s", diff)
	}
	confContains(t, got[0].ResultText(), "     2\tbeta")
	confContains(t, got[1].ResultText(), c.path("src/main.go"))
	if strings.Contains(got[1].ResultText(), "notes.txt") {
		t.Fatalf("Glob **/*.go matched notes.txt: %s", got[1].ResultText())
	}
	confContains(t, got[2].ResultText(), "main.go")
	confContains(t, got[2].ResultText(), `println("needle")`)
}

func confWriteThenEdit(c *conf) {
	t := c.t
	file := c.path("out/new.txt")
	c.srv.Script(confKey,
		llmtest.ToolUse("Write", map[string]any{"file_path": file, "content": "hello\nworld\n"}),
		llmtest.ToolUse("Read", map[string]any{"file_path": file}),
		llmtest.ToolUse("Edit", map[string]any{"file_path": file, "old_string": "world", "new_string": "cadre"}),
		llmtest.Text("Edited."))
	_, res := c.mustRun(confKey + ": write and edit a file")
	if res.Text != "Edited." || res.ToolUses != 3 || res.NumTurns != 4 {
		t.Fatalf("result %+v", res)
	}
	reqs := c.requests(4)
	for i, want := range []string{"", "     2\tworld", ""} {
		got := confResults(t, reqs[i+1])
		if len(got) != 1 || got[0].IsError || got[0].ToolUseID != c.p.toolID(confKey, i+1) {
			t.Fatalf("request %d: tool results %+v", i+2, got)
		}
		if want != "" {
			confContains(t, got[0].ResultText(), want)
		}
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "hello\ncadre\n" {
		t.Fatalf("file holds %q", b)
	}
}

// confMixedBatch sends writing and read-only calls in one assistant turn:
// writing calls run alone and in call order (S-1.3), so each Read sees the
// file as the calls before it left it.
func confMixedBatch(c *conf) {
	t := c.t
	file := c.path("batch.txt")
	c.srv.Script(confKey,
		llmtest.ToolUses(
			llmtest.Call{Name: "Write", Input: map[string]any{"file_path": file, "content": "one\n"}},
			llmtest.Call{Name: "Read", Input: map[string]any{"file_path": file}},
			llmtest.Call{Name: "Edit", Input: map[string]any{"file_path": file, "old_string": "one", "new_string": "two"}},
			llmtest.Call{Name: "Read", Input: map[string]any{"file_path": file}},
			llmtest.Call{Name: "Glob", Input: map[string]any{"pattern": "batch.*"}},
		),
		llmtest.Text("Done."))
	_, res := c.mustRun(confKey + ": write, read, edit, read")
	if res.Text != "Done." || res.ToolUses != 5 {
		t.Fatalf("result %+v", res)
	}
	got := confResults(t, c.requests(2)[1])
	if len(got) != 5 {
		t.Fatalf("%d tool results, want 5", len(got))
	}
	for i, b := range got {
		if b.IsError || b.ToolUseID != c.p.toolID(confKey, i+1) {
			t.Fatalf("result %d: %+v", i, b)
		}
	}
	confContains(t, got[1].ResultText(), "     1\tone")
	confContains(t, got[3].ResultText(), "     1\ttwo")
	confContains(t, got[4].ResultText(), file)
	if b, err := os.ReadFile(file); err != nil || string(b) != "two\n" {
		t.Fatalf("file holds %q (%v)", b, err)
	}
}

// confDenied: with permissions on and nobody to ask (headless), a write
// is denied: the model gets an error result explaining it, the run goes
// on, the file is untouched, and the result lists the denial.
func confDenied(c *conf) {
	t := c.t
	c.cfg.Home = c.dir
	c.cfg.Permissions = &cadre.Permissions{Mode: permission.ModeDefault}
	file := c.path("denied.txt")
	c.srv.Script(confKey,
		llmtest.ToolUses(
			llmtest.Call{Name: "Write", Input: map[string]any{"file_path": file, "content": "nope\n"}},
			llmtest.Call{Name: "Read", Input: map[string]any{"file_path": c.path("notes.txt")}},
		),
		llmtest.Text("I may not write."))
	evs, res := c.mustRun(confKey + ": try to write")
	if res.Text != "I may not write." || res.IsError {
		t.Fatalf("result %+v", res)
	}
	if len(res.PermissionDenials) != 1 || res.PermissionDenials[0].ToolName != "Write" || res.PermissionDenials[0].ToolUseID != c.p.toolID(confKey, 1) {
		t.Fatalf("denials %+v", res.PermissionDenials)
	}
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a denied Write created the file: %v", err)
	}
	denied := 0
	for _, ev := range evs {
		if ev.Type == run.EventToolEnd && ev.ToolResult.Denied {
			denied++
		}
	}
	if denied != 1 {
		t.Fatalf("%d denied tool_end events", denied)
	}
	got := confResults(t, c.requests(2)[1])
	if len(got) != 2 || got[0].ToolUseID != c.p.toolID(confKey, 1) || got[1].ToolUseID != c.p.toolID(confKey, 2) {
		t.Fatalf("tool results %+v", got)
	}
	if c.p.proto == llmtest.Anthropic && (!got[0].IsError || got[1].IsError) {
		t.Fatalf("is_error flags: %v, %v", got[0].IsError, got[1].IsError)
	}
	confContains(t, got[0].ResultText(), "Permission denied: the Write call was not run.")
	confContains(t, got[1].ResultText(), "     1\talpha")
}

func confMaxTurns(c *conf) {
	t := c.t
	c.cfg.MaxTurns = 2
	// A model that never stops calling tools.
	c.srv.ScriptFunc(confKey, func(*llmtest.Request) llmtest.Turn {
		return llmtest.ToolUse("Glob", map[string]any{"pattern": "*.txt"})
	})
	_, res := c.mustRun(confKey + ": loop forever")
	if res.Subtype != "error_max_turns" || !res.IsError || res.NumTurns != 2 {
		t.Fatalf("result %+v", res)
	}
	c.requests(2)
	if n := len(c.srv.Requests()); n != 2 {
		t.Fatalf("%d requests reached the server, want 2", n)
	}
}

func confFaults(c *conf) {
	t := c.t
	glob := func() llmtest.Turn { return llmtest.ToolUse("Glob", map[string]any{"pattern": "*.txt"}) }
	c.srv.Script(confKey,
		llmtest.RateLimited(time.Second), glob(), // requests 1, 2
		llmtest.ServerError(500, "llmtest: internal error"), glob(), // 3, 4
		llmtest.Overloaded(), glob(), // 5, 6
		llmtest.Cut(), glob(), // 7, 8
		// A tool call cut off mid-stream must never run.
		llmtest.ToolUse("Write", map[string]any{"file_path": c.path("half.txt"), "content": "from a cut stream"}).WithCut(), glob(), // 9, 10
		llmtest.StreamError("overloaded_error", "llmtest: overloaded mid-stream"), llmtest.Text("Recovered from everything.")) // 11, 12
	evs, res := c.mustRun(confKey + ": survive the faults")
	if res.Text != "Recovered from everything." || res.IsError || res.NumTurns != 6 || res.ToolUses != 5 {
		t.Fatalf("result %+v", res)
	}
	reqs := c.requests(12)
	var statuses []int
	for _, r := range reqs {
		statuses = append(statuses, r.Status)
	}
	// A cut stream and a stream carrying an error event still answered 200.
	if diff := cmp.Diff([]int{429, 200, 500, 200, 529, 200, 200, 200, 200, 200, 200, 200}, statuses); diff != "" {
		t.Fatalf("statuses (-want +got):\n%s", diff)
	}
	// Each retry resends the failed request unchanged.
	for _, i := range []int{0, 2, 4, 6, 8, 10} {
		if len(reqs[i].Messages) != len(reqs[i+1].Messages) {
			t.Fatalf("retry #%d has %d messages, the failed request #%d had %d",
				reqs[i+1].Seq, len(reqs[i+1].Messages), reqs[i].Seq, len(reqs[i].Messages))
		}
	}
	// The 429 said retry-after 1 s, and the adapter waited that long.
	if wait := reqs[1].Arrived.Sub(reqs[0].Finished); wait < time.Second {
		t.Fatalf("the retry came %v after the 429, before its retry-after of 1s", wait)
	}
	var retries []int
	for _, ev := range evs {
		if ev.Type == run.EventRetry {
			retries = append(retries, ev.Retry.Status)
		}
	}
	// A stream error event has no HTTP status of its own: the adapters
	// report a 5xx for it (Anthropic maps overloaded_error to 529).
	if len(retries) != 6 || retries[0] != 429 || retries[1] != 500 || retries[2] != 529 || retries[3] != 0 || retries[4] != 0 || retries[5] < 500 {
		t.Fatalf("retry events by status: %v, want 429, 500, 529, 0 and 0 (cuts) and a 5xx (stream error)", retries)
	}
	if _, err := os.Stat(c.path("half.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the Write of a cut stream ran: %v", err)
	}
	for _, ev := range evs {
		if ev.Type == run.EventToolStart && ev.Call.Name != "Glob" {
			t.Fatalf("tool %s started; only the answered Glob calls should run", ev.Call.Name)
		}
	}
	// Only the answers that arrived count: the usage of the failed
	// attempts (the cut one had already reported input tokens) is not
	// in the result.
	good := []*llmtest.Request{reqs[1], reqs[3], reqs[5], reqs[7], reqs[9], reqs[11]}
	if diff := cmp.Diff(confUsageSum(good), res.Usage); diff != "" {
		t.Fatalf("result usage is not the sum of the answered requests' (-answered +result):\n%s", diff)
	}
	// Text streamed by the cut attempt is void: the final answer is the
	// retry's alone.
	if strings.Contains(res.Text, "partial answer") {
		t.Fatalf("result %q holds the cut attempt's text", res.Text)
	}
}

func confUnauthorized(c *conf) {
	t := c.t
	c.srv.Script(confKey, llmtest.HTTPError(401, "invalid x-api-key"))
	_, res, err := c.run(confKey + ": hello")
	if err == nil {
		t.Fatalf("run succeeded with %+v", res)
	}
	confContains(t, err.Error(), "401")
	confContains(t, err.Error(), "invalid x-api-key")
	// Not retried.
	c.requests(1)
}

// confRetriesExhausted: a server that keeps failing ends the run after the
// adapter's retries (DefaultMaxRetries, the same for both adapters) with
// an error naming the last status and the API's message.
func confRetriesExhausted(c *conf) {
	t := c.t
	if anthropic.DefaultMaxRetries != openai.DefaultMaxRetries {
		t.Fatalf("the adapters retry %d and %d times", anthropic.DefaultMaxRetries, openai.DefaultMaxRetries)
	}
	attempts := anthropic.DefaultMaxRetries + 1
	for range attempts {
		c.srv.Script(confKey, llmtest.ServerError(503, "llmtest: down for maintenance"))
	}
	evs, res, err := c.run(confKey + ": anyone there?")
	if err == nil {
		t.Fatalf("run succeeded with %+v", res)
	}
	confContains(t, err.Error(), "503")
	confContains(t, err.Error(), "llmtest: down for maintenance")
	c.requests(attempts)
	if n := confCount(evs, run.EventRetry); n != attempts-1 {
		t.Fatalf("%d retry events, want %d", n, attempts-1)
	}
}

func confMalformedInput(c *conf) {
	t := c.t
	c.srv.Script(confKey,
		llmtest.MalformedToolUse("Read", `{"file_path": "notes.txt"`),
		llmtest.Text("Sorry, I will fix my input."))
	_, res := c.mustRun(confKey + ": read it")
	if res.Text != "Sorry, I will fix my input." || res.IsError || res.NumTurns != 2 {
		t.Fatalf("result %+v", res)
	}
	reqs := c.requests(2)
	got := confResults(t, reqs[1])
	if len(got) != 1 || got[0].ToolUseID != c.p.toolID(confKey, 1) || (c.p.proto == llmtest.Anthropic && !got[0].IsError) {
		t.Fatalf("tool results %+v", got)
	}
	if c.p.proto == llmtest.OpenAI {
		// Chat Completions has no is_error flag: the text says it.
		if !strings.HasPrefix(got[0].ResultText(), "Error: ") {
			t.Fatalf("openai error result %q lacks the Error: prefix", got[0].ResultText())
		}
	}
	confContains(t, got[0].ResultText(), "not valid JSON")
	confContains(t, got[0].ResultText(), `{"file_path": "notes.txt"`)
	// The history carries a JSON object as the tool input, never the
	// malformed text.
	uses := reqs[1].Messages[1].ToolUses()
	if len(uses) != 1 || !json.Valid(uses[0].Input) || !strings.HasPrefix(strings.TrimSpace(string(uses[0].Input)), "{") {
		t.Fatalf("tool use sent back %+v", uses)
	}
}

func confThinking(c *conf) {
	t := c.t
	// Quotes, a newline, non-ASCII and HTML-sensitive characters: any
	// re-encoding would show.
	const thought = "Let me \"check\" <notes> & files…\nfirst notes.txt — then answer."
	const signature = "EqQBCkYIARgCKkB+sig/with+base64==" // opaque to the client
	const redacted = "RedactedData+/opaque=="
	c.srv.Script(confKey,
		// A first attempt is cut after some thinking: none of it may be
		// kept or sent back.
		llmtest.Thinking("An abandoned thought that the cut stream never finishes.", "sig-void").WithText("Doomed answer text.").WithCut(),
		llmtest.Thinking(thought, signature).WithRedactedThinking(redacted).WithText("Reading the notes.").
			WithToolUse("Read", map[string]any{"file_path": c.path("notes.txt")}),
		llmtest.Text("Three lines."))
	evs, res := c.mustRun(confKey + ": think, then read")
	if res.Text != "Three lines." {
		t.Fatalf("result %+v", res)
	}
	// Deltas before an EventRetry are void (see cadre.EventRetry).
	var streamed strings.Builder
	var perMessage []string // the thinking streamed for each assistant message
	for _, ev := range evs {
		switch ev.Type {
		case run.EventRetry:
			streamed.Reset()
		case run.EventThinking:
			streamed.WriteString(ev.Text)
		case run.EventAssistant:
			perMessage = append(perMessage, streamed.String())
			streamed.Reset()
		}
	}
	if diff := cmp.Diff([]string{thought, ""}, perMessage); diff != "" {
		t.Fatalf("thinking streamed per assistant message (-want +got):\n%s", diff)
	}
	if confCount(evs, run.EventRetry) != 1 {
		t.Fatalf("%d retry events, want 1", confCount(evs, run.EventRetry))
	}
	reqs := c.requests(3)
	if body := string(reqs[2].Body); strings.Contains(body, "abandoned") || strings.Contains(body, "sig-void") || strings.Contains(body, "Doomed") {
		t.Fatalf("the cut attempt reached the history:\n%s", body)
	}
	asst := reqs[2].Messages[1]
	if txt := asst.Text(); txt != "Reading the notes." {
		t.Fatalf("assistant text sent back %q", txt)
	}
	var thinking []llm.Block
	for _, b := range asst.Content {
		if b.Type == llm.BlockThinking || b.Type == llm.BlockRedactedThinking {
			thinking = append(thinking, b)
		}
	}
	if !c.p.keepsThinking {
		// OpenAI Chat Completions cannot carry thinking back: it is
		// dropped, and nothing of it reaches the wire.
		if len(thinking) != 0 {
			t.Fatalf("thinking sent back on %s: %+v", c.p.name, thinking)
		}
		if body := string(reqs[2].Body); strings.Contains(body, "Let me") || strings.Contains(body, "sig/with") || strings.Contains(body, "RedactedData") {
			t.Fatalf("thinking text reached the wire:\n%s", reqs[2].Body)
		}
		return
	}
	if len(asst.Content) == 0 || asst.Content[0].Type != llm.BlockThinking {
		t.Fatalf("assistant message does not start with its thinking block: %+v", asst.Content)
	}
	if len(thinking) != 2 || thinking[0].Thinking != thought || thinking[0].Signature != signature ||
		thinking[1].Type != llm.BlockRedactedThinking || thinking[1].Data != redacted || asst.Content[1].Type != llm.BlockRedactedThinking {
		t.Fatalf("thinking sent back %+v", thinking)
	}
	// Byte for byte on the wire: the same JSON string encodings the server
	// streamed out.
	var wire struct {
		Messages []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(reqs[2].Body, &wire); err != nil {
		t.Fatal(err)
	}
	if len(wire.Messages) < 2 || len(wire.Messages[1].Content) == 0 {
		t.Fatalf("wire messages %s", reqs[2].Body)
	}
	var blk map[string]json.RawMessage
	if err := json.Unmarshal(wire.Messages[1].Content[0], &blk); err != nil {
		t.Fatal(err)
	}
	var gotThought, gotSig string
	if err := json.Unmarshal(blk["thinking"], &gotThought); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(blk["signature"], &gotSig); err != nil {
		t.Fatal(err)
	}
	if gotThought != thought || gotSig != signature || string(blk["type"]) != `"thinking"` {
		t.Fatalf("thinking block on the wire: %s", wire.Messages[1].Content[0])
	}
}

func confUsage(c *conf) {
	t := c.t
	c.srv.Script(confKey,
		llmtest.ToolUse("Read", map[string]any{"file_path": c.path("notes.txt")}),
		llmtest.Text("Done reading."))
	evs, res := c.mustRun(confKey + ": read and report")
	reqs := c.requests(2)
	want := confUsageSum(reqs)
	if diff := cmp.Diff(want, res.Usage); diff != "" {
		t.Fatalf("result usage is not the sum of the requests' (-requests +result):\n%s", diff)
	}
	if want.OutputTokens == 0 || want.InputTokens+want.CacheReadTokens+want.CacheWriteTokens == 0 {
		t.Fatalf("usage %+v", want)
	}
	// Each assistant event carries its own request's usage.
	var perTurn []llm.Usage
	for _, ev := range evs {
		if ev.Type == run.EventAssistant {
			perTurn = append(perTurn, ev.Usage)
		}
	}
	if diff := cmp.Diff([]llm.Usage{reqs[0].Usage, reqs[1].Usage}, perTurn); diff != "" {
		t.Fatalf("assistant event usage (-requests +events):\n%s", diff)
	}
	if c.p.proto == llmtest.Anthropic && reqs[0].Usage.CacheWriteTokens == 0 {
		// The adapter's breakpoints make the first request write the
		// prefix: tools, system and the prompt.
		t.Fatalf("first request wrote nothing to the cache: %+v", reqs[0].Usage)
	}
	// The second request reads that prefix (Anthropic: from the adapter's
	// breakpoints; OpenAI: from its automatic prefix caching, which needs
	// the history re-sent unchanged).
	if reqs[1].Usage.CacheReadTokens == 0 || res.Usage.CacheReadTokens != reqs[1].Usage.CacheReadTokens {
		t.Fatalf("second request read nothing from the cache: %+v, result %+v", reqs[1].Usage, res.Usage)
	}
}

func confSubagent(c *conf) {
	t := c.t
	const childKey = "CHILD-TASK"
	c.srv.Script(confKey,
		llmtest.ToolUse("Agent", map[string]any{"description": "list notes", "prompt": childKey + ": which .txt files are there?", "subagent_type": "Explore"}),
		llmtest.Text("There is one: notes.txt."))
	c.srv.Script(childKey, llmtest.ToolUse("Glob", map[string]any{"pattern": "*.txt"}), llmtest.Text("Only notes.txt."))
	evs, res := c.mustRun(confKey + ": ask a sub-agent")
	if res.Text != "There is one: notes.txt." || res.Subagents.Spawned != 1 || res.Subagents.Completed != 1 {
		t.Fatalf("result %+v", res)
	}
	var done *run.SubagentResult
	childTools := 0
	for _, ev := range evs {
		switch {
		case ev.Type == run.EventTaskCompleted:
			done = ev.Subagent
		case ev.Type == run.EventToolEnd && ev.AgentID != "":
			childTools++
			if ev.ParentToolUseID != c.p.toolID(confKey, 1) {
				t.Fatalf("child tool event with parent %q", ev.ParentToolUseID)
			}
		}
	}
	if done == nil || done.Status != "completed" || done.Text != "Only notes.txt." || done.Turns != 2 || childTools != 1 {
		t.Fatalf("sub-agent %+v, %d child tool events", done, childTools)
	}
	child := c.srv.RequestsFor(childKey)
	if len(child) != 2 {
		t.Fatalf("%d child requests", len(child))
	}
	for _, r := range child {
		if r.Protocol != c.p.proto || r.Model != done.Model {
			t.Fatalf("child request #%d: %s, model %q; the sub-agent reports model %q", r.Seq, r.Protocol, r.Model, done.Model)
		}
	}
	for _, banned := range []string{"Agent", "Edit", "Write"} {
		if slices.Contains(child[0].ToolNames(), banned) {
			t.Fatalf("Explore was offered %s: %v", banned, child[0].ToolNames())
		}
	}
	confContains(t, confResults(t, child[1])[0].ResultText(), "notes.txt")
	reqs := c.requests(2)
	report := confResults(t, reqs[1])
	if len(report) != 1 || report[0].IsError || report[0].ToolUseID != c.p.toolID(confKey, 1) {
		t.Fatalf("Agent tool result %+v", report)
	}
	confContains(t, report[0].ResultText(), "<agent-report>\n  Only notes.txt.\n</agent-report>")
	// The run's usage covers the sub-agent's requests too.
	if diff := cmp.Diff(confUsageSum(c.srv.Requests()), res.Usage); diff != "" {
		t.Fatalf("result usage is not the sum of every request's (-requests +result):\n%s", diff)
	}
}

// confSubagentFaults: two sub-agents in parallel; one recovers from a 502
// and a 429 (its retry events carry its AgentID), the other fails with a
// 403. The failure is an error result for the main agent, which goes on.
func confSubagentFaults(c *conf) {
	t := c.t
	c.srv.Script(confKey,
		llmtest.ToolUses(
			llmtest.Call{Name: "Agent", Input: map[string]any{"description": "recovers", "prompt": "CHILD-OK: count the files"}},
			llmtest.Call{Name: "Agent", Input: map[string]any{"description": "fails", "prompt": "CHILD-BAD: look around", "subagent_type": "Explore"}},
		),
		llmtest.Text("One of two worked."))
	c.srv.Script("CHILD-OK", llmtest.ServerError(502, "llmtest: bad gateway"), llmtest.RateLimited(10*time.Millisecond), llmtest.Text("Two files."))
	c.srv.Script("CHILD-BAD", llmtest.HTTPError(403, "llmtest: model not allowed"))
	evs, res := c.mustRun(confKey + ": two sub-agents")
	if res.Text != "One of two worked." || res.IsError || res.Subagents.Spawned != 2 || res.Subagents.Completed != 1 || res.Subagents.Failed != 1 {
		t.Fatalf("result %+v", res)
	}
	var retries []int
	status := map[string]task.Status{}
	for _, ev := range evs {
		switch ev.Type {
		case run.EventRetry:
			if ev.AgentID == "" {
				t.Fatalf("a sub-agent's retry came without its AgentID: %+v", ev.Retry)
			}
			retries = append(retries, ev.Retry.Status)
		case run.EventTaskCompleted:
			status[ev.Subagent.AgentType] = ev.Subagent.Status
			if ev.Subagent.Status == task.Failed {
				confContains(t, ev.Subagent.Error, "403")
			}
		}
	}
	if diff := cmp.Diff([]int{502, 429}, retries); diff != "" {
		t.Fatalf("retries (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]task.Status{"general-purpose": task.Completed, "Explore": task.Failed}, status); diff != "" {
		t.Fatalf("sub-agent statuses (-want +got):\n%s", diff)
	}
	got := confResults(t, c.requests(2)[1])
	if len(got) != 2 || got[0].ToolUseID != c.p.toolID(confKey, 1) || got[1].ToolUseID != c.p.toolID(confKey, 2) {
		t.Fatalf("tool results %+v", got)
	}
	confContains(t, got[0].ResultText(), "<agent-report>\n  Two files.\n</agent-report>")
	confContains(t, got[1].ResultText(), "(Explore) failed")
	confContains(t, got[1].ResultText(), "llmtest: model not allowed")
	if c.p.proto == llmtest.Anthropic && (got[0].IsError || !got[1].IsError) {
		t.Fatalf("is_error flags %v, %v", got[0].IsError, got[1].IsError)
	}
	if diff := cmp.Diff(confUsageSum(c.srv.Requests()), res.Usage); diff != "" {
		t.Fatalf("result usage is not the sum of every request's (-requests +result):\n%s", diff)
	}
}

func confSecondRun(c *conf) {
	t := c.t
	c.srv.Script(confKey, llmtest.Text("First answer."), llmtest.Text("Second answer."))
	rt, err := cadre.New(c.cfg)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, prompt := range []string{confKey + ": first question", "a follow-up"} {
		for ev, err := range rt.Run(context.Background(), prompt) {
			if err != nil {
				t.Fatal(err)
			}
			if ev.Type == run.EventResult {
				texts = append(texts, ev.Result.Text)
			}
		}
	}
	c.srv.Check(t)
	if diff := cmp.Diff([]string{"First answer.", "Second answer."}, texts); diff != "" {
		t.Fatalf("answers (-want +got):\n%s", diff)
	}
	second := c.requests(2)[1]
	var got []string
	for _, m := range second.Messages {
		got = append(got, string(m.Role)+": "+m.Text())
	}
	want := []string{"user: " + confKey + ": first question", "assistant: First answer.", "user: a follow-up"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("second run's history (-want +got):\n%s", diff)
	}
	// The second run re-sends the first one's prefix unchanged, so it is
	// read from the prompt cache.
	if second.Usage.CacheReadTokens == 0 {
		t.Fatalf("the second run read nothing from the cache: %+v", second.Usage)
	}
}

// runEach runs the prompts one after the other on one Runtime and returns
// the result of each.
func (c *conf) runEach(prompts ...string) []*run.Result {
	c.t.Helper()
	rt, err := cadre.New(c.cfg)
	if err != nil {
		c.t.Fatal(err)
	}
	var out []*run.Result
	for _, prompt := range prompts {
		for ev, err := range rt.Run(context.Background(), prompt) {
			if err != nil {
				c.t.Fatalf("run %q: %v", prompt, err)
			}
			if ev.Type == run.EventResult {
				out = append(out, ev.Result)
			}
		}
	}
	c.srv.Check(c.t)
	return out
}

// confEmptyAnswer: models do end a turn with nothing but an empty text
// block. The history the next run sends must still be valid: the API
// refuses an assistant message with empty content (400 "all messages must
// have non-empty content").
func confEmptyAnswer(c *conf) {
	t := c.t
	c.srv.Script(confKey, llmtest.Text(""), llmtest.Text("Now with words."))
	res := c.runEach(confKey+": say nothing", "say something")
	if len(res) != 2 || res[1].Text != "Now with words." {
		t.Fatalf("results %+v", res)
	}
	second := c.requests(2)[1]
	if len(second.Messages) != 3 || second.Messages[1].Role != llm.RoleAssistant {
		t.Fatalf("second request's history %+v", second.Messages)
	}
	if len(second.Messages[1].Content) == 0 {
		t.Fatal("the empty answer went back as an assistant message with empty content")
	}
}

// confMaxTurnsContinue: a run stopped by its turn limit ends with tool
// results; the next run's prompt must not become a second user message
// right after them (Anthropic roles alternate; llmtest checks it). The
// prompt belongs in the same user message, after the tool results.
func confMaxTurnsContinue(c *conf) {
	t := c.t
	c.cfg.MaxTurns = 1
	c.srv.Script(confKey, llmtest.ToolUse("Glob", map[string]any{"pattern": "*.txt"}), llmtest.Text("Finished now."))
	res := c.runEach(confKey+": start", "go on")
	if len(res) != 2 || res[0].Subtype != "error_max_turns" || res[1].Text != "Finished now." {
		t.Fatalf("results %+v", res)
	}
	second := c.requests(2)[1]
	last := second.Messages[len(second.Messages)-1]
	if last.Role != llm.RoleUser || !strings.Contains(last.Text(), "go on") {
		t.Fatalf("last message %+v", last)
	}
	if c.p.proto != llmtest.Anthropic {
		// Chat Completions sends tool results as role "tool" messages, so
		// a user message after them is fine there.
		return
	}
	for i, m := range second.Messages {
		if i > 0 && m.Role == second.Messages[i-1].Role {
			t.Fatalf("messages %d and %d are both %s", i-1, i, m.Role)
		}
	}
}

func confCancel(c *conf) {
	t := c.t
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.ctx = ctx
	// The request is in flight when the caller gives up: the script
	// cancels the run, then answers only after a minute.
	c.srv.ScriptFunc(confKey, func(*llmtest.Request) llmtest.Turn {
		cancel()
		return llmtest.Text("too late").WithDelay(time.Minute)
	})
	evs, res, err := c.run(confKey + ": take your time")
	if !errors.Is(err, context.Canceled) || res == nil || !res.IsError || res.Subtype != "error_during_execution" || res.Error == "" {
		t.Fatalf("run ended with %v, result %+v; want an error_during_execution result, then context.Canceled", err, res)
	}
	if n := confCount(evs, run.EventText); n != 0 {
		t.Fatalf("%d text events from a cancelled request", n)
	}
	// Not retried: one request.
	c.requests(1)
}
