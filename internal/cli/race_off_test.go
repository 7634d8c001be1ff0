//go:build !race

package cli

// raceEnabled is set when the tests run under the race detector, which
// makes this binary several times slower.
const raceEnabled = false
