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
	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/llm/anthropic"
	"github.com/cadre-dev/cadre/llm/llmtest"
)

// forkBenchRun runs one fan-out of n children against a fresh scripted
// server (a cold prompt cache): forks (no subagent_type, the fork path on)
// or fresh children, general-purpose or, with mixed, four user-defined
// types in turn (the same tools, bodies of their own). With ctxFile (a file path), the
// parent reads that file before it fans out, and every child needs it: a
// fork has it in its inherited conversation and answers at once, a fresh
// child reads it again first. It returns every child request.
func forkBenchRun(b *testing.B, n int, fork, mixed bool, ctxFile string) []*llmtest.Request {
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
			switch {
			case fork:
				delete(in, "subagent_type")
			case mixed:
				in["subagent_type"] = benchTypes[i%len(benchTypes)].Name
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
	var agents []*agentdef.Definition
	if mixed {
		agents = append(agentdef.Builtins(), benchTypes...)
	}
	cwd := b.TempDir()
	if ctxFile != "" {
		cwd = filepath.Dir(ctxFile) // the file is the workspace's, readable without a prompt
	}
	rt, err := cadre.New(cadre.Config{Model: m, ModelID: "claude-sonnet-4-5", Cwd: cwd, NoTranscript: true,
		// Foreground: the run ends when every child has reported (forks
		// run in the background by default; the cache figures are the same).
		ForkSubagent: fork, Limits: cadre.Limits{MaxRunning: n}, Background: cadre.BackgroundOff, Agents: agents})
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
		for _, tr := range r.LastToolResults() {
			if tr.IsError {
				b.Fatalf("request %d: a tool call failed: %s", r.Seq, tr.ResultText())
			}
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

// benchTypes are four agent types with the tools of general-purpose (all)
// and bodies of their own, for the mixed fan-out.
var benchTypes = func() []*agentdef.Definition {
	var out []*agentdef.Definition
	for _, name := range []string{"reviewer", "tester", "documenter", "refactorer"} {
		out = append(out, &agentdef.Definition{Name: name, Description: "the " + name, Source: agentdef.SourceProject,
			Body: "You are the " + name + " of this project. " + strings.Repeat("Work on what the task names, as a "+name+" would, and report what you found with absolute paths. ", 6)})
	}
	return out
}()

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
		for _, kind := range []string{"fork", "fresh", "mixed"} {
			fork, mixed := kind == "fork", kind == "mixed"
			name := ctx + "/" + kind
			path := ""
			if ctx == "context" {
				path = file
			}
			b.Run(name, func(b *testing.B) {
				var bytes, full int64
				var fracs []float64
				for b.Loop() {
					for _, r := range forkBenchRun(b, n, fork, mixed, path) {
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
