//go:build !race

package cadre_test

import "testing"

// The measured floor of BenchmarkSpawn/fanout=16/git (bench_test.go) per
// child, with about 10 % of room: allocations and bytes are deterministic
// up to scheduling, so a rise past these bounds is new per-child work (or
// per-run work at fan-out 16), not noise. Lower them when a cut lands.
const (
	maxAllocsPerChild16 = 595    // floor 539 (2026-12-06)
	maxBytesPerChild16  = 90_000 // floor 81,388 (2026-12-06)
)

// TestSpawnAllocsPerChildBounded runs the fan-out 16 spawn scenario of
// BenchmarkSpawn (in-process model, git repository, transcripts on) and
// fails when a child costs more allocations or bytes than the floor allows.
// Left out under the race detector, which changes what is allocated.
func TestSpawnAllocsPerChildBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the fan-out 16 scenario for about a second")
	}
	res := testing.Benchmark(func(b *testing.B) { benchSpawn(b, 16, true, false) })
	if res.N == 0 {
		t.Fatal("the fan-out 16 scenario failed (see BenchmarkSpawn/fanout=16/git)")
	}
	allocs, bytes := res.Extra["allocs/child"], res.Extra["B/child"]
	t.Logf("fan-out 16: %d runs, %.0f allocations and %.0f bytes per child", res.N, allocs, bytes)
	if allocs > maxAllocsPerChild16 {
		t.Errorf("%.0f allocations per child at fan-out 16, more than %d", allocs, maxAllocsPerChild16)
	}
	if bytes > maxBytesPerChild16 {
		t.Errorf("%.0f bytes per child at fan-out 16, more than %d", bytes, maxBytesPerChild16)
	}
}
