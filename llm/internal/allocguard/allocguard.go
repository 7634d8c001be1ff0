// Package allocguard measures what one call allocates, for the provider
// adapters' byte guards (TestStreamRequestBytesBounded). Only tests
// import it.
package allocguard

import "runtime"

// BytesPerCall calls call n times in each of rounds rounds and returns
// the lowest round's mean of bytes allocated per call. The lowest, because
// what else the process does, or a race build's sync.Pool dropping a
// quarter of its puts at random, can only raise a round's mean.
func BytesPerCall(call func(), rounds, n int) uint64 {
	per := uint64(1 << 62)
	for range rounds {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range n {
			call()
		}
		runtime.ReadMemStats(&after)
		per = min(per, (after.TotalAlloc-before.TotalAlloc)/uint64(n))
	}
	return per
}

// Bound is normal, or underRace in a build with the race detector, whose
// sync.Pool drops a quarter of what it is given at random.
func Bound(normal, underRace uint64) uint64 {
	if raceEnabled {
		return underRace
	}
	return normal
}

// RaceEnabled reports whether this is a race detector build.
func RaceEnabled() bool { return raceEnabled }
