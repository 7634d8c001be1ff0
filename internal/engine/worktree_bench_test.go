package engine

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/llm/anthropic"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/run"
)

// benchRepo makes a repository of 10,000 files (100 directories of 100
// files of about 300 bytes) with one commit.
func benchRepo(b *testing.B) string {
	b.Helper()
	dir, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	runGit(b, dir, "init", "-q", "-b", "main")
	body := strings.Repeat("// some source text of a typical small file\n", 7)
	for d := range 100 {
		sub := filepath.Join(dir, fmt.Sprintf("pkg%02d", d))
		if err := os.Mkdir(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 100 {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("file%02d.go", f)), fmt.Appendf(nil, "package pkg%02d\n%s", d, body), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	runGit(b, dir, "add", "-A")
	runGit(b, dir, "commit", "-q", "-m", "10,000 files")
	return dir
}

// BenchmarkWorktreeSpawn measures the spawn latency of isolated children
// through the whole runtime on a repository of 10,000 files: spawn-ns/op
// is the time from the main agent's Agent calls to the last child's first
// model request, with and without isolation (the difference is the
// worktree: git's checkout and cadre's bookkeeping, which BenchmarkWorktree
// in internal/worktree splits); ns/op is the whole run, the trees'
// inspection and removal included.
func BenchmarkWorktreeSpawn(b *testing.B) {
	repo := benchRepo(b)
	for _, fanout := range []int{1, 16} {
		for _, iso := range []bool{false, true} {
			b.Run(fmt.Sprintf("fanout=%d/isolation=%v", fanout, iso), func(b *testing.B) {
				var spawn time.Duration
				round := 0
				for b.Loop() {
					srv := llmtest.NewServer()
					var calls []llmtest.Call
					for i := range fanout {
						in := agentCall("", fmt.Sprintf("KID-%d-%d: look", round, i))
						if iso {
							in["isolation"] = "worktree"
						}
						calls = append(calls, llmtest.Call{Name: "Agent", Input: in})
					}
					srv.Script(fmt.Sprintf("MAIN-%d", round), llmtest.ToolUses(calls...), llmtest.Text("done"))
					var mu sync.Mutex
					var last time.Time
					for i := range fanout {
						srv.ScriptFunc(fmt.Sprintf("KID-%d-%d", round, i), func(*llmtest.Request) llmtest.Turn {
							mu.Lock()
							if now := time.Now(); now.After(last) {
								last = now
							}
							mu.Unlock()
							return llmtest.Text("ok")
						})
					}
					cfg := benchConfig(b, srv, repo)
					rt, err := New(cfg)
					if err != nil {
						b.Fatal(err)
					}
					var asked time.Time
					for ev, err := range rt.Run(context.Background(), fmt.Sprintf("MAIN-%d: go", round)) {
						if err != nil {
							b.Fatal(err)
						}
						if ev.Type == run.EventToolStart && ev.AgentID == "" && asked.IsZero() {
							asked = time.Now()
						}
					}
					spawn += last.Sub(asked)
					srv.Close()
					round++
				}
				b.ReportMetric(float64(spawn.Nanoseconds())/float64(b.N), "spawn-ns/op")
			})
		}
	}
}

// benchConfig is a runtime config against srv in dir, without transcripts.
func benchConfig(b *testing.B, srv *llmtest.Server, dir string) Config {
	b.Helper()
	tr := &http.Transport{}
	b.Cleanup(tr.CloseIdleConnections)
	m, err := anthropic.New(anthropic.Config{APIKey: "test", BaseURL: srv.URL(), HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		b.Fatal(err)
	}
	return Config{Model: m, ModelID: "claude-sonnet-4-5", Cwd: dir, NoTranscript: true}
}
