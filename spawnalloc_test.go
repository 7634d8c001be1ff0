//go:build !race

package cadre_test

import (
	"context"
	"runtime"
	"testing"
)

// The measured floor of BenchmarkSpawn/fanout=16/git (bench_test.go) per
// child, with about 10 % of room: allocations and bytes are deterministic
// up to scheduling, so a rise past these bounds is new per-child work (or
// per-run work at fan-out 16), not noise. Lower them when a cut lands.
const (
	maxAllocsPerChild16 = 365    // floor 507, 491 since the working directories resolve once per session (permission.DirCache), 470 since Read shows its lines from one arena, 331-334 since the childalloc cuts (issue 24 point 4: no heap defer per hub event, no hook inputs without hooks, schema and built-in agents once per process, the kernel's realpath, decoder-free input checks; 2026-12-06)
	maxBytesPerChild16  = 53_000 // floor 73,248; 69,900-70,900 since the .meta.json is encoded compact into a buffer of its size; 47,500-48,600 since the childalloc cuts (git status without cmd.Output's 32 KiB stderr copy, transcript lines encoded once, no Read result a child drops; 2026-12-06)
)

// TestSpawnAllocsPerChildBounded runs the fan-out 16 spawn scenario of
// BenchmarkSpawn (in-process model, git repository, transcripts on) a fixed
// number of times after one warm-up run (which fills the process-wide
// schema cache, as any earlier Runtime would), and fails when a child costs
// more allocations or bytes than the floor allows. Left out under the race
// detector, which changes what is allocated.
func TestSpawnAllocsPerChildBounded(t *testing.T) {
	const n, runs = 16, 8
	cwd, file, state := benchDir(t, true)
	ctx := context.Background()
	once := func() {
		if err := runOnce(ctx, benchConfig(newInstantModel(n, file), cwd, state), n); err != nil {
			t.Fatal(err)
		}
	}
	once()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		once()
	}
	runtime.ReadMemStats(&after)
	children := float64(runs * n)
	allocs := float64(after.Mallocs-before.Mallocs) / children
	bytes := float64(after.TotalAlloc-before.TotalAlloc) / children
	t.Logf("fan-out %d, %d runs: %.0f allocations and %.0f bytes per child", n, runs, allocs, bytes)
	if allocs > maxAllocsPerChild16 {
		t.Errorf("%.0f allocations per child at fan-out %d, more than %d", allocs, n, maxAllocsPerChild16)
	}
	if bytes > maxBytesPerChild16 {
		t.Errorf("%.0f bytes per child at fan-out %d, more than %d", bytes, n, maxBytesPerChild16)
	}
}
