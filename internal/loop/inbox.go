package loop

import "github.com/cadre-dev/cadre/llm"

// Inbox is where what arrives for an agent while it works waits for its
// next tool round: task notifications of its background children and
// messages other agents send it. The loop takes the queue when it sends
// tool results back (the blocks join that user message, after the
// results) and calls Sent once the request carrying them was answered, so
// the owner can mark them delivered exactly once.
type Inbox interface {
	// Take returns what is queued (nil when nothing is) and holds it as
	// in flight.
	Take() []llm.Block
	// Sent marks everything in flight as delivered.
	Sent()
}
