package llmtest_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no goroutine outlives the tests: every server is
// closed and its handlers have returned.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
