package mcpx

import (
	"context"
	"os"
	"testing"
	"time"
)

// BenchmarkStartThreeStdioServers measures what the caller pays when a
// session starts with three stdio servers from npm (Start: the path in
// front of the first model request) against the time until all three are
// connected in the background. start-ns is the caller's part; ready-ns
// includes it.
func BenchmarkStartThreeStdioServers(b *testing.B) {
	dir := b.TempDir()
	servers := []ServerConfig{
		{Name: "everything", Transport: Stdio, Command: npmBin(b, "mcp-server-everything")},
		{Name: "memory", Transport: Stdio, Command: npmBin(b, "mcp-server-memory"), Env: map[string]string{"MEMORY_FILE_PATH": dir + "/m.jsonl"}},
		{Name: "fs", Transport: Stdio, Command: npmBin(b, "mcp-server-filesystem"), Args: []string{dir}},
	}
	var start, ready time.Duration
	for b.Loop() {
		m, err := New(servers, Options{})
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		m.Start()
		start += time.Since(t0)
		if err := m.Wait(context.Background()); err != nil {
			b.Fatal(err)
		}
		ready += time.Since(t0)
		for _, st := range m.Status() {
			if st.State != StateConnected {
				b.Fatalf("%s: %s %s", st.Name, st.State, st.Error)
			}
		}
		b.StopTimer()
		_ = m.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(start.Nanoseconds())/float64(b.N), "start-ns")
	b.ReportMetric(float64(ready.Nanoseconds())/float64(b.N), "ready-ns")
}

// BenchmarkInlineServer measures an agent's inline stdio server: Acquire
// (process start, initialize, tools/list) and Release (the process group
// gone). "go" is a go-sdk server (this test binary), whose own start is
// a few milliseconds, so its figure is mostly cadre's; "npm" is
// server-memory under Node.js.
func BenchmarkInlineServer(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		cfg  ServerConfig
	}{
		{"go", ServerConfig{Name: "s", Transport: Stdio, Command: exe, Env: map[string]string{"MCPX_TEST_SERVER": "1"}}},
		{"npm", ServerConfig{Name: "s", Transport: Stdio, Command: npmBin(b, "mcp-server-memory"), Env: map[string]string{"MEMORY_FILE_PATH": b.TempDir() + "/m.jsonl"}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			m, err := New(nil, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			var acquire, release time.Duration
			for b.Loop() {
				t0 := time.Now()
				l, err := m.Acquire(context.Background(), AgentServers{Inline: []ServerConfig{bc.cfg}, Required: []string{"s"}})
				if err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				l.Release()
				acquire += t1.Sub(t0)
				release += time.Since(t1)
			}
			b.ReportMetric(float64(acquire.Nanoseconds())/float64(b.N), "acquire-ns")
			b.ReportMetric(float64(release.Nanoseconds())/float64(b.N), "release-ns")
		})
	}
}
