package cadre_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm/anthropic"
	"github.com/cadre-dev/cadre/llm/llmtest"
)

// forkBenchRun runs one fan-out of n children against a fresh scripted
// server (a cold prompt cache): forks (no subagent_type, the fork path on)
// or fresh general-purpose children. With ctxFile (a file path), the
// parent reads that file before it fans out, and every child needs it: a
// fork has it in its inherited conversation and answers at once, a fresh
// child reads it again first. It returns every child request.
func forkBenchRun(b *testing.B, n int, fork bool, ctxFile string) []*llmtest.Request {
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.ScriptFunc("", func(r *llmtest.Request) llmtest.Turn {
		first, last := r.FirstUserText(), r.LastUserText()
		if i, ok := childIndex(last); ok && fork && strings.Contains(last, "from Agent call") {
			return llmtest.Text("done " + strconv.Itoa(i))
		}
		if !strings.Contains(first, benchMain) {
			i, _ := childIndex(first)
			if ctxFile != "" && len(r.LastToolResults()) == 0 {
				return llmtest.ToolUse("Read", map[string]any{"file_path": ctxFile})
			}
			return llmtest.Text("done " + strconv.Itoa(i))
		}
		results := r.LastToolResults()
		switch {
		case ctxFile != "" && len(r.Messages) == 1:
			return llmtest.ToolUse("Read", map[string]any{"file_path": ctxFile})
		case len(results) > 1 || len(results) == 1 && ctxFile == "":
			return llmtest.Text("all done")
		}
		var calls []llmtest.Call
		for i := 1; i <= n; i++ {
			in := childTask(i, "/nonexistent")
			if fork {
				delete(in, "subagent_type")
			}
			calls = append(calls, llmtest.Call{Name: "Agent", Input: in})
		}
		return llmtest.ToolUses(calls...)
	})
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	m, err := anthropic.New(anthropic.Config{APIKey: "test", BaseURL: srv.URL(), HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		b.Fatal(err)
	}
	rt, err := cadre.New(cadre.Config{Model: m, ModelID: "claude-sonnet-4-5", Cwd: b.TempDir(), NoTranscript: true,
		ForkSubagent: fork, Limits: cadre.Limits{MaxRunning: n}})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	for _, err := range rt.Run(context.Background(), benchPrompt(n)) {
		if err != nil {
			b.Fatal(err)
		}
	}
	var children []*llmtest.Request
	for _, r := range srv.Requests() {
		if r.Protocol == "" {
			continue
		}
		isFork := strings.Contains(r.LastUserText(), "from Agent call")
		if isFork || !strings.Contains(r.FirstUserText(), benchMain) {
			children = append(children, r)
		}
	}
	want := n
	if ctxFile != "" && !fork {
		want = 2 * n
	}
	if len(children) != want {
		b.Fatalf("%d child requests, want %d", len(children), want)
	}
	return children
}

// BenchmarkForkFanout measures what the children of one fan-out send and
// what the prompt cache saves them, forks against fresh general-purpose
// children, at fan-out 16 (llmtest's cache accounting: tokens = bytes/4).
// "bare": the parent fans out at once; "context": the parent first reads a
// 40 KB file every child needs. Metrics per run, over every child request:
// bytes sent, input tokens billed at full price (not read from the cache:
// uncached input plus cache writes), and the median cached fraction of a
// child's first request.
func BenchmarkForkFanout(b *testing.B) {
	const n = 16
	file := filepath.Join(b.TempDir(), "context.txt")
	line := "func example() { return } // a line of the source file the parent read before it fanned out\n"
	if err := os.WriteFile(file, []byte(strings.Repeat(line, 40<<10/len(line))), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, ctx := range []string{"bare", "context"} {
		for _, fork := range []bool{true, false} {
			name := ctx + "/fresh"
			if fork {
				name = ctx + "/fork"
			}
			path := ""
			if ctx == "context" {
				path = file
			}
			b.Run(name, func(b *testing.B) {
				var bytes, full int64
				var fracs []float64
				for b.Loop() {
					for _, r := range forkBenchRun(b, n, fork, path) {
						u := r.Usage
						bytes += int64(len(r.Body))
						full += u.InputTokens + u.CacheWriteTokens
						// A fork answers in its first request; a fresh
						// child's first request has no tool results.
						if fork || len(r.LastToolResults()) == 0 {
							fracs = append(fracs, float64(u.CacheReadTokens)/float64(u.InputTokens+u.CacheReadTokens+u.CacheWriteTokens))
						}
					}
				}
				slices.Sort(fracs)
				runs := float64(b.N)
				b.ReportMetric(float64(bytes)/runs, "child-req-bytes/run")
				b.ReportMetric(float64(full)/runs, "full-price-tokens/run")
				b.ReportMetric(fracs[len(fracs)/2], "median-first-cached-frac")
			})
		}
	}
}
