package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/internal/compact"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/prompts"
)

// Clearing old tool results (issue 27 point 7): a long job reads large
// files one after the other in a window that fills up. With clearing
// off, the agent compacts fully; on, the old Read results are replaced
// by markers first. The server's honest cache accounting (llmtest:
// prefix hashes, bytes/4 tokens) gives what each choice costs.

const (
	clearWindow = 120_000 // compaction at ~87,000 tokens, warning at ~72,000
	clearFiles  = 14      // each read is ~10,000 tokens
	clearFileKB = 40
)

// clearCost sums the usage of a run's requests.
type clearCost struct {
	requests, summaries, cleared int
	input, read, write, output   int64
	bytes                        int
	// breaks counts requests that read less of the cache than the
	// request before them sent: a prefix they had to write again.
	breaks int
}

// weighted is the cost in uncached-input-token units at Anthropic's
// prices (cache write 1.25, read 0.1, output 5).
func (c clearCost) weighted() float64 {
	return float64(c.input) + 1.25*float64(c.write) + 0.1*float64(c.read) + 5*float64(c.output)
}

// runClearJob runs the job with clearing on or off and returns the
// captured requests and their costs.
func runClearJob(t *testing.T, clear bool, nfiles int) ([]*llmtest.Request, clearCost, string) {
	t.Helper()
	h := newHarness(t)
	cfg := h.config()
	cfg.Compaction.Window = clearWindow
	cfg.Compaction.ClearToolResults = clear
	var files []string
	for i := range nfiles {
		p := filepath.Join(h.dir, fmt.Sprintf("part%02d.txt", i))
		var b strings.Builder
		for n := 0; b.Len() < clearFileKB<<10; n++ {
			fmt.Fprintf(&b, "part %02d line %05d: the quick brown fox jumps over the lazy dog, again and again\n", i, n)
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	var mu sync.Mutex
	step := 0
	h.srv.ScriptFunc("CLEAR-JOB", func(r *llmtest.Request) llmtest.Turn {
		if isSummaryRequest(r) {
			return llmtest.Text("<summary>CLEAR-JOB: reading the parts in order; next: the next part</summary>")
		}
		mu.Lock()
		defer mu.Unlock()
		if step < len(files) {
			step++
			return llmtest.ToolUse("Read", map[string]any{"file_path": files[step-1]})
		}
		return llmtest.Text("CLEAR-JOB finished")
	})
	_, res, rt := mustRun(t, cfg, "CLEAR-JOB: read every part")
	defer rt.Close()
	if res.Text != "CLEAR-JOB finished" {
		t.Fatalf("result %q", res.Text)
	}
	reqs := h.srv.RequestsFor("CLEAR-JOB")
	var c clearCost
	var prev int64
	for _, r := range reqs {
		c.requests++
		if isSummaryRequest(r) {
			c.summaries++
		}
		u := r.Usage
		c.input, c.read, c.write, c.output = c.input+u.InputTokens, c.read+u.CacheReadTokens, c.write+u.CacheWriteTokens, c.output+u.OutputTokens
		c.bytes += len(r.Body)
		if prev > 0 && u.CacheReadTokens < prev {
			c.breaks++
		}
		prev = u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens
	}
	for _, r := range reqs {
		if n := clearedResults(r); n > c.cleared {
			c.cleared = n
		}
	}
	return reqs, c, rt.TranscriptPath()
}

// clearedResults counts the cleared tool results r sends.
func clearedResults(r *llmtest.Request) int {
	n := 0
	for _, m := range r.Messages {
		for _, b := range m.Content {
			if b.Type == llm.BlockToolResult && strings.HasPrefix(b.ResultText(), prompts.ClearedToolResultPrefix) {
				n++
			}
		}
	}
	return n
}

// TestClearOldToolResultsScenario asserts the cleared request and logs
// what clearing costs against full compaction (BENCHMARKS.md).
func TestClearOldToolResultsScenario(t *testing.T) {
	t.Parallel()
	offReqs, off, _ := runClearJob(t, false, clearFiles)
	onReqs, on, tpath := runClearJob(t, true, clearFiles)
	th := compact.Compute(clearWindow, 0, 0)
	t.Logf("thresholds %+v", th)
	logCost := func(name string, c clearCost) {
		t.Logf("clearing %s: %d requests (%d summaries), %d results cleared, uncached %d, cache read %d, cache write %d, output %d tokens, %d request bytes, %d cache breaks, weighted %.0f",
			name, c.requests, c.summaries, c.cleared, c.input, c.read, c.write, c.output, c.bytes, c.breaks, c.weighted())
	}
	logCost("off", off)
	logCost("on", on)
	if os.Getenv("CADRE_MEASURE_CLEARING") != "" {
		for _, n := range []int{30, 60} {
			_, off, _ := runClearJob(t, false, n)
			_, on, _ := runClearJob(t, true, n)
			logCost(fmt.Sprintf("off, %d reads", n), off)
			logCost(fmt.Sprintf("on, %d reads", n), on)
		}
	}
	if clearedResults(offReqs[len(offReqs)-1]) != 0 || off.summaries == 0 {
		t.Fatalf("clearing off: %d summaries, %d cleared", off.summaries, off.cleared)
	}
	// Clearing on: the first request that clears keeps every call, clears
	// the oldest results and keeps the latest ones whole.
	var first *llmtest.Request
	for _, r := range onReqs {
		if clearedResults(r) > 0 {
			first = r
			break
		}
	}
	if first == nil {
		t.Fatal("clearing on: no request cleared a result")
	}
	var uses, results []llm.Block
	for _, m := range first.Messages {
		for _, b := range m.Content {
			switch b.Type {
			case llm.BlockToolUse:
				uses = append(uses, b)
			case llm.BlockToolResult:
				results = append(results, b)
			}
		}
	}
	if len(uses) != len(results) || len(uses) < compact.KeepRecentResults+2 {
		t.Fatalf("cleared request: %d calls, %d results", len(uses), len(results))
	}
	for i, b := range results {
		text := b.ResultText()
		recent := i >= len(results)-compact.KeepRecentResults
		switch {
		case recent && strings.HasPrefix(text, prompts.ClearedToolResultPrefix):
			t.Errorf("result %d of %d (recent) was cleared", i+1, len(results))
		case recent && !strings.Contains(text, fmt.Sprintf("part %02d line 00000", i)):
			t.Errorf("result %d of %d (recent) lost its content", i+1, len(results))
		case !recent && !strings.Contains(text, tpath):
			t.Errorf("old result %d of %d not cleared with the transcript path: %.120q", i+1, len(results), text)
		}
		if !strings.Contains(string(uses[i].Input), fmt.Sprintf("part%02d.txt", i)) {
			t.Errorf("call %d lost its input: %s", i+1, uses[i].Input)
		}
	}
	// The cleared request is below the compaction point: no full
	// compaction was needed for the whole job.
	if on.summaries != 0 {
		t.Errorf("clearing on: %d summaries", on.summaries)
	}
}
