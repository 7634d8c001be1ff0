package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/compact"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/transcript"
)

// The compaction scenarios (issue 27): every agent kind runs long
// scripted work in an 8,000-token window (compaction at 5,000 tokens,
// compact.Compute) and compacts on its own; the captured requests show
// the summary request and what the post-compaction request kept.

const testWindow = 8000

func usage(n int64) llm.Usage { return llm.Usage{InputTokens: n - 20, OutputTokens: 20} }

// isSummaryRequest reports whether r asks for a compaction summary.
func isSummaryRequest(r *llmtest.Request) bool {
	return strings.Contains(r.LastUserText(), "Your conversation is about to be compacted")
}

// isCompacted reports whether r continues a compacted conversation.
func isCompacted(r *llmtest.Request) bool {
	return len(r.Messages) > 0 && strings.HasPrefix(r.Messages[0].Text(), "This conversation was compacted")
}

// job scripts one agent's long work: it writes its todo list, reads
// file (the answer's usage crosses the threshold), and once compacted
// finishes with "<key> finished". from is where the agent's own
// messages start (0, or after a fork's inherited history). Summary
// requests are answered with a summary that keeps key, so the compacted
// agent's requests still match its script.
func job(key, file string, from func(r *llmtest.Request) int) func(*llmtest.Request) llmtest.Turn {
	return func(r *llmtest.Request) llmtest.Turn {
		switch {
		case isSummaryRequest(r):
			return llmtest.Text("<analysis>long</analysis><summary>" + key + ": wrote the todo list, read " + file + "; next: finish</summary>").WithUsage(usage(5400))
		case isCompacted(r):
			return llmtest.Text(key + " finished").WithUsage(usage(900))
		}
		switch len(r.Messages) - from(r) {
		case 1:
			return llmtest.ToolUse("TodoWrite", map[string]any{"todos": []map[string]any{{"content": "read the notes", "status": "in_progress", "activeForm": "Reading the notes"}}}).WithUsage(usage(2500))
		case 3:
			return llmtest.ToolUse("Read", map[string]any{"file_path": file}).WithUsage(usage(5200))
		}
		return llmtest.Text(key + " lost its place").WithUsage(usage(100))
	}
}

func fromStart(*llmtest.Request) int { return 0 }

// compactHarness is a harness with the small window and a file to read.
func compactHarness(t *testing.T) (*harness, Config, string) {
	h := newHarness(t)
	cfg := h.config()
	cfg.Compaction.Window = testWindow
	file := filepath.Join(h.dir, "notes.txt")
	if err := os.WriteFile(file, []byte("NOTES-CONTENT-42\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return h, cfg, file
}

// rawField returns the raw JSON of field in a captured request body.
func rawField(t *testing.T, r *llmtest.Request, field string) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatal(err)
	}
	return m[field]
}

// checkCompacted asserts the requests of key: work, work, the summary
// request, then the compacted conversation with what survived, with the
// system prompt and tools bytes the compaction found unchanged.
func checkCompacted(t *testing.T, h *harness, key, file string, work int) {
	t.Helper()
	reqs := h.srv.RequestsFor(key)
	var sum, post, first *llmtest.Request
	for i, r := range reqs {
		switch {
		case isSummaryRequest(r):
			sum = r
			if i > 0 && first == nil {
				first = reqs[i-1]
			}
		case isCompacted(r) && post == nil:
			post = r
		}
	}
	if sum == nil || post == nil || first == nil {
		t.Fatalf("%s: no summary request or no compacted request among %d", key, len(reqs))
	}
	// The bytes before the compaction are the last work request's: the
	// job's TodoWrite call loaded that deferred tool (deferred.go), so the
	// tools grew after the first request.
	for _, r := range []*llmtest.Request{sum, post} {
		for _, f := range []string{"system", "tools"} {
			if !bytes.Equal(rawField(t, first, f), rawField(t, r, f)) {
				t.Errorf("%s: %s bytes changed by the compaction", key, f)
			}
		}
	}
	// The summary request holds the whole conversation: the Read result
	// is in it, with the instructions last.
	if !strings.Contains(sum.LastUserText(), prompts.CompactInstructions("")) {
		t.Errorf("%s: summary request lacks the instructions", key)
	}
	if got := len(sum.Messages); got < work {
		t.Errorf("%s: summary request has %d messages, want at least %d", key, got, work)
	}
	// The post-compaction request: one user message with the summary, the
	// file read again, the todo list.
	if len(post.Messages) != 1 {
		t.Fatalf("%s: compacted request has %d messages", key, len(post.Messages))
	}
	text := post.Messages[0].Text()
	for _, want := range []string{key + ": wrote the todo list", "NOTES-CONTENT-42", file, "[in_progress] read the notes", prompts.CompactContinue()} {
		if !strings.Contains(text, want) {
			t.Errorf("%s: compacted request lacks %q:\n%s", key, want, text)
		}
	}
}

// compactEvents returns the compaction events of agent id.
func compactEvents(evs []run.Event, id string) (started, ended []run.Event) {
	for _, ev := range evs {
		if ev.AgentID != id {
			continue
		}
		switch ev.Type {
		case run.EventCompacting:
			started = append(started, ev)
		case run.EventCompactBoundary:
			ended = append(ended, ev)
		}
	}
	return started, ended
}

func TestMainAgentCompacts(t *testing.T) {
	t.Parallel()
	h, cfg, file := compactHarness(t)
	h.srv.ScriptFunc("MAIN-JOB", job("MAIN-JOB", file, fromStart))
	evs, res, rt := mustRun(t, cfg, "MAIN-JOB: a long job")
	defer rt.Close()
	if res.Text != "MAIN-JOB finished" {
		t.Fatalf("result %q", res.Text)
	}
	checkCompacted(t, h, "MAIN-JOB", file, 5)
	started, ended := compactEvents(evs, "")
	if len(started) != 1 || len(ended) != 1 {
		t.Fatalf("compaction events: %d started, %d ended", len(started), len(ended))
	}
	b := ended[0]
	if b.Compact.Trigger != "auto" || b.Compact.PreTokens != 5200 || b.Compact.PostTokens <= 0 || b.Usage != usage(5400) {
		t.Fatalf("boundary %+v usage %+v", b.Compact, b.Usage)
	}
	// The summary request is counted in the run's usage.
	if res.Usage.InputTokens != (2500-20)+(5200-20)+(5400-20)+(900-20) {
		t.Fatalf("usage %+v", res.Usage)
	}
	// The transcript keeps the whole history and the boundary; read
	// back, it starts from the compacted conversation.
	entries, err := transcript.ReadFile(rt.TranscriptPath())
	if err != nil {
		t.Fatal(err)
	}
	var bounds int
	for _, e := range entries {
		if e.Type == transcript.EntryCompactBoundary {
			bounds++
			if e.Compact.Trigger != "auto" || e.Compact.PreTokens != 5200 {
				t.Fatalf("boundary entry %+v", e.Compact)
			}
		}
	}
	if bounds != 1 || len(entries) < 8 {
		t.Fatalf("%d boundaries in %d entries", bounds, len(entries))
	}
	if msgs := transcript.Messages(entries); len(msgs) != 2 || !strings.HasPrefix(msgs[0].Text(), "This conversation was compacted") {
		t.Fatalf("read back: %d messages", len(msgs))
	}
}

func TestSyncChildCompacts(t *testing.T) {
	t.Parallel()
	h, cfg, file := compactHarness(t)
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("general-purpose", "CHILD-JOB: a long job")).WithUsage(usage(1000)), llmtest.Text("main done").WithUsage(usage(1200)))
	h.srv.ScriptFunc("CHILD-JOB", job("CHILD-JOB", file, fromStart))
	cfg.Background = BackgroundOff
	evs, res, rt := mustRun(t, cfg, "MAIN: delegate")
	defer rt.Close()
	if res.Text != "main done" || res.Subagents.Completed != 1 {
		t.Fatalf("result %q %+v", res.Text, res.Subagents)
	}
	checkCompacted(t, h, "CHILD-JOB", file, 5)
	contains(t, strings.Join(h.toolResults("MAIN"), "\n"), "CHILD-JOB finished")
	var child string
	for _, ev := range evs {
		if ev.Type == run.EventTaskStarted {
			child = ev.AgentID
		}
	}
	if started, ended := compactEvents(evs, child); child == "" || len(started) != 1 || len(ended) != 1 {
		t.Fatalf("child %q compaction events %d/%d", child, len(started), len(ended))
	}
	if started, _ := compactEvents(evs, ""); len(started) != 0 {
		t.Fatal("the main agent compacted")
	}
}

func TestBackgroundChildCompacts(t *testing.T) {
	t.Parallel()
	h, cfg, file := compactHarness(t)
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", bgCall("BG-JOB: a long job")).WithUsage(usage(1000)), llmtest.Text("started").WithUsage(usage(1100)),
		llmtest.Text("heard it").WithUsage(usage(1300)))
	h.srv.ScriptFunc("BG-JOB", job("BG-JOB", file, fromStart))
	rt := newRuntime(t, cfg)
	evs, _, err := runAll(t, context.Background(), rt, "MAIN: in the background")
	if err != nil {
		t.Fatal(err)
	}
	evs = append(evs, drainNotifications(t, rt)...)
	checkCompacted(t, h, "BG-JOB", file, 5)
	reqs := h.srv.RequestsFor("MAIN")
	if len(reqs) != 3 {
		t.Fatalf("%d main requests", len(reqs))
	}
	contains(t, reqs[2].LastUserText(), "BG-JOB finished")
	ids := taskIDs(evs)
	if started, ended := compactEvents(evs, ids[0]); len(started) != 1 || len(ended) != 1 {
		t.Fatalf("compaction events %d/%d", len(started), len(ended))
	}
}

// TestForkCompactsAndStillCannotFork: a fork's fork guard is a field of
// the agent, not its messages: after its compaction dropped the fork
// rules from its conversation, its Agent call is still refused (S-6.3).
func TestForkCompactsAndStillCannotFork(t *testing.T) {
	t.Parallel()
	h, cfg, file := compactHarness(t)
	cfg.ForkSubagent = true
	cfg.Background = BackgroundOff
	// The fork's own messages start after the inherited history: the
	// parent's prompt and Agent call, then the rules message.
	afterRules := func(r *llmtest.Request) int {
		for i, m := range r.Messages {
			for _, b := range m.Content {
				if m.Role == llm.RoleUser && b.Type == llm.BlockText && prompts.IsForkRules(b.Text) {
					return i
				}
			}
		}
		return 0
	}
	fork := job("FORK-JOB", file, afterRules)
	h.srv.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
		if hasForkRules(r) {
			return fork(r) // the fork, until its compaction
		}
		if len(r.Messages) == 1 {
			return llmtest.ToolUse("Agent", agentCall("", "the long job")).WithUsage(usage(1000))
		}
		return llmtest.Text("main done").WithUsage(usage(1200))
	})
	h.srv.Script("FORK-JOB",
		llmtest.ToolUse("Agent", agentCall("", "a nested fork")).WithUsage(usage(1000)),
		llmtest.Text("FORK-JOB finished").WithUsage(usage(1100)))
	evs, res, rt := mustRun(t, cfg, "MAIN: fork once")
	defer rt.Close()
	if res.Text != "main done" || res.Subagents.Spawned != 1 || res.Subagents.Refused[run.RefusedForkNested] != 1 {
		t.Fatalf("result %q subagents %+v", res.Text, res.Subagents)
	}
	reqs := h.srv.RequestsFor("FORK-JOB")
	if len(reqs) != 2 || !isCompacted(reqs[0]) || hasForkRules(reqs[1]) {
		t.Fatalf("fork's compacted requests: %d", len(reqs))
	}
	// The refusal reached the compacted fork.
	results := reqs[1].LastToolResults()
	if len(results) != 1 || !results[0].IsError {
		t.Fatalf("nested fork call result %+v", results)
	}
	contains(t, strings.Join(h.toolResults("MAIN"), "\n"), "FORK-JOB finished")
	var sum *llmtest.Request
	for _, r := range h.srv.RequestsFor("MAIN") {
		if isSummaryRequest(r) {
			sum = r
		}
	}
	if sum == nil || !hasForkRules(sum) {
		t.Fatal("the fork's summary request does not hold its conversation")
	}
	post := reqs[0].Messages[0].Text()
	for _, want := range []string{"FORK-JOB: wrote the todo list", "NOTES-CONTENT-42", "[in_progress] read the notes"} {
		contains(t, post, want)
	}
	var fid string
	for _, ev := range evs {
		if ev.Type == run.EventTaskStarted {
			fid = ev.AgentID
		}
	}
	if _, ended := compactEvents(evs, fid); len(ended) != 1 {
		t.Fatalf("fork compaction events %d", len(ended))
	}
}

func TestCompactionThresholdsFollowConfig(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cfg := h.config()
	cfg.Compaction.Window = testWindow
	rt := newRuntime(t, cfg)
	_ = rt
	a := &agent{run: &runState{rt: rt}, modelID: "claude-sonnet-4-5"}
	if c := compactOf(a).compaction(""); c == nil || c.Thresholds != compact.Compute(testWindow, 0, 0) || !c.Auto {
		t.Fatalf("compaction %+v", c)
	}
	rt.cfg.Compaction.DisableAuto = true
	if c := compactOf(a).compaction(""); c == nil || c.Auto {
		t.Fatal("DisableAuto ignored")
	}
	rt.cfg.Compaction.Disable = true
	if compactOf(a).compaction("") != nil {
		t.Fatal("Disable ignored")
	}
}

// TestCompactCommandAndResume: "/compact [instructions]" as a prompt
// compacts the idle main agent (the instructions reach the summary
// request), the next prompt continues from the summary, and a session
// resumed from the transcript (--resume) does too.
func TestCompactCommandAndResume(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.ScriptFunc("MAIN-CMD", func(r *llmtest.Request) llmtest.Turn {
		switch {
		case isSummaryRequest(r):
			return llmtest.Text("<summary>MAIN-CMD: answered the first question</summary>").WithUsage(usage(300))
		case isCompacted(r):
			return llmtest.Text("after compaction: " + r.LastUserText()).WithUsage(usage(200))
		}
		return llmtest.Text("first answer").WithUsage(usage(100))
	})
	cfg := h.config()
	rt := newRuntime(t, cfg)
	if _, _, err := runAll(t, context.Background(), rt, "MAIN-CMD: first question"); err != nil {
		t.Fatal(err)
	}
	evs, res, err := runAll(t, context.Background(), rt, "/compact keep the numbers")
	if err != nil || res == nil || res.IsError || res.Text != compacted {
		t.Fatalf("res %+v err %v", res, err)
	}
	if _, ended := compactEvents(evs, ""); len(ended) != 1 || ended[0].Compact.Trigger != "manual" {
		t.Fatalf("events %+v", ended)
	}
	reqs := h.srv.RequestsFor("MAIN-CMD")
	if len(reqs) != 2 || !strings.Contains(reqs[1].LastUserText(), "Additional instructions for this summary:\nkeep the numbers") {
		t.Fatalf("summary request: %d requests", len(reqs))
	}
	if res.Usage.InputTokens != 280 {
		t.Fatalf("the summary request's usage is not the run's: %+v", res.Usage)
	}
	_, res, err = runAll(t, context.Background(), rt, "second question")
	if err != nil || !strings.HasPrefix(res.Text, "after compaction") {
		t.Fatalf("res %+v err %v", res, err)
	}
	reqs = h.srv.RequestsFor("MAIN-CMD")
	next := reqs[len(reqs)-1]
	if !isCompacted(next) || len(next.Messages) != 1 || !strings.Contains(next.Messages[0].Text(), "second question") {
		t.Fatalf("next request after /compact: %d messages", len(next.Messages))
	}
	// --resume: the transcript read back continues from the compacted
	// conversation, not the full history.
	entries, err := transcript.ReadFile(rt.TranscriptPath())
	if err != nil {
		t.Fatal(err)
	}
	cfg2 := h.config()
	cfg2.History = transcript.Messages(entries)
	cfg2.SessionID = rt.SessionID()
	rt2 := newRuntime(t, cfg2)
	if _, _, err := runAll(t, context.Background(), rt2, "third question"); err != nil {
		t.Fatal(err)
	}
	reqs = h.srv.RequestsFor("MAIN-CMD")
	resumed := reqs[len(reqs)-1]
	if !isCompacted(resumed) || len(resumed.Messages) != 3 || strings.Contains(string(resumed.Body), "MAIN-CMD: first question") {
		t.Fatalf("resumed request: %d messages\n%s", len(resumed.Messages), resumed.Body)
	}
	// Nothing to compact: a clear error.
	rt3 := newRuntime(t, h.config())
	_, res, err = runAll(t, context.Background(), rt3, "/compact")
	if err == nil || !strings.Contains(err.Error(), "no conversation to compact") {
		t.Fatalf("res %+v err %v", res, err)
	}
}

// TestRuntimeCompactRunningChild: Runtime.Compact on a running sub-agent
// compacts it between its turns, with the embedder's instructions.
func TestRuntimeCompactRunningChild(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("general-purpose", "LIVE-CHILD: work")).WithUsage(usage(100)), llmtest.Text("main done").WithUsage(usage(100)))
	var rt *Runtime
	var asked error
	h.srv.ScriptFunc("LIVE-CHILD", func(r *llmtest.Request) llmtest.Turn {
		switch {
		case isSummaryRequest(r):
			return llmtest.Text("<summary>LIVE-CHILD: asked to compact</summary>").WithUsage(usage(300))
		case isCompacted(r):
			return llmtest.Text("LIVE-CHILD done").WithUsage(usage(100))
		}
		for _, ti := range rt.Tasks() {
			if !ti.Status.Terminal() {
				asked = rt.Compact(context.Background(), ti.ID, "from the embedder")
			}
		}
		return llmtest.ToolUse("TodoWrite", map[string]any{"todos": []map[string]any{{"content": "x", "status": "pending", "activeForm": "x"}}}).WithUsage(usage(100))
	})
	cfg := h.config()
	cfg.Background = BackgroundOff
	rt = newRuntime(t, cfg)
	_, res, err := runAll(t, context.Background(), rt, "MAIN: go")
	if err != nil || asked != nil || res.Text != "main done" {
		t.Fatalf("res %+v err %v asked %v", res, err, asked)
	}
	var sum *llmtest.Request
	for _, r := range h.srv.RequestsFor("LIVE-CHILD") {
		if isSummaryRequest(r) {
			sum = r
		}
	}
	if sum == nil || !strings.Contains(sum.LastUserText(), "from the embedder") {
		t.Fatal("no summary request with the embedder's instructions")
	}
	contains(t, strings.Join(h.toolResults("MAIN"), "\n"), "LIVE-CHILD done")
	if err := rt.Compact(context.Background(), "nobody", ""); err == nil {
		t.Fatal("compacting an unknown agent succeeded")
	}
}

// TestPromptTooLongRecovered: the server's "prompt is too long" is
// recovered once by compaction; a server that keeps saying it ends the
// agent with a clear error, after a bounded number of requests.
func TestPromptTooLongRecovered(t *testing.T) {
	t.Parallel()
	tooLong := llmtest.HTTPError(400, "prompt is too long: 9100 tokens > 8000 maximum")
	h := newHarness(t)
	refused := false
	h.srv.ScriptFunc("LONG-ONCE", func(r *llmtest.Request) llmtest.Turn {
		switch {
		case isSummaryRequest(r):
			return llmtest.Text("<summary>LONG-ONCE: one todo written</summary>").WithUsage(usage(300))
		case isCompacted(r):
			return llmtest.Text("LONG-ONCE finished").WithUsage(usage(200))
		case len(r.Messages) == 1:
			return llmtest.ToolUse("TodoWrite", map[string]any{"todos": []map[string]any{{"content": "x", "status": "pending", "activeForm": "x"}}}).WithUsage(usage(100))
		}
		refused = true
		return tooLong
	})
	_, res, rt := mustRun(t, h.config(), "LONG-ONCE: go")
	defer rt.Close()
	if !refused || res.Text != "LONG-ONCE finished" {
		t.Fatalf("res %q refused %v", res.Text, refused)
	}

	h2 := newHarness(t)
	h2.srv.ScriptFunc("LONG-ALWAYS", func(r *llmtest.Request) llmtest.Turn {
		if isSummaryRequest(r) {
			return llmtest.Text("<summary>LONG-ALWAYS: nothing yet</summary>").WithUsage(usage(300))
		}
		return tooLong
	})
	rt2 := newRuntime(t, h2.config())
	_, res2, err := runAll(t, context.Background(), rt2, "LONG-ALWAYS: go")
	if err == nil || !strings.Contains(err.Error(), "still too long for the model right after compaction") || res2 == nil || !res2.IsError {
		t.Fatalf("err %v res %+v", err, res2)
	}
	if n := len(h2.srv.RequestsFor("LONG-ALWAYS")); n != 3 {
		t.Fatalf("%d requests, want 3 (refused, summary, refused)", n)
	}
}

// TestCompactHooks: real hook scripts. PreCompact sees the trigger and
// its stdout joins the summary's instructions; SessionStart with source
// compact adds context to the compacted conversation; PostCompact gets
// the summary. A PreCompact hook that exits 2 stops a /compact, which
// fails saying why, with no summary request.
func TestCompactHooks(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	pre := w.script("pre.sh", "#!/bin/sh\njq -c . >> \"$HOOK_LOG\"\necho HOOK-EXTRA-INSTRUCTIONS\n")
	start := w.script("start.sh", "#!/bin/sh\njq -c . >> \"$HOOK_LOG\"\necho SESSION-COMPACT-CONTEXT\n")
	cfg := w.config(`{
		"PreCompact": [{"matcher": "auto", "hooks": [{"type": "command", "command": "` + pre + `"}]}],
		"PostCompact": [{"hooks": [{"type": "command", "command": "` + filepath.Join(w.scripts, "log.sh") + `"}]}],
		"SessionStart": [{"matcher": "compact", "hooks": [{"type": "command", "command": "` + start + `"}]}]
	}`)
	cfg.Compaction.Window = testWindow
	file := filepath.Join(w.dir, "notes.txt")
	if err := os.WriteFile(file, []byte("NOTES-CONTENT-42\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.srv.ScriptFunc("HOOKED-JOB", job("HOOKED-JOB", file, fromStart))
	_, res, rt := mustRun(t, cfg, "HOOKED-JOB: a long job")
	defer rt.Close()
	if res.Text != "HOOKED-JOB finished" {
		t.Fatalf("result %q", res.Text)
	}
	var sum, post *llmtest.Request
	for _, r := range w.srv.RequestsFor("HOOKED-JOB") {
		switch {
		case isSummaryRequest(r):
			sum = r
		case isCompacted(r):
			post = r
		}
	}
	if sum == nil || post == nil {
		t.Fatal("no compaction")
	}
	contains(t, sum.LastUserText(), "Additional instructions for this summary:\nHOOK-EXTRA-INSTRUCTIONS")
	contains(t, post.Messages[0].Text(), "SESSION-COMPACT-CONTEXT")
	logged, err := os.ReadFile(w.log)
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	for _, line := range strings.Split(strings.TrimSpace(string(logged)), "\n") {
		var in map[string]any
		if err := json.Unmarshal([]byte(line), &in); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		events = append(events, in["hook_event_name"].(string))
		switch in["hook_event_name"] {
		case "PreCompact":
			if in["trigger"] != "auto" || in["custom_instructions"] != "" {
				t.Errorf("PreCompact input %v", in)
			}
		case "PostCompact":
			if in["trigger"] != "auto" || !strings.Contains(in["compact_summary"].(string), "HOOKED-JOB: wrote the todo list") {
				t.Errorf("PostCompact input %v", in)
			}
		case "SessionStart":
			if in["source"] != "compact" {
				t.Errorf("SessionStart input %v", in)
			}
		}
	}
	if got := strings.Join(events, " "); got != "PreCompact SessionStart PostCompact" {
		t.Fatalf("hooks ran: %s", got)
	}

	// A blocking PreCompact stops /compact.
	w2 := newHookWorld(t)
	block := w2.script("block.sh", "#!/bin/sh\ncat > /dev/null\necho 'no compaction now' >&2\nexit 2\n")
	cfg2 := w2.config(`{"PreCompact": [{"matcher": "manual", "hooks": [{"type": "command", "command": "` + block + `"}]}]}`)
	w2.srv.ScriptFunc("BLOCKED", func(r *llmtest.Request) llmtest.Turn {
		if isSummaryRequest(r) {
			t.Error("summary requested despite the hook")
		}
		return llmtest.Text("hello").WithUsage(usage(100))
	})
	rt2 := newRuntime(t, cfg2)
	if _, _, err := runAll(t, context.Background(), rt2, "BLOCKED: hi"); err != nil {
		t.Fatal(err)
	}
	_, res2, err := runAll(t, context.Background(), rt2, "/compact")
	if err == nil || !strings.Contains(err.Error(), "no compaction now") || res2 == nil || !res2.IsError {
		t.Fatalf("err %v res %+v", err, res2)
	}
	if err := rt2.Compact(context.Background(), "", ""); err == nil || !strings.Contains(err.Error(), "no compaction now") {
		t.Fatalf("Runtime.Compact err %v", err)
	}
	if n := len(w2.srv.RequestsFor("BLOCKED")); n != 1 {
		t.Fatalf("%d requests", n)
	}
}

// TestDefinitionWindow: an agent definition's autoCompactWindow is that
// agent's window: its child compacts in 8,000 tokens while the session
// keeps the model's 200,000.
func TestDefinitionWindow(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	def, diags := agentdef.ParseFile("/defs/small.md", []byte("---\nname: small\ndescription: a small window\nautoCompactWindow: 8000\n---\nWork.\n"), agentdef.SourceProject)
	if len(diags) > 0 || def.AutoCompactWindow != 8000 {
		t.Fatalf("definition %+v diags %v", def, diags)
	}
	file := filepath.Join(h.dir, "notes.txt")
	if err := os.WriteFile(file, []byte("NOTES-CONTENT-42\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The main agent's 5,200-token answers stay far below 167,000.
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("small", "SMALL-JOB: a long job")).WithUsage(usage(5200)), llmtest.Text("main done").WithUsage(usage(5300)))
	h.srv.ScriptFunc("SMALL-JOB", job("SMALL-JOB", file, fromStart))
	cfg := h.config()
	cfg.Background = BackgroundOff
	cfg.Agents = append(agentdef.Builtins(), def)
	evs, res, rt := mustRun(t, cfg, "MAIN: delegate")
	defer rt.Close()
	if res.Text != "main done" {
		t.Fatalf("result %q", res.Text)
	}
	checkCompacted(t, h, "SMALL-JOB", file, 5)
	if started, _ := compactEvents(evs, ""); len(started) != 0 {
		t.Fatal("the main agent compacted")
	}
}

// TestCompactHooksInEveryKind: PreCompact and PostCompact fire through
// the one dispatcher for a sync child, a background child and a fork
// too, each with its own agent id and type (S-14.3).
func TestCompactHooksInEveryKind(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	logger := filepath.Join(w.scripts, "log.sh")
	cfg := w.config(`{
		"PreCompact": [{"hooks": [{"type": "command", "command": "` + logger + `"}]}],
		"PostCompact": [{"hooks": [{"type": "command", "command": "` + logger + `"}]}]
	}`)
	cfg.Compaction.Window = testWindow
	cfg.ForkSubagent = true
	file := filepath.Join(w.dir, "notes.txt")
	if err := os.WriteFile(file, []byte("NOTES-CONTENT-42\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	afterRules := func(r *llmtest.Request) int {
		for i, m := range r.Messages {
			for _, b := range m.Content {
				if m.Role == llm.RoleUser && b.Type == llm.BlockText && prompts.IsForkRules(b.Text) {
					return i
				}
			}
		}
		return 0
	}
	fork := job("FORK-K", file, afterRules)
	w.srv.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
		if hasForkRules(r) {
			return fork(r)
		}
		switch len(r.Messages) {
		case 1:
			return llmtest.ToolUses(
				llmtest.Call{Name: "Agent", Input: agentCall("general-purpose", "SYNC-K: a long job")},
				llmtest.Call{Name: "Agent", Input: bgCall("BGJO-K: a long job")},
				llmtest.Call{Name: "Agent", Input: agentCall("", "the long job")}).WithUsage(usage(1000))
		}
		return llmtest.Text("main done").WithUsage(usage(1100))
	})
	w.srv.ScriptFunc("SYNC-K", job("SYNC-K", file, fromStart))
	w.srv.ScriptFunc("BGJO-K", job("BGJO-K", file, fromStart))
	w.srv.ScriptFunc("FORK-K", job("FORK-K", file, fromStart))
	rt := newRuntime(t, cfg)
	if _, _, err := runAll(t, context.Background(), rt, "MAIN: three kinds"); err != nil {
		t.Fatal(err)
	}
	drainNotifications(t, rt)
	logged, err := os.ReadFile(w.log)
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(logged)), "\n") {
		var in map[string]any
		if err := json.Unmarshal([]byte(line), &in); err != nil {
			t.Fatal(err)
		}
		id, _ := in["agent_id"].(string)
		typ, _ := in["agent_type"].(string)
		if id == "" || in["trigger"] != "auto" {
			t.Errorf("hook input without its agent: %v", in)
		}
		types[typ+" "+in["hook_event_name"].(string)]++
	}
	for _, want := range []string{"general-purpose PreCompact", "general-purpose PostCompact", "fork PreCompact", "fork PostCompact"} {
		if types[want] == 0 {
			t.Errorf("no %s in %v", want, types)
		}
	}
	if types["general-purpose PreCompact"] != 2 {
		t.Errorf("want the sync and the background child's PreCompact: %v", types)
	}
}
