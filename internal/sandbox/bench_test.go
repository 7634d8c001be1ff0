package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/sandbox"
	"github.com/cadre-dev/cadre/tool"
	"github.com/cadre-dev/cadre/tool/builtin"
)

// BenchmarkBashCall is the cost of one Bash tool call running `true`:
// unconfined, in the sandbox (network off, the default), in the sandbox
// with the network on (no network namespace to create), and in the sandbox
// with masks (a masked directory and a masked file, as Read(./secrets/**)
// and Read(.env) give).
// median-ns and p95-ns are wall time per call, the figures BENCHMARKS.md
// records.
func BenchmarkBashCall(b *testing.B) {
	work := b.TempDir()
	for _, p := range []string{"secrets/key.txt", ".env"} {
		full := filepath.Join(work, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("x"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	env := &tool.Env{Cwd: work, Files: tool.NewFileState()}
	var sb, sbNet *sandbox.Sandbox
	if s, err := sandbox.New(context.Background(), sandbox.Config{Writable: sandbox.DefaultWritable(os.Getenv)}); err == nil {
		sb = s
	}
	if s, err := sandbox.New(context.Background(), sandbox.Config{Writable: sandbox.DefaultWritable(os.Getenv), Network: true}); err == nil {
		sbNet = s
	}
	masks := func(string, []string) ([]string, []string, error) {
		return []string{filepath.Join(work, "secrets"), filepath.Join(work, ".env")}, nil, nil
	}
	cases := []struct {
		name string
		cfg  builtin.Config
	}{
		{"unconfined", builtin.Config{}},
		{"sandboxed", builtin.Config{Sandbox: &sandbox.Bash{Sandbox: sb}}},
		{"sandboxed-network-on", builtin.Config{Sandbox: &sandbox.Bash{Sandbox: sbNet}}},
		{"sandboxed-masks", builtin.Config{Sandbox: &sandbox.Bash{Sandbox: sb, Masks: masks}}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			if (sb == nil || sbNet == nil) && c.cfg.Sandbox != nil {
				b.Skip("bubblewrap cannot run here")
			}
			bash := builtin.NewBash(c.cfg)
			in := []byte(`{"command":"true"}`)
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				out, err := bash.Run(context.Background(), env, in)
				if err != nil || out.IsError {
					b.Fatalf("%v %q", err, out.Text)
				}
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "median-ns")
			b.ReportMetric(float64(took[len(took)*95/100].Nanoseconds()), "p95-ns")
		})
	}
}
