//go:build race

package openai

// raceEnabled is set under the race detector, whose sync.Pool drops a
// quarter of what it is given at random.
const raceEnabled = true
