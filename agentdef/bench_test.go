package agentdef

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// benchProject writes 500 agent files (the corpus, topped up with renamed
// copies) into a project's .claude/agents and returns the project dir.
func benchProject(b *testing.B) string {
	b.Helper()
	corpus := corpusDir(b)
	proj := b.TempDir()
	agents := filepath.Join(proj, ".claude", "agents")
	if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(agents, 0o755); err != nil {
		b.Fatal(err)
	}
	recs := readOracle(b, corpus)
	for i := 0; i < 500; i++ {
		r := recs[i%len(recs)]
		data, err := os.ReadFile(filepath.Join(corpus, "claude-agents", r.File))
		if err != nil {
			b.Fatal(err)
		}
		dir := filepath.Join(agents, filepath.Dir(r.File))
		if i >= len(recs) {
			dir = filepath.Join(agents, fmt.Sprintf("copy%d", i))
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(r.File)), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return proj
}

// BenchmarkLoad500 loads 500 definitions from disk (goal: under 20 ms).
func BenchmarkLoad500(b *testing.B) {
	proj := benchProject(b)
	opts := LoadOptions{Cwd: proj, ManagedDir: filepath.Join(proj, "no-managed")}
	set, err := Load(context.Background(), opts)
	if err != nil {
		b.Fatal(err)
	}
	if n := len(set.All()); n < 480 {
		b.Fatalf("loaded only %d definitions", n)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := processCPU()
	for b.Loop() {
		if _, err := Load(context.Background(), opts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkListing renders the listing of every active definition of
// the 500-file project (goal: under 1 ms).
func BenchmarkListing(b *testing.B) {
	proj := benchProject(b)
	set, err := Load(context.Background(), LoadOptions{Cwd: proj, ManagedDir: filepath.Join(proj, "no-managed")})
	if err != nil {
		b.Fatal(err)
	}
	defs := set.Active()
	b.ReportAllocs()
	b.ResetTimer()
	start := processCPU()
	for b.Loop() {
		_ = Listing(defs)
	}
	b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkParseFile parses one typical corpus file.
func BenchmarkParseFile(b *testing.B) {
	corpus := corpusDir(b)
	data, err := os.ReadFile(filepath.Join(corpus, "claude-agents", "wshobson__agents", "plugins__agent-teams__agents__team-lead.md"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		ParseFile("team-lead.md", data, SourceProject)
	}
}
