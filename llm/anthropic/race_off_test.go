//go:build !race

package anthropic

// raceEnabled is set when the tests run under the race detector, whose
// instrumentation allocates on its own.
const raceEnabled = false
